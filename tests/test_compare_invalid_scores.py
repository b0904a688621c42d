"""``compare --ranks`` leaves a score the run marked invalid out of the suite mean (as --crosslingual
does); ``compare --paired`` prints no numpy warnings and no ``+nan`` rows when nothing parsed by a
metric's rule. Runs and comparisons in fresh processes against the stub server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = str(Path(__file__).resolve().parents[1] / "src")


def _glotbench(*args, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": SRC, "OPENAI_API_KEY": "x", "COLUMNS": "250"}
    return subprocess.run([sys.executable, "-m", "glotbench", *map(str, args)], env=env, capture_output=True, text=True,
                          timeout=300, cwd=cwd)


@pytest.fixture(scope="module")
def runs(tmp_path_factory, data_root):
    from glotbench.testing.servers import start_stub, stop

    root = tmp_path_factory.mktemp("cmp")
    plan = {"X": ("A", "hulu.cola,hulu.rte"), "Z": ("B", "hulu.cola,hulu.rte"), "Y": ("no idea", "hulu.cola,hulu.rte"),
            "K1": ("no idea", "czech_bench.klokanek"), "K2": ("cannot say", "czech_bench.klokanek")}
    for name, (answer, tasks) in plan.items():
        base, proc = start_stub("--answer", answer)
        try:
            done = _glotbench("run", "-m", "openai:stub", "--base-url", base, "-t", tasks, "--limit", "6",
                              "--bootstrap", "10", "--no-progress", "-o", root / name, cwd=root)
            assert done.returncode == 0, done.stderr
        finally:
            stop(proc)
    return root


def test_ranks_leave_an_invalid_score_out_of_the_suite_mean(runs):
    y = json.loads((runs / "Y" / "results.json").read_text())["tasks"]
    assert y["hulu.cola"]["status"] == "invalid"  # the case: a score the run itself marks invalid
    done = _glotbench("runs", "compare", "--ranks", "X", "Z", "Y", "--a", "hulu", "--b", "hulu.cola", "--json", "r.json",
                      cwd=runs)
    assert done.returncode == 0, done.stderr
    got = json.loads((runs / "r.json").read_text())
    models = [r["model"] for r in got["ranks"]["rows"]]
    assert models and not any("(Y)" in m for m in models), models
    assert "openai:stub (Y): left out of A (its hulu.cola score is invalid)" in got["notes"]
    x = json.loads((runs / "X" / "results.json").read_text())["tasks"]
    row = next(r for r in got["ranks"]["rows"] if "(X)" in r["model"])
    head = lambda t: t["metrics"][t["headline"]]["value"]  # noqa: E731
    assert row["score_a"] == pytest.approx((head(x["hulu.cola"]) + head(x["hulu.rte"])) / 2)


def test_paired_without_parsed_answers_prints_no_warnings_or_nan(runs):
    done = _glotbench("runs", "compare", "--paired", "K1", "K2", "--n-boot", "200", "--json", "p.json", cwd=runs)
    assert done.returncode == 0, done.stderr
    assert "RuntimeWarning" not in done.stderr and "Mean of empty slice" not in done.stderr, done.stderr
    assert "nan" not in done.stdout.lower(), done.stdout
    got = json.loads((runs / "p.json").read_text())
    assert all(r["metric"] != "cb_accuracy" for r in got["paired"])
    assert "czech_bench.klokanek cb_accuracy: no item has a value in A and B (nothing parsed by its rule); left out" in got["notes"]
