"""`glotbench build dedup --against OTHER.jsonl ...` (issue 55): items duplicating another set's
questions are dropped as well, and every duplicate pair is listed side by side. The pairs are
checked against a plain loop over all pairs (rapidfuzz's token_sort_ratio, no extractOne); the
CLI runs in a fresh process."""

from __future__ import annotations

import csv
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from rapidfuzz import fuzz, utils

from glotbench.build.dedup import dedup_against
from glotbench.errors import DataError

SRC = str(Path(__file__).resolve().parents[1] / "src")
WORDS = ["Kolik", "metrů", "měří", "Sněžka", "Lysá", "hora", "řeka", "Praha", "kde", "je", "Vltava", "?", "!"]


def _write(path: Path, items: list[dict]) -> Path:
    path.write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items), encoding="utf-8")
    return path


def _plain_best(q: str, others: list[tuple[str, list[dict]]], threshold: float, field: str):
    best = None
    for name, recs in others:
        for rec in recs:
            s = fuzz.token_sort_ratio(utils.default_process(q), utils.default_process(rec[field]))
            if s >= threshold and (best is None or s > best[1]):
                best = (name, s, rec["id"])
    return best


@pytest.mark.parametrize("seed", range(5))
def test_cross_set_pairs_equal_a_plain_loop_over_all_pairs(seed):
    rng = random.Random(seed)

    def q():
        return " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 6)))

    items = [{"id": f"m{k}", "question": q()} for k in range(30)]
    others = [(f"o{j}.jsonl", [{"id": f"o{j}-{k}", "q": q()} for k in range(20)]) for j in range(2)]
    kept, pairs = dedup_against(items, [(n, [(f"line {k + 1}", r) for k, r in enumerate(rs)]) for n, rs in others],
                                threshold=80, field="question", other_field="q")
    want = {}
    for it in items:
        best = _plain_best(it["question"], others, 80, "q")
        if best is not None:
            want[it["id"]] = best
    assert {p["id"]: (p["other_file"], p["similarity"]) for p in pairs} == {
        k: (v[0], round(v[1], 2)) for k, v in want.items()}
    for p in pairs:  # the named other item scores the best score (another of equal score may be named)
        other = next(r for n, rs in others if n == p["other_file"] for r in rs if r["id"] == p["other_id"])
        assert round(fuzz.token_sort_ratio(utils.default_process(p["text"]), utils.default_process(other["q"])), 2) == p["similarity"]
    assert [i["id"] for i in kept] == [i["id"] for i in items if i["id"] not in want]


def test_other_item_without_the_field_is_one_line():
    with pytest.raises(DataError, match=r"^o\.jsonl: line 2: field 'question': missing or not a string"):
        dedup_against([{"id": "1", "question": "x"}], [("o.jsonl", [("line 1", {"question": "y"}), ("line 2", {"id": 3})])])


def test_cli_against_fresh_process_lists_duplicates_side_by_side(tmp_path):
    _write(tmp_path / "new.jsonl", [{"id": "1", "question": "Kolik metrů měří Sněžka?"},
                                    {"id": "2", "question": "Sněžka měří kolik metrů?"},     # within the set: of 1
                                    {"id": "3", "question": "Kde je Vltava?"},               # in old.jsonl
                                    {"id": "4", "question": "Kolik metrů měří Lysá hora?"}])
    _write(tmp_path / "old.jsonl", [{"id": "a", "question": "Vltava je kde?"}, {"id": "b", "question": "Praha"}])
    _write(tmp_path / "other.jsonl", [{"id": "z", "question": "Něco jiného úplně"}])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (SRC, os.environ.get("PYTHONPATH", "")) if p)}
    done = subprocess.run([sys.executable, "-m", "glotbench", "build", "dedup", "-i", "new.jsonl", "-o", "d.jsonl",
                           "--against", "old.jsonl", "--against", "other.jsonl"], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "kept 2 · dropped 2 (dedup 1, dedup_against 1)" in done.stdout
    kept = [json.loads(x)["id"] for x in (tmp_path / "d.jsonl").read_text(encoding="utf-8").splitlines()]
    assert kept == ["1", "4"]
    dropped = {json.loads(x)["id"]: json.loads(x) for x in (tmp_path / "d.dropped.jsonl").read_text(encoding="utf-8").splitlines()}
    assert dropped["3"]["duplicate_of"] == "a" and dropped["3"]["duplicate_in"] == "old.jsonl"
    rows = list(csv.DictReader((tmp_path / "d.duplicates.csv").open(encoding="utf-8")))
    assert [(r["id"], r["text"], r["other_file"], r["other_id"], r["other_text"]) for r in rows] == [
        ("2", "Sněžka měří kolik metrů?", "(this set)", "1", "Kolik metrů měří Sněžka?"),
        ("3", "Kde je Vltava?", "old.jsonl", "a", "Vltava je kde?")]
    # a missing --against file: one line, nothing written
    done = subprocess.run([sys.executable, "-m", "glotbench", "build", "dedup", "-i", "new.jsonl", "-o", "e.jsonl",
                           "--against", "nope.jsonl"], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and done.stderr.strip().splitlines() == ["error: nope.jsonl: no such file (--against)"]
    assert not (tmp_path / "e.jsonl").exists()
