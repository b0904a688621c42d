"""`glotbench run --judge` prints the papers' CO / NA / IN / CGA / F table per category."""

from __future__ import annotations

import os
import subprocess
import sys


def test_run_prints_factuality_table_per_category(stub_server, data_root, tmp_path):
    base = stub_server("--answer", "A")  # the model answers "A"; the Chinese grader reading "A" means CORRECT
    done = subprocess.run([sys.executable, "-m", "glotbench", "run", "--model", "openai:m", "--base-url", base,
                           "--judge", "openai:j", "--judge-base-url", base, "--tasks", "chinese_simpleqa", "--limit", "12",
                           "-o", str(tmp_path / "r"), "--no-progress"],
                          env={**os.environ, "COLUMNS": "200"}, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "chinese_simpleqa: factuality (%)" in out
    for header in ("primary_category", "secondary_category", "CO", "NA", "IN", "CGA", "judge errors"):
        assert header in out
    overall = next(line for line in out.splitlines() if "overall" in line)
    assert "100.0 [100.0, 100.0]" in overall and " 12 " in overall
