"""End to end: a real llama.cpp OpenAI-compatible server (llama-cpp-python[server]) on loopback
with the SmolLM2 model, MM-Eval items through glotbench's OpenAI-compatible backend."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys

import pytest

from conftest_llama_server import embedded_llama_server

pytestmark = pytest.mark.slow


def test_mm_eval_through_llama_server(data_root, tmp_path):
    out = tmp_path / "run"
    with embedded_llama_server() as (base_url, _model_path):
        cmd = [sys.executable, "-m", "glotbench", "run", "--model", "openai:smollm2", "--base-url", base_url,
               "--tasks", "mm_eval.syntax,mm_eval.knowledge,mm_eval.reasoning", "--limit", "3", "--max-tokens", "12",
               "--concurrency", "1", "--output", str(out), "--no-progress"]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        assert "mm_eval.syntax" in done.stdout and "accuracy" in done.stdout

        # journal: one response per item, keyed by model + request; samples scored once each
        con = sqlite3.connect(out / "journal.sqlite")
        n_resp = con.execute("SELECT COUNT(*) FROM responses WHERE role='model'").fetchone()[0]
        models = {r[0] for r in con.execute("SELECT DISTINCT model_id FROM responses")}
        rows = con.execute("SELECT task, status, record FROM samples").fetchall()
        con.close()
        assert n_resp == 9 and models == {f"openai:smollm2@{base_url}"}
        assert len(rows) == 9 and all(status == "scored" for _, status, _ in rows)

        results = json.loads((out / "results.json").read_text())
        assert results["model"]["base_url"] == base_url
        assert set(results["tasks"]) == {"mm_eval.syntax", "mm_eval.knowledge", "mm_eval.reasoning"}
        for name, t in results["tasks"].items():
            assert t["language"] == "mn" and t["n_items"] == 3 and t["n_scored"] + t["n_errors"] == 3
            assert len(t["fingerprint"]["id"]) == 12 and t["prompt_hash"]
            main = "numeric_match" if name.endswith("reasoning") else "accuracy"
            assert 0.0 <= t["metrics"][main]["value"] <= 1.0
        assert results["run"]["requests_sent"] == 9
        assert results["versions"]["python"] and results["config"]["max_tokens"] == 12
        assert results["tasks"]["mm_eval.syntax"]["tokens"]["input"] > 0

        lines = [json.loads(x) for x in (out / "samples.jsonl").read_text().splitlines()]
        assert len(lines) == 9
        s = next(x for x in lines if x["task"] == "mm_eval.syntax")
        assert s["prompt"][0]["content"] == "You are an AI assistant proficient in Mongolian."
        assert s["outputs"][0]["text"] and s["gold"] in "ABCD" and "pred" in s

        # The same command again: answered from the journal, the server is not asked.
        again = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        assert again.returncode == 0 and "no model calls" in again.stderr


def test_unreachable_server_is_one_line_naming_the_url(data_root, tmp_path):
    from glotbench.testing.servers import free_port

    url = f"http://127.0.0.1:{free_port()}/v1"
    cmd = [sys.executable, "-m", "glotbench", "run", "--model", "openai:x", "--base-url", url, "--tasks", "mm_eval.syntax",
           "--limit", "2", "--max-retries", "1", "--output", str(tmp_path / "r"), "--no-progress"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    # every item is recorded as an error naming the URL, and the command ends with one line saying so
    assert done.returncode == 2
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("error: no request succeeded (2 failed)") and f"cannot reach {url}" in last
    results = json.loads((tmp_path / "r" / "results.json").read_text())
    t = results["tasks"]["mm_eval.syntax"]
    assert t["n_errors"] == 2 and t["n_scored"] == 0
    for e in results["errors"]:
        assert f"cannot reach {url}/chat/completions" in e["error"] and "\n" not in e["error"]
    assert "failed after retries" in done.stdout
