"""Subsets of a split: ``--limit N`` keeps its meaning (the first N) and warns when those are all one
class; ``--sample N --seed S`` draws N at random; ``--stratify FIELD`` balances them over a field.
Both are in the fingerprint. CLI runs are fresh processes against the stub server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

SRC = str(Path(__file__).resolve().parents[1] / "src")


def _run(base, tmp_path, out, *extra) -> tuple[subprocess.CompletedProcess, dict, list[dict]]:
    env = {**os.environ, "PYTHONPATH": SRC, "OPENAI_API_KEY": "x", "COLUMNS": "300"}
    done = subprocess.run([sys.executable, "-m", "glotbench", "run", "-m", "openai:stub", "--base-url", base,
                           "-t", "hulu.cola", "--bootstrap", "10", "--no-progress", "-o", str(tmp_path / out), *extra],
                          env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    res = json.loads((tmp_path / out / "results.json").read_text())
    recs = [json.loads(x) for x in (tmp_path / out / "samples.jsonl").read_text().splitlines()]
    return done, res, recs


def test_limit_sample_and_stratify(stub_server, tmp_path, data_root):
    from glotbench.tasks.registry import resolve

    every = resolve(["hulu.cola"])[0].samples(None)
    first10 = [s.target for s in every[:10]]
    assert len(set(first10)) == 1  # the data's own order: HuCOLA dev opens with ten 1s

    base = stub_server("--answer", "1")
    done, lim, recs = _run(base, tmp_path, "limit", "--limit", "10")
    assert [r["idx"] for r in recs] == list(range(10))  # --limit keeps its meaning
    assert "--limit 10 takes the first 10 items, whose gold labels are all '1'" in done.stderr

    done, s1, recs1 = _run(base, tmp_path, "s1", "--sample", "10", "--seed", "7")
    assert "takes the first" not in done.stderr
    _, s2, recs2 = _run(base, tmp_path, "s2", "--sample", "10", "--seed", "7")
    _, s3, recs3 = _run(base, tmp_path, "s3", "--sample", "10", "--seed", "8")
    ids1 = [r["sample_id"] for r in recs1]
    assert len(ids1) == 10 and ids1 == [r["sample_id"] for r in recs2]  # the seed fixes the draw
    assert ids1 != [r["sample_id"] for r in recs3]
    assert [r["idx"] for r in recs1] != list(range(10))
    import random
    expect = sorted(random.Random(7).sample(range(len(every)), 10))  # independent re-statement of the draw
    assert [r["idx"] for r in recs1] == expect
    assert s1["settings"]["sample"] == 10 and "stratify" not in s1["settings"]
    fp = lambda res: res["tasks"]["hulu.cola"]["fingerprint"]["id"]  # noqa: E731
    assert len({fp(lim), fp(s1), fp(s3)}) == 3

    _, st, recs_st = _run(base, tmp_path, "st", "--sample", "10", "--stratify", "gold", "--seed", "7")
    assert Counter(str(r["gold"]) for r in recs_st) == {"0": 5, "1": 5}
    assert st["settings"]["stratify"] == "gold" and fp(st) != fp(s1)


def test_bad_subset_flags_are_one_line(tmp_path):
    env = {**os.environ, "PYTHONPATH": SRC}
    for args, msg in ((["--sample", "3", "--limit", "2"], "the sample setting and --limit both choose the items"),
                      (["--stratify", "gold"], "the stratify setting needs --set sample=N")):
        done = subprocess.run([sys.executable, "-m", "glotbench", "run", "-t", "hulu.cola", *args], env=env,
                              capture_output=True, text=True, timeout=120, cwd=tmp_path)
        assert done.returncode == 2 and msg in done.stderr and "Traceback" not in done.stderr, done.stderr


def test_stratify_spreads_evenly_and_names_a_missing_field():
    from glotbench.errors import GlotbenchError
    from glotbench.tasks.subsets import stratified_items
    from glotbench.tasks.task import Sample

    items = [Sample("t", str(i), i, {}, "a" if i < 90 else ("b" if i < 97 else "c"), metadata={"topic": i % 2})
             for i in range(100)]
    got = stratified_items(items, 12, 3, "gold", "t")
    # one per value in turn while a value has items left: a b c a b c a b c (c is spent) a b a
    assert Counter(s.target for s in got) == {"a": 5, "b": 4, "c": 3}
    assert [s.index for s in got] == sorted(s.index for s in got)
    assert Counter(s.metadata["topic"] for s in stratified_items(items, 10, 1, "topic", "t")) == {0: 5, 1: 5}
    with pytest.raises(GlotbenchError, match="--stratify level: task t item 0 has no field 'level'"):
        stratified_items(items, 10, 1, "level", "t")
