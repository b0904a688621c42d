"""Ctrl-C during a real in-process (embedded GGUF) run: exit 130 with the resume hint, every time.

The interrupt cancels the run's tasks, but a decode already running in the worker thread goes on;
the model's ``aclose`` used to free the llama.cpp context under it (a segfault, rc 139 or -11, in
3 of 4 interrupts). Ten interrupts of a real `glotbench run` subprocess, each landing while the
model is decoding, must all end with rc 130 and the resume hint; the journal stays readable."""

from __future__ import annotations

import json
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

TRIALS = 10
TINY = Path(__file__).parent / "fixtures" / "tiny_task"


@pytest.mark.slow
def test_ctrl_c_during_embedded_run_exits_130_with_resume_hint(smollm2_path, tmp_path):
    # short prompts, 64-token answers: the model is decoding from the first item on
    task = tmp_path / "tiny.yaml"
    task.write_text((TINY / "tiny.yaml").read_text().replace("test: items.jsonl", f"test: {TINY / 'items.jsonl'}"))
    out = tmp_path / "run"
    cmd = [sys.executable, "-X", "faulthandler", "-m", "glotbench", "run", "--tasks", str(task), "-o", str(out),
           "--no-progress"]
    rng = random.Random(16)
    outcomes = []
    for trial in range(TRIALS):
        # SIGINT back to its default: a shell without job control starts background jobs with it
        # ignored, and Python then installs no KeyboardInterrupt handler at all
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        head = []
        for line in proc.stderr:  # the run has started once it says how many items are left
            head.append(line)
            if "to run" in line:
                break
        assert proc.poll() is None, f"trial {trial}: the run ended before the interrupt: {''.join(head)}"
        time.sleep(rng.uniform(0.2, 1.5))
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=300)
        outcomes.append(proc.returncode)
        assert proc.returncode == 130, f"trial {trial}: rc {proc.returncode} (so far {outcomes})\n{stderr[-3000:]}"
        assert "run the same command again to resume" in stderr, stderr[-2000:]
        assert "Fatal Python error" not in stderr and "Traceback" not in stderr, stderr[-3000:]
    assert outcomes == [130] * TRIALS
    con = sqlite3.connect(out / "journal.sqlite")
    try:
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        sessions = con.execute("SELECT value FROM meta WHERE key='sessions'").fetchone()
        assert sessions is not None
        assert [bool(s.get("interrupted")) for s in json.loads(sessions[0])] == [True] * TRIALS
    finally:
        con.close()
