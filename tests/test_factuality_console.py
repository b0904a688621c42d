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


def test_a_field_with_many_values_is_one_line_and_the_first_field_always_a_table():
    from rich.console import Console

    from glotbench.benchmarks.factuality.tables import MAX_CONSOLE_ROWS, console_tables

    row = {"CO": 0.5, "NA": 0.1, "IN": 0.4, "CGA": 0.55, "F": 0.52, "n": 3, "judge_error": 0}
    many = {f"topic{k}": row for k in range(MAX_CONSOLE_ROWS + 1)}
    fact = {"overall": row, "by": {"primary_category": many, "secondary_category": many,
                                   "small": {"a": row, "b": row}}}
    out = console_tables({"tasks": {"t": {"factuality": fact}}})
    console = Console(width=200, record=True)
    for r in out:
        console.print(r)
    text = console.export_text()
    assert "topic20" in text  # the first field: every row, however many
    assert text.count("topic20") == 1
    assert f"t: secondary_category has {MAX_CONSOLE_ROWS + 1} values" in text and "results.json" in text
    assert "small" in text and text.count("overall") == 2  # a small further field is still a table
