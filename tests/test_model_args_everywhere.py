"""``-M KEY=VALUE`` means the same on every command that loads a model (one loader,
``glotbench.models.registry.load_cli_model``): ``-M base_url=...`` sends the requests to that
server, never to api.openai.com. Each command in a fresh process against the stub server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[1] / "src")
PASSAGES = Path(__file__).resolve().parent / "fixtures" / "build" / "passages.jsonl"


def _glotbench(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    # no server at the default URL: a request that ignored -M would fail, not reach the stub
    env = {**os.environ, "PYTHONPATH": SRC, "OPENAI_API_KEY": "x", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
    return subprocess.run([sys.executable, "-m", "glotbench", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


def _sent(base: str) -> int:
    with urllib.request.urlopen(base.removesuffix("/v1") + "/_log") as r:
        return len(json.load(r)["log"])


def test_build_filter_difficulty_takes_M_base_url(stub_server, tmp_path):
    base = stub_server("--answer", "Nevím.")
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps({"id": "q0", "language": "cs", "question": "Kolik metrů měří Sněžka?", "answer": "1603"},
                              ensure_ascii=False) + "\n", encoding="utf-8")
    done = _glotbench("build", "filter", "--difficulty", "-i", str(src), "-o", "hard.jsonl", "-m", "openai:stub",
                      "-M", f"base_url={base}", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert _sent(base) == 1
    res = json.loads(next((tmp_path / "hard.difficulty" / "runs").glob("*/results.json")).read_text())
    assert res["model"]["base_url"] == base and res["errors"] == []


def test_build_qa_takes_M_base_url(stub_server, tmp_path):
    base = stub_server("--answer", '{"question": "Q?", "answer": "A"}')
    done = _glotbench("build", "qa", "-p", str(PASSAGES), "-o", "qa.jsonl", "-l", "cs", "-n", "2", "-m", "openai:stub",
                      "-M", f"base_url={base}", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert _sent(base) == 2


def test_translate_takes_M_base_url(stub_server, tmp_path, data_root):
    base = stub_server("--answer", "Ahoj.")
    done = _glotbench("build", "translate", "--task", "hulu.cola", "--to", "cs", "-n", "1", "--field", "Sent", "-o", str(tmp_path / "tr"),
                      "-m", "openai:stub", "-M", f"base_url={base}", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert _sent(base) >= 1


def _qa_items(tmp_path: Path, n: int = 2) -> Path:
    path = tmp_path / "items.jsonl"
    rows = [{"id": f"q{k}", "language": "cs", "question": f"Otázka {k}?", "answer": "A", "passage": "Text."}
            for k in range(n)]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def test_build_criteria_takes_judge_args_base_url(stub_server, tmp_path):
    base = stub_server("--answer", "YES")
    done = _glotbench("build", "criteria", "-i", str(_qa_items(tmp_path)), "-o", "crit.jsonl", "--judge", "openai:stub",
                      "--criterion", "unambiguous", "--judge-args", f"base_url={base}", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert _sent(base) == 2


def test_build_select_takes_judge_args_base_url(stub_server, tmp_path):
    base = stub_server("--answer", "A")
    done = _glotbench("build", "select", "--swiss", "-k", "1", "-i", str(_qa_items(tmp_path)), "-o", "sel.jsonl",
                      "--judge", "openai:stub", "--judge-args", f"base_url={base}", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert _sent(base) >= 1
