"""#54 per-task latency (mean as Czech-Bench's average inference time, median, p90) and output tokens/s,
from the journal's per-request timings: equal to a plain restatement read from samples.jsonl and the
journal file with sqlite3 (tests/value_oracles.py:plain_latency); shown in the HTML report; a journal
without timings (answers from the shared cache, or rows written without latency) gives counts and no
numbers. Fresh processes against the stub server (its --delay only makes the numbers visible: no
assertion reads a clock)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from glotbench.engine.latency import latency_summary
from value_oracles import plain_latency

SRC = str(Path(__file__).resolve().parents[1] / "src")
ENV = {**os.environ, "OPENAI_API_KEY": "x", "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
TINY = Path(__file__).parent / "fixtures" / "tiny_task" / "tiny.yaml"


def test_latency_equals_the_journal_restated_and_is_in_the_report(stub_server, tmp_path):
    base = stub_server("--answer", "1 2 3 4 5 6 7", "--delay", "0.02")
    out = tmp_path / "out"
    run = subprocess.run([sys.executable, "-m", "glotbench", "run", "--model", "openai:stub", "--base-url", base, "--tasks",
                          str(TINY), "--output", str(out), "--no-progress", "--limit", "12", "-j", "3"],
                         env=ENV, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    lt = json.loads((out / "results.json").read_text())["tasks"]["tiny.count"]["latency"]
    samples = [json.loads(x) for x in (out / "samples.jsonl").read_text().splitlines()]
    want = plain_latency(samples, out / "journal.sqlite")
    assert want["n_requests"] == 12 and want["n_timed"] == 12
    for k, v in want.items():
        assert lt[k] == pytest.approx(v, rel=1e-5, abs=1e-6), k
    assert lt["output_tokens_per_s"] > 0
    report = subprocess.run([sys.executable, "-m", "glotbench", "runs", "report", str(out), "-o", str(tmp_path / "r.html")],
                            env=ENV, capture_output=True, text=True, timeout=300)
    assert report.returncode == 0, report.stderr[-2000:]
    html = (tmp_path / "r.html").read_text()
    assert "Latency and output speed" in html and f"{lt['p90_s']:.3f}" in html


def test_untimed_requests_are_counted_and_give_no_numbers():
    assert latency_summary([("k1", 5), ("k2", None)], {}) == {
        "n_requests": 2, "n_timed": 0, "n_untimed": 2, "mean_s": None, "median_s": None, "p90_s": None,
        "output_tokens_per_s": None}
    got = latency_summary([("k1", 5), ("k2", None), ("k3", 3)], {"k1": 0.5, "k3": 1.5})
    assert got == {"n_requests": 3, "n_timed": 2, "n_untimed": 1, "mean_s": 1.0, "median_s": 1.0, "p90_s": 1.4,
                   "output_tokens_per_s": 4.0}
