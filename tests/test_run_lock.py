"""Finding 2: two `glotbench run` processes on one run directory never both send: the second
refuses with one line naming the holder's PID (or waits with --wait). Real subprocesses."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import httpx

from glotbench.engine.lock import RunLock, RunLocked


def _cmd(base, out, *extra):
    return [sys.executable, "-m", "glotbench", "run", "--model", "openai:stub", "--base-url", base,
            "--tasks", "mm_eval.semantics", "--limit", "20", "--concurrency", "2", "--output", str(out),
            "--no-progress", *extra]


def _wait_for_lock(out, proc, timeout=60):
    lock = out / "run.lock"
    deadline = time.time() + timeout
    while time.time() < deadline:
        if lock.exists() and lock.read_text().strip() == str(proc.pid):
            return
        assert proc.poll() is None, proc.stderr.read()
        time.sleep(0.05)
    raise AssertionError("the first run never took the lock")


def test_second_run_on_same_directory_is_refused(stub_server, data_root, tmp_path):
    base = stub_server("--delay", "1.5")  # the first run lasts ~15 s: longer than the second's start-up
    out = tmp_path / "run"
    env = {**os.environ, "OPENAI_API_KEY": "x"}
    first = subprocess.Popen(_cmd(base, out), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait_for_lock(out, first)
        second = subprocess.run(_cmd(base, out), env=env, capture_output=True, text=True, timeout=60)
        assert second.returncode == 2
        lines = [x for x in second.stderr.splitlines() if x.strip()]
        assert len(lines) == 1 and f"PID {first.pid}" in lines[0] and "--wait" in lines[0], second.stderr
        assert "Traceback" not in second.stderr
        assert first.poll() is None, "the first run should still be running"
    finally:
        first.wait(timeout=120)
    assert first.returncode == 0
    # every request went out exactly once
    log = httpx.get(base.replace("/v1", "/_log")).json()["log"]
    assert len(log) == 20 and len({e["hash"] for e in log}) == 20


def test_wait_queues_behind_the_holder_and_sends_nothing_twice(stub_server, data_root, tmp_path):
    base = stub_server("--delay", "1.5")
    out = tmp_path / "run"
    env = {**os.environ, "OPENAI_API_KEY": "x"}
    first = subprocess.Popen(_cmd(base, out), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _wait_for_lock(out, first)
    second = subprocess.run(_cmd(base, out, "--wait"), env=env, capture_output=True, text=True, timeout=180)
    first.wait(timeout=60)
    assert first.returncode == 0 and second.returncode == 0, second.stderr
    assert f"waiting: PID {first.pid}" in second.stderr and "no model calls" in second.stderr
    log = httpx.get(base.replace("/v1", "/_log")).json()["log"]
    assert len(log) == 20 and len({e["hash"] for e in log}) == 20


def test_lock_is_released_by_a_killed_holder(tmp_path):
    """flock dies with its process: a SIGKILLed run never blocks the rerun."""
    code = (f"from glotbench.engine.lock import RunLock; import time; RunLock({str(tmp_path)!r}).acquire(); "
            "print('held', flush=True); time.sleep(60)")
    holder = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert holder.stdout.readline().strip() == "held"
    try:
        RunLock(tmp_path).acquire()
        raise AssertionError("a held lock was acquired twice")
    except RunLocked as err:
        assert f"PID {holder.pid}" in str(err)
    holder.kill()
    holder.wait()
    lock = RunLock(tmp_path).acquire()
    lock.release()
