"""Precision and recall of the answer extractors on the extraction corpus, per language and extractor.

    python bench/extraction_report.py [--corpus tests/extraction_corpus/v1] [--misses] [--json out.json]

Columns: cases; clear (cases with an expected answer); read (outputs the extractor read);
wrong (read as something else, or read where None was expected); missed (clear but not read);
precision = right readings / readings; recall = right readings / clear cases. ``--misses`` lists
every missed and wrong case with the rule that decided.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from glotbench.extract.corpus import load_corpus, outcome, score_corpus  # noqa: E402

LANG_ORDER = ["hu", "cs", "zh", "mn", "ru", "en", "all"]
EXT_ORDER = ["choice", "number", "confidence", "all"]


def _pct(x: float | None) -> str:
    return "   -  " if x is None else f"{100 * x:6.1f}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default=str(REPO / "tests" / "extraction_corpus" / "v1"))
    ap.add_argument("--misses", action="store_true", help="list missed and wrong cases")
    ap.add_argument("--json", help="also write the table as JSON here")
    a = ap.parse_args()
    cases = load_corpus(a.corpus)
    tallies, results = score_corpus(cases)
    real = Counter(c.lang for c in cases if c.source.startswith(("smollm2:", "gemma3-270m:")))
    print(f"corpus {a.corpus}: {len(cases)} cases ({sum(real.values())} real model outputs: "
          f"{', '.join(f'{k} {v}' for k, v in sorted(real.items()))})\n")
    print(f"{'lang':5} {'extractor':10} {'cases':>5} {'clear':>5} {'read':>5} {'wrong':>5} {'missed':>6} "
          f"{'precision%':>10} {'recall%':>8}")
    rows = []
    for lang in LANG_ORDER:
        for ext in EXT_ORDER:
            t = tallies.get((lang, ext))
            if t is None:
                continue
            print(f"{lang:5} {ext:10} {t.cases:5d} {t.clear:5d} {t.reads:5d} {t.wrong:5d} {t.missed:6d} "
                  f"{_pct(t.precision):>10} {_pct(t.recall):>8}")
            rows.append({"lang": lang, "extractor": ext, "cases": t.cases, "clear": t.clear, "read": t.reads,
                         "wrong": t.wrong, "missed": t.missed, "precision": t.precision, "recall": t.recall})
        print()
    rules = Counter(r.rule for _c, r in results if r.value is not None)
    print("readings by rule: " + ", ".join(f"{k} {v}" for k, v in rules.most_common()))
    if a.misses:
        print()
        for c, r in results:
            o = outcome(c, r.value)
            if o != "correct":
                print(f"{o.upper():6} {c.id:28} expected {c.expected!r:8} got {r.value!r:8} {r.rule:34} {c.text[:90]!r}")
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1), encoding="utf-8")


if __name__ == "__main__":
    from catalog_root import build_catalog

    build_catalog()
    main()
