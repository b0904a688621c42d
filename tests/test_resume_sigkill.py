"""SIGKILL a real `glotbench run` subprocess mid-way; the resumed run sends no request whose
response was already journaled and ends with every item scored exactly once."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import httpx

from journal_rows import count_responses


def test_sigkill_then_resume(stub_server, data_root, tmp_path):
    base = stub_server("--delay", "0.05", "--answer", "C")
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "glotbench", "run", "--model", "openai:stub", "--base-url", base,
           "--tasks", "mm_eval.semantics", "--limit", "60", "--concurrency", "2", "--output", str(out), "--no-progress"]
    env = {**os.environ, "OPENAI_API_KEY": "x"}
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    db = out / "journal.sqlite"
    deadline = time.time() + 60
    while time.time() < deadline and count_responses(db) < 15:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL

    con = sqlite3.connect(db)
    journaled = {json.dumps(json.loads(r[0]), sort_keys=True) for r in con.execute("SELECT request FROM responses")}
    n_done_before = len(journaled)
    con.close()
    assert 15 <= n_done_before < 60, "the kill should land mid-run"
    time.sleep(0.5)  # let requests already on the wire at the kill reach the server's log
    n_log_before = len(httpx.get(base.replace("/v1", "/_log")).json()["log"])

    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr

    # The server saw, after the kill, exactly the requests that were not journaled.
    log = httpx.get(base.replace("/v1", "/_log")).json()["log"]
    after = log[n_log_before:]
    assert len(after) == 60 - n_done_before
    assert len({e["hash"] for e in after}) == len(after), "a request was sent twice after resume"

    results = json.loads((out / "results.json").read_text())
    t = results["tasks"]["mm_eval.semantics"]
    assert t["n_scored"] == 60 and t["n_errors"] == 0
    assert results["run"]["requests_sent"] == 60 - n_done_before
    con = sqlite3.connect(db)
    rows = con.execute("SELECT task, sample_id, COUNT(*) FROM samples GROUP BY task, sample_id").fetchall()
    con.close()
    assert len(rows) == 60 and all(c == 1 for _, _, c in rows)
    lines = (out / "samples.jsonl").read_text().splitlines()
    assert len(lines) == 60

    # A finished run repeated: no model call at all.
    again = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)
    assert again.returncode == 0 and "no model calls" in again.stderr
    assert len(httpx.get(base.replace("/v1", "/_log")).json()["log"]) == len(log)
