"""Readable output: `glotbench tasks` shows whole task names in a pipe and in 80 columns and has
--json; `compare` tables do not cut names; a resumed run says how many items are already done;
the stated-confidence calibration of a run reaches the console."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console


def _glotbench(*args: str, columns: int = 80, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "glotbench", *args], capture_output=True, text=True, timeout=300,
                          cwd=cwd, env={**os.environ, "COLUMNS": str(columns), "OPENAI_API_KEY": "x"})


def _names() -> list[str]:
    from glotbench.tasks.registry import all_specs

    return sorted(all_specs())


def test_tasks_piped_shows_full_names():
    done = _glotbench("tasks")
    assert done.returncode == 0, done.stderr
    first_cells = [ln.split("\t")[0] for ln in done.stdout.splitlines()]
    for name in _names():
        assert name in first_cells, name
    assert "…" not in done.stdout


def test_tasks_json():
    done = _glotbench("tasks", "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert [t["task"] for t in doc["tasks"]] == _names()
    syntax = next(t for t in doc["tasks"] if t["task"] == "mm_eval.syntax")
    assert syntax["lang"] == "mn" and syntax["metrics"] == ["accuracy"] and "mm_eval" in syntax["suites"]
    assert "mm_eval" in doc["suites"]


def test_tasks_table_in_80_columns_keeps_names_whole():
    from glotbench.cli.tasks_cmd import task_rows, tasks_table

    buf = io.StringIO()
    Console(file=buf, width=80, force_terminal=False, color_system=None).print(tasks_table(task_rows()))
    text = buf.getvalue()
    assert max(len(x) for x in text.splitlines()) <= 80
    for name in _names():
        assert name in text, name


def test_compare_does_not_truncate(stub_server, data_root, tmp_path):
    base = stub_server("--answer", "A")
    long_names = ["a-rather-long-model-name-for-the-compare-table-one", "a-rather-long-model-name-for-the-compare-table-two"]
    runs = []
    for name in long_names:
        out = tmp_path / name
        done = _glotbench("run", "--model", f"openai:{name}", "--base-url", base, "--tasks", "mm_eval.syntax,mm_eval.semantics",
                          "--limit", "4", "-o", str(out), "--no-progress", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        runs.append(str(out))
    cmp = _glotbench("runs", "compare", *runs, "--ranks", "--a", "mm_eval.syntax", "--b", "mm_eval.semantics", cwd=tmp_path)
    assert cmp.returncode == 0, cmp.stderr
    assert "…" not in cmp.stdout, cmp.stdout
    flat = "".join(cmp.stdout.split())  # a folded cell is whole once the table's spacing is removed
    for name in long_names:
        assert name in flat or name in cmp.stdout


def test_resume_says_how_many_items_are_already_done(stub_server, data_root, tmp_path):
    base = stub_server("--fault-rate", "0.3", "--answer", "B")
    args = ["run", "--model", "openai:stub", "--base-url", base, "--tasks", "mm_eval.semantics", "--limit", "20",
            "--max-retries", "0", "-o", str(tmp_path / "run"), "--no-progress"]
    first = _glotbench(*args, cwd=tmp_path)
    res = json.loads((tmp_path / "run" / "results.json").read_text())["tasks"]["mm_eval.semantics"]
    assert 0 < res["n_errors"] < 20, first.stderr
    again = _glotbench(*args, cwd=tmp_path)
    assert f"{20 - res['n_errors']} already done, {res['n_errors']} item(s) to run" in again.stderr, again.stderr


def test_calibration_reaches_the_console(stub_server, data_root, tmp_path):
    if not (data_root / "chinese_simpleqa" / "chinese_simpleqa.jsonl").is_file():
        pytest.skip("Chinese SimpleQA data not found under the data root")
    canned = tmp_path / "canned.jsonl"
    canned.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in [
        {"match": "将此新问题的预测答案评定为", "response": "A"},
        {"match": "", "response": '{"answer": "北京", "confidence_score": 80}'},
    ]), encoding="utf-8")
    base = stub_server("--responses", str(canned))
    done = _glotbench("run", "--model", "openai:m", "--base-url", base, "--judge", "openai:j", "--judge-base-url", base,
                      "--tasks", "chinese_simpleqa.confidence", "--limit", "4", "-o", str(tmp_path / "run"),
                      "--no-progress", columns=200, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    line = next((ln for ln in done.stdout.splitlines() if "calibration" in ln), None)
    assert line is not None, done.stdout
    assert "chinese_simpleqa.confidence" in line and "ECE 0.200" in line and "Brier 0.040" in line and "4 item(s) used" in line
