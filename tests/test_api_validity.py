"""The Python API keeps what the CLI prints beside a score: ``load_result(...).tasks[t]`` has the
status, flag, validity and unparseable count; an unknown metric name is an error naming the metrics."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = str(Path(__file__).resolve().parents[1] / "src")


def test_load_result_keeps_the_validity_flag(stub_server, tmp_path, data_root):
    import glotbench
    from glotbench.api import UnknownName

    base = stub_server("--answer", "no idea")  # nothing parses: the CLI prints the score as invalid
    env = {**os.environ, "PYTHONPATH": SRC, "OPENAI_API_KEY": "x"}
    done = subprocess.run([sys.executable, "-m", "glotbench", "run", "-m", "openai:stub", "--base-url", base,
                           "-t", "hulu.cola", "--limit", "4", "--bootstrap", "10", "--no-progress",
                           "-o", str(tmp_path / "r")], env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "invalid" in done.stdout
    stored = json.loads((tmp_path / "r" / "results.json").read_text())["tasks"]["hulu.cola"]

    res = glotbench.load_result(tmp_path / "r")
    t = res.tasks["hulu.cola"]
    assert t.status == "invalid" == stored["status"] and t.flag == "invalid" and t.valid is False
    assert t.n_unparseable == 4 == stored["n_unparseable"] and t.unparseable_rate == 1.0
    assert t.headline == stored["headline"]
    assert res.metric("hulu.cola").name == stored["headline"]

    with pytest.raises(UnknownName) as err:
        res.metric("hulu.cola", "acc")
    assert isinstance(err.value, KeyError)
    msg = str(err.value)
    assert msg.startswith("task 'hulu.cola' has no metric 'acc' (metrics: ") and "accuracy" in msg
    with pytest.raises(UnknownName, match=r"no task 'hulu.nope' in this result \(tasks: hulu.cola\)"):
        res.metric("hulu.nope", "accuracy")
