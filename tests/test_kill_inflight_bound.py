"""Finding 7, the resume guarantee as docs/footguns.md states it: after a SIGKILL, only requests
that were in flight at the kill may be sent again on resume, at most the concurrency of them.
Real subprocess kills against the stub."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time

import httpx


def _journaled(db) -> int:
    if not db.exists():
        return 0
    try:
        con = sqlite3.connect(db)
        try:
            return con.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
        finally:
            con.close()
    except sqlite3.DatabaseError:
        return 0


def test_resend_after_kill_is_at_most_the_concurrency(stub_server, data_root, tmp_path):
    concurrency = 4
    base = stub_server("--delay", "0.4")
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "glotbench", "run", "--model", "openai:stub", "--base-url", base,
           "--tasks", "mm_eval.semantics", "--limit", "40", "--concurrency", str(concurrency), "--output", str(out),
           "--no-progress"]
    env = {**os.environ, "OPENAI_API_KEY": "x"}
    for kill in range(2):
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        target = 8 * (kill + 1)
        deadline = time.time() + 90
        while time.time() < deadline and _journaled(out / "journal.sqlite") < target:
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    time.sleep(1.0)  # requests on the wire at the kill reach the server's log
    before = httpx.get(base.replace("/v1", "/_log")).json()["log"]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    log = httpx.get(base.replace("/v1", "/_log")).json()["log"]
    sent = {}
    for e in log:
        sent[e["hash"]] = sent.get(e["hash"], 0) + 1
    total_resent = sum(n - 1 for n in sent.values())
    assert len(sent) == 40
    # two kills: each may leave at most `concurrency` requests answered-but-unjournaled
    assert total_resent <= 2 * concurrency, f"{total_resent} requests sent twice over 2 kills"
    assert len(before) < len(log)
    print(f"{total_resent} request(s) re-sent over 2 kills at concurrency {concurrency}")
