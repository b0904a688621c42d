"""Issue 42, finding 8: bad run inputs that were silently accepted (or crashed with a traceback) are
refused before any request, with one line naming the field: --num-fewshot -2, --bootstrap -1,
--temperature inf, --limit nan, an empty --config or ``tasks: []`` (ran all of mm_eval), more
few-shot examples than the few-shot split holds, a misspelt ``slice_by`` (one slice "None"), a task
file that reuses a built-in task's name. Fresh subprocesses against the stub server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

SRC = str(Path(__file__).resolve().parents[1] / "src")
ENV = {**os.environ, "OPENAI_API_KEY": "x", "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}

TASK = """\
name: NAME
version: "1"
language: hu
dataset:
  format: jsonl
  splits: {test: DATA}
fields:
  question: q
  choices: "opts[*]"
  target: gold
  topic: topic
output_type: multiple_choice
fewshot: {split: test, n: 0, seed: 7}
slice_by: SLICES
prompt:
  user: "{{ question }}\\n{{ choices_block }}"
extractor: {name: choice}
"""


def _task(tmp_path: Path, name: str = "demo.bad", slices: str = "[topic]", n: int = 4) -> Path:
    data = tmp_path / f"{name}.jsonl"
    data.write_text("".join(json.dumps({"q": f"kérdés {i}", "opts": ["x", "y"], "gold": "AB"[i % 2], "topic": "t"}) + "\n"
                            for i in range(n)), encoding="utf-8")
    spec = tmp_path / f"{name}.yaml"
    spec.write_text(TASK.replace("NAME", name).replace("DATA", str(data)).replace("SLICES", slices), encoding="utf-8")
    return spec


def _run(base: str, tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "glotbench", "run", "--model", "openai:stub", "--base-url", base,
                           "--output", str(tmp_path / "out"), "--no-progress", *args],
                          env=ENV, capture_output=True, text=True, timeout=180, cwd=tmp_path)


def _one_line(done: subprocess.CompletedProcess, *words: str) -> None:
    lines = [x for x in done.stderr.splitlines() if x.strip()]
    assert done.returncode == 2 and "Traceback" not in done.stderr, (done.returncode, done.stderr[-1500:])
    assert len(lines) == 1 and all(w in lines[0] for w in words), lines


@pytest.mark.parametrize("flags, words", [
    (["--num-fewshot", "-2"], ["num_fewshot"]),
    (["--bootstrap", "-1"], ["bootstrap"]),
    (["--temperature", "inf"], ["temperature"]),
    (["--limit", "nan"], ["limit"]),
], ids=["num-fewshot-2", "bootstrap-1", "temperature-inf", "limit-nan"])
def test_bad_flags_are_one_line_and_send_nothing(stub_server, tmp_path, flags, words):
    base = stub_server()
    _one_line(_run(base, tmp_path, "--tasks", str(_task(tmp_path)), *flags), *words)
    assert httpx.get(base.replace("/v1", "/_log")).json()["log"] == []


@pytest.mark.parametrize("text", ["", "tasks: []\n"], ids=["empty-config", "tasks-empty-list"])
def test_empty_config_or_empty_task_list_is_refused_not_all_of_mm_eval(stub_server, tmp_path, text):
    base = stub_server()
    cfg = tmp_path / "run.yaml"
    cfg.write_text(text, encoding="utf-8")
    _one_line(_run(base, tmp_path, "--config", str(cfg)), str(cfg))
    assert httpx.get(base.replace("/v1", "/_log")).json()["log"] == []


def test_more_fewshot_examples_than_the_split_holds_is_refused(stub_server, tmp_path):
    base = stub_server()
    _one_line(_run(base, tmp_path, "--tasks", str(_task(tmp_path, n=4)), "--num-fewshot", "50"), "few-shot", "only 3")
    assert httpx.get(base.replace("/v1", "/_log")).json()["log"] == []


def test_misspelt_slice_by_is_refused(stub_server, tmp_path):
    base = stub_server()
    _one_line(_run(base, tmp_path, "--tasks", str(_task(tmp_path, slices="[topik]"))), "slice_by", "'topik'", "topic")
    assert httpx.get(base.replace("/v1", "/_log")).json()["log"] == []


def test_task_file_reusing_a_builtin_name_is_said_and_refused_beside_the_builtin(stub_server, tmp_path):
    """An edited copy of a built-in task run by its path (a common way to try a change) runs, and the
    run says once that its results carry the built-in's name; run beside that built-in, it is refused
    in one line before any request."""
    base = stub_server()
    task = str(_task(tmp_path, name="mm_eval.semantics"))
    _one_line(_run(base, tmp_path, "--tasks", f"mm_eval.semantics,{task}"), "mm_eval.semantics", "name")
    assert httpx.get(base.replace("/v1", "/_log")).json()["log"] == []
    done = _run(base, tmp_path, "--tasks", task)
    assert done.returncode == 0, done.stderr[-1500:]
    said = [x for x in (done.stdout + done.stderr).splitlines() if "name of a built-in task" in x]
    assert len(said) == 1 and "mm_eval.semantics" in said[0]


def test_unwritable_outputs_and_a_folder_for_a_journal_are_one_line(stub_server, tmp_path):
    """issue 42, finding 8: tracebacks for ``journal.sqlite`` as a folder, ``-o`` naming a file and an
    output on a file system that refuses writes (read-only; here /sys, which refuses even root)."""
    base = stub_server()
    task = str(_task(tmp_path))
    (tmp_path / "d1" / "journal.sqlite").mkdir(parents=True)
    run = [sys.executable, "-m", "glotbench", "run", "--model", "openai:stub", "--base-url", base, "--tasks", task,
           "--no-progress", "--output"]
    done = subprocess.run(run + [str(tmp_path / "d1")], env=ENV, capture_output=True, text=True, timeout=120)
    _one_line(done, "journal.sqlite", "is a folder")
    (tmp_path / "afile").write_text("x")
    done = subprocess.run(run + [str(tmp_path / "afile")], env=ENV, capture_output=True, text=True, timeout=120)
    _one_line(done, "afile", "not a folder")
    if Path("/sys").is_dir():
        done = subprocess.run(run + ["/sys/glotbench-test-out"], env=ENV, capture_output=True, text=True, timeout=120)
        _one_line(done, "/sys/glotbench-test-out")
    assert httpx.get(base.replace("/v1", "/_log")).json()["log"] == []


def test_sample_row_with_invalid_json_is_one_line_and_doctor_repairs_it(stub_server, tmp_path):
    import sqlite3

    base = stub_server()
    out = tmp_path / "out"
    assert _run(base, tmp_path, "--tasks", str(_task(tmp_path))).returncode == 0
    con = sqlite3.connect(out / "journal.sqlite")
    con.execute("UPDATE samples SET record='{bad json' WHERE rowid=(SELECT MIN(rowid) FROM samples)")
    con.commit()
    con.close()
    for cmd in (["runs", "export", str(out), "--format", "csv", "-o", str(tmp_path / "s.csv")],
                ["runs", "export", str(out), "--format", "lm-eval"]):
        done = subprocess.run([sys.executable, "-m", "glotbench", *cmd], env=ENV, capture_output=True, text=True, timeout=120)
        _one_line(done, "not valid JSON", "glotbench runs doctor")
    doctor = subprocess.run([sys.executable, "-m", "glotbench", "runs", "doctor", str(out)], env=ENV, capture_output=True,
                            text=True, timeout=120)
    assert doctor.returncode == 0 and "row damage" in doctor.stdout, doctor.stdout + doctor.stderr
    n_sent = len(httpx.get(base.replace("/v1", "/_log")).json()["log"])
    assert _run(base, tmp_path, "--tasks", str(_task(tmp_path))).returncode == 0
    assert len(httpx.get(base.replace("/v1", "/_log")).json()["log"]) == n_sent  # rebuilt from the journal, none sent
    done = subprocess.run([sys.executable, "-m", "glotbench", "runs", "export", str(out), "--format", "csv", "-o",
                           str(tmp_path / "s.csv")], env=ENV, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-500:]
