"""Issue 48, bad inputs: each is one line naming the field, exit 2, before any request (the stub
server's log stays empty). They were a traceback (``-t ''``, hand-edited data lock files), silent
(``--concurrency 0``, ``--gen-kwargs top_k=abc`` sent as a string, ``--base-url notaurl`` taken as a
replica, ``fewshot n: -1``, a null printed as "None", a multiple-choice task without ``target``), or
said only after every request was sent (``language: xx-nope``, ``-M max_response_bytes=-1``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

SRC = str(Path(__file__).resolve().parents[1] / "src")
ENV = {**os.environ, "OPENAI_API_KEY": "x", "COLUMNS": "200",
       "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}

TASK = """\
name: demo.NAME
version: "1"
language: LANG
dataset:
  format: jsonl
  splits: {test: items.jsonl}
fields: {id: id, question: question, meta: meta, choices: "opts[*]"TARGET}
output_type: multiple_choice
FEWSHOT
prompt:
  user: "USER\\n{{ choices_block }}"
extractor: {name: choice}
"""


def _task(tmp_path: Path, name: str = "ok", *, lang: str = "en", target: bool = True, fewshot: str = "",
          user: str = "{{ question }}") -> Path:
    (tmp_path / "items.jsonl").write_text("".join(
        json.dumps({"id": str(i), "question": f"q{i}", "opts": ["x", "y"], "gold": "AB"[i % 2],
                    "meta": {"level": None}}) + "\n" for i in range(2)), encoding="utf-8")
    text = (TASK.replace("NAME", name).replace("LANG", lang).replace("TARGET", ", target: gold" if target else "")
            .replace("FEWSHOT", fewshot).replace("USER", user))
    path = tmp_path / f"{name}.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def _glotbench(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "glotbench", *args], env=ENV, capture_output=True, text=True,
                          timeout=180, cwd=tmp_path)


def _run(base: str, tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return _glotbench(tmp_path, "run", "--model", "openai:stub", "--base-url", base, "--output", str(tmp_path / "out"),
                      "--no-progress", *args)


def _one_line(done: subprocess.CompletedProcess, *words: str) -> None:
    lines = [x for x in done.stderr.splitlines() if x.strip()]
    assert done.returncode == 2 and "Traceback" not in done.stderr, (done.returncode, done.stderr[-2000:])
    assert len(lines) == 1 and all(w in lines[0] for w in words), lines


def _sent(base: str) -> list:
    return httpx.get(base.replace("/v1", "/_log")).json()["log"]


@pytest.mark.parametrize("flags, words", [
    (["--concurrency", "0"], ["concurrency"]),
    (["--concurrency", "-3"], ["concurrency"]),
    (["--gen-kwargs", "top_k=abc"], ["top_k", "whole number"]),
    (["--gen-kwargs", "temperature=hot"], ["temperature", "number"]),
    (["-M", "max_response_bytes=-1"], ["max_response_bytes"]),
    (["--tasks", ""], ["--tasks", "names no task"]),
], ids=["concurrency-0", "concurrency-3", "top_k-abc", "temperature-hot", "max_response_bytes-1", "tasks-empty"])
def test_bad_flags_are_one_line_before_any_request(stub_server, tmp_path, flags, words):
    base = stub_server("--answer", "A")
    task = _task(tmp_path)
    args = flags if flags[0] == "--tasks" else ["--tasks", str(task), *flags]
    _one_line(_run(base, tmp_path, *args), *words)
    assert _sent(base) == []


@pytest.mark.parametrize("url", ["notaurl", "ftp://127.0.0.1/v1"])
def test_a_base_url_that_is_no_http_url_is_refused(stub_server, tmp_path, url):
    base = stub_server("--answer", "A")
    done = _glotbench(tmp_path, "run", "--model", "openai:stub", "--base-url", f"{base},{url}", "--tasks",
                      str(_task(tmp_path)), "-o", str(tmp_path / "out"), "--no-progress")
    _one_line(done, "base_url", url)
    assert _sent(base) == []


@pytest.mark.parametrize("kind, words", [
    ("fewshot", ["fewshot.n"]),
    ("no_target", ["fields.target"]),
    ("language", ["field 'language'", "xx-nope"]),
    ("nested_null", ["items.jsonl: record 0", "'meta.level'", "null"]),
], ids=["fewshot-n-1", "mc-without-target", "language-xx-nope", "null-printed-as-None"])
def test_bad_task_files_are_one_line_before_any_request(stub_server, tmp_path, kind, words):
    base = stub_server("--answer", "A")
    kw = {"fewshot": {"fewshot": "fewshot: {split: test, n: -1}"}, "no_target": {"target": False},
          "language": {"lang": "xx-nope"}, "nested_null": {"user": "{{ question }} ({{ meta.level }})"}}[kind]
    task = _task(tmp_path, kind, **kw)
    done = _run(base, tmp_path, "--tasks", str(task))
    _one_line(done, *words)
    assert _sent(base) == []


def _origin_key() -> str:
    from glotbench.tasks.registry import all_specs

    spec, _ = all_specs()["mm_eval.syntax"]
    return spec.source.fetch[0].key()


@pytest.mark.parametrize("entry, words", [
    ("abc", ["expected a mapping"]),
    ({"commit": "c", "files": ["a"]}, [".files", "expected a mapping"]),
    ({"commit": "c", "files": {"a": 3}}, [".files.a"]),
    ({"commit": [1], "files": {}}, [".commit"]),
], ids=["entry-text", "files-list", "file-int", "commit-list"])
def test_a_hand_edited_data_lock_is_one_line(tmp_path, entry, words):
    """Entries of the wrong shape gave AttributeError/TypeError tracebacks in `data verify` and `data pull`."""
    key = _origin_key()
    (tmp_path / "glotbench-data.lock.json").write_text(json.dumps({"version": 1, "origins": {key: entry}}),
                                                       encoding="utf-8")
    for cmd in (["verify", "mm_eval.syntax"], ["pull", "mm_eval.syntax", "--force"]):
        _one_line(_glotbench(tmp_path, "data", *cmd), "glotbench-data.lock.json", *words)


def test_a_language_without_a_pack_runs_when_its_scoring_reads_no_pack(stub_server, tmp_path):
    """A multiple-choice task scored from option log-likelihoods reads no language pack (lm-eval's
    tasks in German, Russian ...), so its language needs none; scored from generated text it does,
    and is refused before any request (the case above)."""
    base = stub_server("--answer", "A")
    task = _task(tmp_path, "language", lang="xx-nope")
    done = _run(base, tmp_path, "--tasks", str(task), "--mode", "loglikelihood", "-M", "logprobs_trusted=true")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "field 'language'" not in done.stderr
    assert _sent(base)  # it ran
