"""ROUGE_RAW (Straka et al., SumeCzech, LREC 2018): language-agnostic ROUGE-1, ROUGE-2 and ROUGE-L.

Restated from ÚFAL's reference ``rouge_raw.py`` (MPL 2.0); tests/test_text_metrics.py checks this
module against a plain re-statement. The tokenisation, the reference's 32-replacement quirk (followed
by ``rouge_raw_1/2/l``; ``*_full`` without it) and P/R/F per document: docs/text-metrics.md.
"""

from __future__ import annotations

import re
from collections import Counter

REFERENCE_SUB_COUNT = int(re.UNICODE)  # 32: the flag's value, passed by the reference as ``count``
_BOUNDARY = re.compile(r"\b")
_SPACES = re.compile(r"\s+")


def tokens(text: str, *, full: bool = False) -> list[str]:
    """Lowercased tokens as the reference splits them (``full``: without its 32-replacement limit)."""
    count = 0 if full else REFERENCE_SUB_COUNT
    spaced = _BOUNDARY.sub(" ", text, count=count)
    return [t.lower() for t in _SPACES.sub(" ", spaced, count=count).strip().split(" ")]


def _prf(matches: int, gold: int, system: int) -> tuple[float, float, float]:
    p = matches / system if system else 0.0
    r = matches / gold if gold else 0.0
    f = 2 * matches / (system + gold) if system + gold else 0.0
    return p, r, f


def _ngrams(words: list[str], n: int) -> Counter:
    return Counter("\t".join(words[i:i + n]) for i in range(len(words) - n + 1))


def rouge_n(gold: list[str], system: list[str], n: int) -> tuple[float, float, float]:
    g, s = _ngrams(gold, n), _ngrams(system, n)
    matches = sum(min(c, g[k]) for k, c in s.items())
    return _prf(matches, sum(g.values()), sum(s.values()))


def lcs_length(a: list[str], b: list[str]) -> int:
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


def rouge_l(gold: list[str], system: list[str]) -> tuple[float, float, float]:
    return _prf(lcs_length(gold, system), len(gold), len(system))


def document(gold: str, system: str, *, full: bool = False) -> dict[str, tuple[float, float, float]]:
    """``{"1": (P, R, F), "2": ..., "L": ...}`` of one system text against its gold text."""
    g, s = tokens(gold, full=full), tokens(system, full=full)
    return {"1": rouge_n(g, s, 1), "2": rouge_n(g, s, 2), "L": rouge_l(g, s)}


def item_values(gold: str, system: str) -> dict[str, float]:
    """The per-item values the ``rouge_raw_*`` metrics average (reference tokenisation and ``*_full``)."""
    out: dict[str, float] = {}
    for key, (p, r, f) in document(gold, system).items():
        name = f"rouge_raw_{key.lower()}"
        out[name], out[f"{name}_precision"], out[f"{name}_recall"] = f, p, r
    for key, (_p, _r, f) in document(gold, system, full=True).items():
        out[f"rouge_raw_{key.lower()}_full"] = f
    return out
