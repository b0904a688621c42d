"""Run identity includes the model's settings: the chat and plain runs of one model land in
different run directories; `-o DIR` onto another model's run is refused with one line; a finished
rerun keeps the original run's statistics (requests, seconds) and adds its own session."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from glotbench.engine.config import RunConfig
from glotbench.engine.plan import default_output_dir


def _glotbench(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "glotbench", *args], capture_output=True, text=True, timeout=300,
                          cwd=cwd, env={**os.environ, "OPENAI_API_KEY": "x", "COLUMNS": "200"})


def test_default_dir_depends_on_model_settings():
    cfg = RunConfig(tasks=["mm_eval.syntax"], limit=10)
    chat = {"model_id": "llamacpp:x.gguf@abc", "path": "/a/x.gguf", "chat": True, "n_ctx": 4096}
    plain = {**chat, "chat": False}
    moved = {**chat, "path": "/elsewhere/x.gguf"}
    assert default_output_dir("llamacpp:x.gguf@abc", cfg, chat) != default_output_dir("llamacpp:x.gguf@abc", cfg, plain)
    assert default_output_dir("llamacpp:x.gguf@abc", cfg, chat) == default_output_dir("llamacpp:x.gguf@abc", cfg, moved)


def test_chat_and_plain_runs_get_their_own_directories(stub_server, data_root, tmp_path):
    base = stub_server("--answer", "A")
    (tmp_path / "plain.yaml").write_text("model_args: {chat: false}\n")
    common = ["--model", "openai:stub", "--base-url", base, "--tasks", "mm_eval.syntax", "--limit", "3", "--no-progress"]
    chat = _glotbench("run", *common, cwd=tmp_path)
    plain = _glotbench("run", "-c", str(tmp_path / "plain.yaml"), *common, cwd=tmp_path)
    assert chat.returncode == 0 and plain.returncode == 0, chat.stderr + plain.stderr
    dirs = sorted(p.parent for p in (tmp_path / "runs").rglob("results.json"))
    assert len(dirs) == 2, dirs
    for d in dirs:  # each directory holds one model setting and 3 samples, not 6
        assert len((d / "samples.jsonl").read_text().splitlines()) == 3
    assert {json.loads((d / "results.json").read_text())["model"]["chat"] for d in dirs} == {True, False}


def test_output_dir_of_another_model_is_refused(stub_server, data_root, tmp_path):
    base = stub_server("--answer", "A")
    out = tmp_path / "shared"
    first = _glotbench("run", "--model", "openai:model-one", "--base-url", base, "--tasks", "mm_eval.syntax",
                       "--limit", "2", "-o", str(out), "--no-progress", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    before = (out / "results.json").read_text()
    other = _glotbench("run", "--model", "openai:model-two", "--base-url", base, "--tasks", "mm_eval.syntax",
                       "--limit", "2", "-o", str(out), "--no-progress", cwd=tmp_path)
    assert other.returncode == 2
    lines = other.stderr.strip().splitlines()
    assert len(lines) == 1 and "model-one" in lines[0] and "model-two" in lines[0] and str(out) in lines[0]
    assert (out / "results.json").read_text() == before  # nothing of the second model got in
    plain = tmp_path / "plain.yaml"
    plain.write_text("model_args: {chat: false}\n")
    same_model_other_setting = _glotbench("run", "-c", str(plain), "--model", "openai:model-one", "--base-url", base,
                                          "--tasks", "mm_eval.syntax", "--limit", "2", "-o", str(out), "--no-progress",
                                          cwd=tmp_path)
    assert same_model_other_setting.returncode == 2 and "chat=False" in same_model_other_setting.stderr


def test_finished_rerun_keeps_the_original_statistics(stub_server, data_root, tmp_path):
    from glotbench.report.html import build_context
    from glotbench.report.runs import load_runs

    base = stub_server("--answer", "A", "--delay", "0.05")
    out = tmp_path / "run"
    args = ["run", "--model", "openai:stub", "--base-url", base, "--tasks", "mm_eval.syntax", "--limit", "6",
            "-o", str(out), "--no-progress", "--concurrency", "1"]
    assert _glotbench(*args, cwd=tmp_path).returncode == 0
    first = json.loads((out / "results.json").read_text())["run"]
    assert first["requests_sent"] == 6 and first["elapsed_s"] >= 0.3
    again = _glotbench(*args, cwd=tmp_path)
    assert again.returncode == 0 and "no model calls" in again.stderr
    run = json.loads((out / "results.json").read_text())["run"]
    assert run["requests_sent"] == 6 and run["elapsed_s"] >= first["elapsed_s"]  # the original numbers stay
    assert len(run["sessions"]) == 2
    assert run["sessions"][0]["requests_sent"] == 6 and run["sessions"][1]["requests_sent"] == 0
    assert run["sessions"][1]["requests_cached"] == 0 and run["sessions"][1]["elapsed_s"] < first["elapsed_s"]
    [info] = build_context(load_runs([out]))["runs"]
    assert info["sent"] == 6 and info["elapsed_s"] >= first["elapsed_s"]
