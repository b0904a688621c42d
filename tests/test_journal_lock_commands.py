"""Issue 42, finding 5: every command that sends model requests into a journal takes the run lock of
the journal's folder (``run``, ``judge``, ``translate``, the ``build`` steps, ``analyze --judge``): a
second one on the same folder refuses with the run's one-line message instead of sending every
request again (two ``judge`` sent 600 requests for 300 bodies; a second ``build qa`` reported a false
"journal is corrupt"). Real subprocesses against the stub server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import httpx
import pytest

pytestmark = pytest.mark.slow

from pathlib import Path

SRC = str(Path(__file__).resolve().parents[1] / "src")
ENV = {**os.environ, "OPENAI_API_KEY": "x", "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}


def _wait_for_lock(folder, proc, also=None, timeout=90):
    lock = folder / "run.lock"
    deadline = time.time() + timeout
    while time.time() < deadline:
        if lock.exists() and lock.read_text().strip() == str(proc.pid) and (also is None or also.exists()):
            return
        assert proc.poll() is None, proc.stderr.read()
        time.sleep(0.05)
    raise AssertionError("the first process never took the lock")


def _refused(cmd, holder) -> None:
    second = subprocess.run(cmd, env=ENV, capture_output=True, text=True, timeout=120)
    lines = [x for x in second.stderr.splitlines() if x.strip()]
    assert second.returncode == 2, (second.returncode, second.stderr[-800:])
    assert "Traceback" not in second.stderr
    assert len(lines) == 1 and f"another glotbench process (PID {holder.pid}) is running on this directory" in lines[0], lines
    assert "--wait" in lines[0]


def _log(base: str) -> list:
    return httpx.get(base.replace("/v1", "/_log")).json()["log"]


def test_judge_on_a_running_run_is_refused_with_the_runs_message(stub_server, data_root, tmp_path):
    base = stub_server("--delay", "1.5")  # the run lasts ~30 s: longer than the judge's start-up
    out = tmp_path / "run"
    run = subprocess.Popen([sys.executable, "-m", "glotbench", "run", "--model", "openai:stub", "--base-url", base,
                            "--tasks", "mm_eval.semantics", "--limit", "40", "--concurrency", "2", "--output", str(out),
                            "--no-progress"], env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait_for_lock(out, run, also=out / "journal.sqlite")
        _refused([sys.executable, "-m", "glotbench", "judge", "rerun", str(out), "--judge", "openai:stub", "--judge-base-url", base,
                  "--no-progress"], run)
    finally:
        run.wait(timeout=120)
    assert run.returncode == 0
    log = _log(base)
    assert len(log) == 40 and len({e["hash"] for e in log}) == 40  # the judge sent nothing


def test_second_translate_into_the_same_folder_is_refused(stub_server, data_root, tmp_path):
    from glotbench.paths import resolve_data_file

    if not resolve_data_file("gsm8k_en/test.jsonl").is_file():
        pytest.skip("gsm8k_en not in the shared data")
    base = stub_server("--delay", "3.0")
    out = tmp_path / "mt"
    cmd = [sys.executable, "-m", "glotbench", "build", "translate", "--task", "czech_bench.gsm8k_en", "--to", "cs", "--model",
           "openai:stub", "--base-url", base, "--limit", "3", "--max-tokens", "20", "-o", str(out), "-j", "1"]
    first = subprocess.Popen(cmd, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait_for_lock(out, first)
        _refused(cmd, first)
    finally:
        first.kill()
        first.wait(timeout=60)


def test_second_build_qa_on_the_same_journal_is_refused(stub_server, tmp_path):
    base = stub_server("--delay", "3.0")  # 6 calls one at a time: ~18 s
    passages = tmp_path / "passages.jsonl"
    passages.write_text("".join(json.dumps({"id": f"p{i}", "title": f"T{i}", "text": f"Text number {i} is here."}) + "\n"
                                for i in range(6)), encoding="utf-8")
    cmd = [sys.executable, "-m", "glotbench", "build", "qa", "-p", str(passages), "-l", "en", "-m", "openai:stub",
           "--base-url", base, "-o", str(tmp_path / "qa.jsonl"), "-j", "1"]
    first = subprocess.Popen(cmd, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        _wait_for_lock(tmp_path, first)
        _refused(cmd, first)
    finally:
        first.wait(timeout=120)
    assert first.returncode == 0, first.stderr.read()[-800:]
    log = _log(base)
    assert len(log) == len({e["hash"] for e in log}) == 6  # one call per passage, none twice
