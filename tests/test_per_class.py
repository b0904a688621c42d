"""#54 per-class precision / recall / F1 with intervals for label tasks (Czech-Bench §4.3.4): equal to
scikit-learn's ``precision_recall_fscore_support`` (tests/value_oracles.py:sklearn_per_class), values
and bootstrap intervals; end to end in a fresh process against the stub server, in results.json and
in the HTML report."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings

from glotbench.scoring.per_class import per_class
from mc_task import mc_task_yaml
from value_oracles import LABEL, sklearn_per_class

SRC = str(Path(__file__).resolve().parents[1] / "src")
ENV = {**os.environ, "OPENAI_API_KEY": "x", "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}


def _same(got: dict, want: dict, intervals: bool) -> None:
    assert list(got) == list(want)
    for c, w in want.items():
        assert got[c]["support"] == w["support"]
        for stat in ("precision", "recall", "f1"):
            assert got[c][stat]["value"] == pytest.approx(w[stat], abs=1e-6)
            if intervals:
                assert got[c][stat]["ci95"] == pytest.approx(w[stat + "_ci95"], abs=1e-6)


@settings(max_examples=60, deadline=None)
@given(LABEL)
def test_values_equal_sklearn(items):
    _same(per_class(items, n_boot=0), sklearn_per_class(items) if items else {}, intervals=False)


@settings(max_examples=15, deadline=None)
@given(LABEL)
def test_intervals_equal_sklearn_over_the_same_resamples(items):
    if not items:
        assert per_class(items, n_boot=30) == {}
        return
    _same(per_class(items, n_boot=30, seed=5), sklearn_per_class(items, n_boot=30, seed=5), intervals=True)


def test_a_run_and_its_report_show_the_per_class_table(stub_server, tmp_path):
    from glotbench.scoring.metrics import ScoredItem

    golds = "AABBBCCCCDAB"
    data = tmp_path / "items.jsonl"
    data.write_text("".join(json.dumps({"id": f"i{k}", "q": f"q{k:02d}", "opts": ["w", "x", "y", "z"], "gold": g}) + "\n"
                            for k, g in enumerate(golds)), encoding="utf-8")
    (tmp_path / "cls.yaml").write_text(mc_task_yaml("demo.cls", data, metrics=("accuracy", "macro_f1")), encoding="utf-8")
    # answers: A for q00-q05, "hmm" (unparseable) for q06-q07, C for the rest
    canned = tmp_path / "responses.jsonl"
    canned.write_text("".join(json.dumps({"match": f"q{k:02d}\n", "response": "A" if k < 6 else ("hmm" if k < 8 else "C")})
                              + "\n" for k in range(len(golds))), encoding="utf-8")
    base = stub_server("--responses", str(canned))
    run = subprocess.run([sys.executable, "-m", "glotbench", "run", "--model", "openai:stub", "--base-url", base,
                          "--tasks", str(tmp_path / "cls.yaml"), "--output", str(tmp_path / "out"), "--no-progress",
                          "--bootstrap", "200", "--seed", "9"], env=ENV, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    t = json.loads((tmp_path / "out" / "results.json").read_text())["tasks"]["demo.cls"]
    samples = [json.loads(x) for x in (tmp_path / "out" / "samples.jsonl").read_text().splitlines()]
    items = [ScoredItem(gold=s["gold"], pred=s["pred"]) for s in samples if s["status"] == "scored"]
    want = sklearn_per_class(items, n_boot=200, seed=9)
    _same(t["per_class"], want, intervals=True)
    # by hand: A is gold for q00, q01 (answered A) and q10 (answered C); B for q02-q04 (A) and q11 (C)
    assert t["per_class"]["A"]["recall"]["value"] == pytest.approx(2 / 3, abs=1e-6) and t["per_class"]["B"]["recall"]["value"] == 0.0
    report = subprocess.run([sys.executable, "-m", "glotbench", "runs", "report", str(tmp_path / "out"), "-o",
                             str(tmp_path / "r.html")], env=ENV, capture_output=True, text=True, timeout=300)
    assert report.returncode == 0, report.stderr[-2000:]
    html = (tmp_path / "r.html").read_text()
    assert "Per class: precision, recall, F1" in html
    a = t["per_class"]["A"]["precision"]
    assert f"{a['value']:.3f}" in html and f"{a['ci95'][0]:.3f}" in html
