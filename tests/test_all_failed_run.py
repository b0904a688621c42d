"""A run where every item failed (answers came back, the judge never did) is not "ok": the task's
status is "failed", the table says so, and ``glotbench run`` exits non-zero (fresh process, stub servers)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[1] / "src")


def test_summary_of_only_errors_is_failed():
    from glotbench.engine.aggregate import summarise_task

    recs = [{"task": "t", "sample_id": str(i), "idx": i, "status": "error", "error": "judge request failed: boom"}
            for i in range(3)]
    s = summarise_task(recs, ["accuracy"], [], total=3, n_boot=10)
    assert s["status"] == "failed" and s["flag"] == "failed" and s["n_errors"] == 3 and s["n_scored"] == 0
    assert s["first_error"] == "judge request failed: boom"


def test_every_item_failed_exits_non_zero(stub_server, tmp_path, data_root):
    model = stub_server("--answer", "Peking")
    judge = stub_server("--bad", "content-int")  # every judge answer malformed
    env = {**os.environ, "PYTHONPATH": SRC, "OPENAI_API_KEY": "x"}
    done = subprocess.run([sys.executable, "-m", "glotbench", "run", "-m", "openai:stub", "--base-url", model,
                           "--judge", "openai:judge", "--judge-base-url", judge, "-t", "chinese_simpleqa", "--limit", "2",
                           "--max-retries", "0", "--bootstrap", "10", "--no-progress", "-o", str(tmp_path / "r")],
                          env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode != 0, done.stdout + done.stderr
    last = [x for x in done.stderr.splitlines() if x.strip()][-1]
    assert last.startswith("error: every item failed in 1 task(s): chinese_simpleqa"), done.stderr
    res = json.loads((tmp_path / "r" / "results.json").read_text())
    t = res["tasks"]["chinese_simpleqa"]
    assert t["status"] == "failed" and t["n_errors"] == 2 and t["n_scored"] == 0
    assert "failed chinese_simpleqa" in done.stdout
