"""glotbench build filter --sequential (Czech-Bench AGREE, thesis §5.4.1) on hand-made items with two
stub models: round counts, the residue sheet, provenance, per-model -M, resume with nothing sent
twice, --dry-run, and bad input (fresh subprocesses)."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from journal_rows import count_responses

from glotbench.build.provenance import read_items, write_items
from glotbench.build.sequential import per_model_args
from glotbench.build.task_yaml import task_spec, write_task_yaml
from glotbench.errors import DataError

SRC = str(Path(__file__).resolve().parents[1] / "src")
KEYS = "AABBBCDDAC"  # gold letters of ten items: model 1 ("A") gets 3, model 2 ("B") 3 of the other 7


def _cli(*args, cwd):
    env = {**os.environ, "OPENAI_API_KEY": "x",
           "PYTHONPATH": os.pathsep.join(p for p in (SRC, os.environ.get("PYTHONPATH", "")) if p)}
    return subprocess.run([sys.executable, "-m", "glotbench", *args], env=env, capture_output=True, text=True,
                          cwd=cwd, timeout=300)


def _dataset(folder: Path) -> Path:
    items = [{"id": f"w{k}", "question": f"Věta číslo {k} _.", "answerKey": key, "answer": f"{key.lower()}{k}",
              "choices": [{"label": lb, "text": f"{lb.lower()}{k}"} for lb in "ABCD"],
              "provenance": [{"step": "cloze", "source": f"s.txt:{k}", "seed": 1}]} for k, key in enumerate(KEYS)]
    path = folder / "items.jsonl"
    write_items(path, items)
    write_task_yaml(folder / "items.yaml", task_spec("cloze", "t.items", "cs", path))
    return path


def test_per_model_args():
    assert per_model_args(["a", "b"], ["temperature=0", "2:base_url=http://x/v1"]) == [
        {"temperature": 0}, {"temperature": 0, "base_url": "http://x/v1"}]
    with pytest.raises(DataError, match=r"-M '3:x=1': there is no model 3 \(gave 2 --model\)"):
        per_model_args(["a", "b"], ["3:x=1"])


def test_sequential_rounds_residue_and_resume(tmp_path, stub_server):
    _dataset(tmp_path)
    a, b = stub_server("--answer", "A"), stub_server("--answer", "B")
    args = ["build", "filter", "--sequential", "-i", "items.jsonl", "-o", "f.jsonl", "-m", "openai:m1",
            "-m", "openai:m2;max_tokens=8;temperature=0.5",
            "-M", f"1:base_url={a}", "-M", f"2:base_url={b}"]
    done = _cli(*args, "--dry-run", cwd=tmp_path)
    assert done.stdout.strip() == ("filter --sequential (dry run): 10 items, 2 models; 10 calls in round 1, "
                                   "at most 20 in all")
    assert not (tmp_path / "f.jsonl").exists()
    done = _cli(*args, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("round 1: openai:m1") and "on 10 items: 3 answered, 7 missed (0 errors)" in lines[0]
    assert lines[1].startswith("round 2: openai:m2;max_tokens=8;temperature=0.5") and "on 7 items: 3 answered, 4 missed (0 errors)" in lines[1]
    items = {it["id"]: it for it in read_items(tmp_path / "f.jsonl")}
    assert items["w0"]["provenance"][-1] == {"step": "filter-sequential", "answered_by": "openai:m1", "round": 1}
    assert items["w2"]["provenance"][-1] == {"step": "filter-sequential", "round": 2,
                                             "answered_by": "openai:m2;max_tokens=8;temperature=0.5",
                                             "missed_by": ["openai:m1"]}
    assert items["w5"]["provenance"][-1] == {"step": "filter-sequential",
                                             "missed_by": ["openai:m1", "openai:m2;max_tokens=8;temperature=0.5"]}
    cfg = json.loads((tmp_path / "f.runs" / "round2" / "results.json").read_text(encoding="utf-8"))["settings"]
    assert (cfg["max_tokens"], cfg["temperature"]) == (8, 0.5)  # the second setting reached the engine
    residue = list(csv.DictReader((tmp_path / "f.residue.csv").open(encoding="utf-8")))
    assert [r["id"] for r in residue] == ["w5", "w6", "w7", "w9"]
    assert (tmp_path / "f.runs" / "round1" / "journal.sqlite").is_file()
    assert (tmp_path / "f.runs" / "round2" / "journal.sqlite").is_file()
    assert (tmp_path / "f.yaml").is_file()
    sent = [len(httpx.get(u.replace("/v1", "/_log")).json()["log"]) for u in (a, b)]
    assert sent == [10, 7]
    again = _cli(*args, cwd=tmp_path)
    assert again.stdout == done.stdout
    assert [len(httpx.get(u.replace("/v1", "/_log")).json()["log"]) for u in (a, b)] == sent


def test_filter_bad_input(tmp_path):
    _dataset(tmp_path)
    done = _cli("build", "filter", "items.jsonl", "-o", "f.jsonl", "-m", "openai:x", cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.strip() == "error: build filter: choose a filter: --sequential or --difficulty"
    (tmp_path / "bad.jsonl").write_text('{"id": "x"}\n[1]\n', encoding="utf-8")
    done = _cli("build", "filter", "--sequential", "bad.jsonl", "-o", "f.jsonl", "-m", "openai:x", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip() == "error: bad.jsonl: line 2: expected an object, got list"


def test_sigkill_during_round_two_then_rerun_sends_nothing_twice(tmp_path, stub_server):
    import signal
    import time

    items = [{"id": f"k{n}", "question": f"Věta {n} _.", "answerKey": "ABC"[n % 3],
              "choices": [{"label": lb, "text": f"{lb.lower()}{n}"} for lb in "ABCD"]} for n in range(40)]
    write_items(tmp_path / "items.jsonl", items)
    write_task_yaml(tmp_path / "items.yaml", task_spec("cloze", "t.items", "cs", tmp_path / "items.jsonl"))
    n_round2 = sum(1 for it in items if it["answerKey"] != "A")
    a, b = stub_server("--answer", "A"), stub_server("--answer", "B", "--delay", "0.1")
    args = [sys.executable, "-m", "glotbench", "build", "filter", "--sequential", "items.jsonl", "-o", "f.jsonl",
            "-m", "openai:m1", "-m", "openai:m2", "-M", f"1:base_url={a}", "-M", f"2:base_url={b}", "-j", "2"]
    env = {**os.environ, "OPENAI_API_KEY": "x",
           "PYTHONPATH": os.pathsep.join(p for p in (SRC, os.environ.get("PYTHONPATH", "")) if p)}
    proc = subprocess.Popen(args, env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    db = tmp_path / "f.runs" / "round2" / "journal.sqlite"
    deadline = time.time() + 120
    while time.time() < deadline and count_responses(db) < 6:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done_before = count_responses(db)
    assert 6 <= done_before < n_round2, "the kill should land in round 2"
    assert not (tmp_path / "f.jsonl").exists()
    time.sleep(0.5)  # requests on the wire at the kill reach the server's log
    log = lambda u: httpx.get(u.replace("/v1", "/_log")).json()["log"]  # noqa: E731
    n_a, n_b = len(log(a)), len(log(b))
    assert n_a == 40
    again = subprocess.run(args, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    assert len(log(a)) == n_a  # round 1 answered from its journal
    after = log(b)[n_b:]
    assert len(after) == n_round2 - done_before  # round 2 sent only what was not journaled
    assert len({e["hash"] for e in after}) == len(after)
    n_b_items = sum(1 for it in items if it["answerKey"] == "B")
    assert f"on {n_round2} items: {n_b_items} answered, {n_round2 - n_b_items} missed (0 errors)" in again.stdout
    assert len(read_items(tmp_path / "f.jsonl")) == 40
