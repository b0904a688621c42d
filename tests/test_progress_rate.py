"""The progress bar: seconds per item when a run is slow (not ``0.0 it/s``), and a count of the
answers received, which moves before an item with several requests (Best-of-N) is done."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[1] / "src")


def test_rate_text():
    from glotbench.engine.display import rate_text

    assert rate_text(0, 5.0) == ""
    assert rate_text(10, 2.0) == "5.0 it/s"
    assert rate_text(2, 25.0) == "12.5 s/it"  # 0.08 it/s printed as "0.1 it/s" before, "0.0 it/s" slower still


def test_slow_run_shows_seconds_per_item_and_answers(stub_server, tmp_path, data_root):
    base = stub_server("--answer", "A", "--delay", "0.6")
    env = {**os.environ, "PYTHONPATH": SRC, "OPENAI_API_KEY": "x", "COLUMNS": "250"}
    done = subprocess.run([sys.executable, "-m", "glotbench", "run", "-m", "openai:stub", "--base-url", base,
                           "-t", "hulu.cola", "--limit", "2", "--samples", "2", "--temperature", "0.5", "-j", "1",
                           "--bootstrap", "10", "-o", str(tmp_path / "r")],
                          env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    bar = [x for x in done.stderr.splitlines() if x.startswith("items")][-1]
    assert re.search(r"\b2/2\b", bar) and re.search(r"\d+\.\d s/it", bar) and "it/s" not in bar, bar
    assert "answers 4" in bar, bar  # 2 items x 2 answers each
