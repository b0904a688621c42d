"""Checks that used to come late now come first: --mode loglikelihood with a backend that cannot
score log-probabilities fails before any request (one line, exit 2), and on generation tasks it
says so; --predictions-out writing a partial file warns; a user task's relative data path is
looked up next to its YAML first, then under the data root."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from glotbench.tasks.modes import task_mode
from glotbench.errors import GlotbenchError
from glotbench.tasks.registry import resolve
from glotbench.tasks.request_settings import RequestSettings

TINY = Path(__file__).parent / "fixtures" / "tiny_task"


def _glotbench(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "glotbench", *args], capture_output=True, text=True, timeout=300,
                          cwd=cwd, env={**os.environ, "OPENAI_API_KEY": "x", "COLUMNS": "200"})


def _sent(base: str) -> int:
    return len(httpx.get(base.replace("/v1", "/_log")).json()["log"])


def test_loglikelihood_with_a_generation_only_backend_fails_before_any_request(stub_server, data_root, tmp_path):
    base = stub_server("--answer", "A")
    done = _glotbench("run", "--model", "openai:stub", "--base-url", base, "--tasks", "mm_eval.syntax", "--limit", "3",
                      "--mode", "loglikelihood", "-o", str(tmp_path / "run"), "--no-progress", cwd=tmp_path)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "loglikelihood" in lines[0] and "openai:stub" in lines[0], done.stderr
    assert _sent(base) == 0 and not (tmp_path / "run" / "journal.sqlite").exists()


def test_loglikelihood_on_generation_tasks_is_said(stub_server, data_root, tmp_path):
    base = stub_server("--answer", "A")
    done = _glotbench("run", "--model", "openai:stub", "--base-url", base, "--tasks", "mm_eval.reasoning", "--limit", "2",
                      "--mode", "loglikelihood", "-o", str(tmp_path / "run"), "--no-progress", cwd=tmp_path)
    assert done.returncode == 2 and "mm_eval.reasoning is a generation task" in done.stderr, done.stderr
    assert _sent(base) == 0

    from glotbench.engine.run_checks import check_mode
    from glotbench.models.openai_compat import OpenAICompatModel

    trusted = OpenAICompatModel("stub", base_url=base, logprobs_trusted=True)
    tasks = resolve(["mm_eval.syntax", "mm_eval.reasoning"])
    ll = RequestSettings(mode="loglikelihood")
    notes = check_mode(tasks, "loglikelihood", trusted, lambda t: task_mode(t, ll))
    assert len(notes) == 1 and "mm_eval.reasoning runs in generate mode" in notes[0]
    assert check_mode(tasks, "generate", trusted, lambda t: task_mode(t, RequestSettings())) == []
    with pytest.raises(GlotbenchError, match="cannot score log-probabilities"):
        check_mode(tasks, "loglikelihood", OpenAICompatModel("stub", base_url=base), lambda t: task_mode(t, ll))


def test_partial_predictions_file_warns(stub_server, data_root, tmp_path):
    if not (data_root / "hulu").is_dir():
        pytest.skip("HuLU data not found under the data root")
    base = stub_server("--answer", "1")
    done = _glotbench("run", "--model", "openai:stub", "--base-url", base, "--tasks", "hulu.cola", "--split", "test",
                      "--limit", "10", "-o", str(tmp_path / "run"), "--predictions-out", str(tmp_path / "sub"),
                      "--no-progress", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    warn = [ln for ln in done.stderr.splitlines() if ln.startswith("warning:")]
    assert len(warn) == 1 and "covers 10 of" in warn[0] and "hulu.cola.json" in warn[0], done.stderr


def test_user_task_data_next_to_its_yaml(tmp_path, monkeypatch):
    folder = tmp_path / "mytask"
    shutil.copytree(TINY, folder)
    empty_root = tmp_path / "root"
    empty_root.mkdir()
    monkeypatch.setenv("GLOTBENCH_DATA", str(empty_root))
    [task] = resolve([str(folder / "tiny.yaml")])
    assert task.split_path("test") == folder / "items.jsonl"
    assert len(task.samples()) == 40
    # no file beside the YAML: the data root is next
    (folder / "items.jsonl").rename(empty_root / "items.jsonl")
    assert task.split_path("test") == empty_root / "items.jsonl"
