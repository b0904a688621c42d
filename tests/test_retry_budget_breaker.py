"""Finding 3: Retry-After is honoured (capped), a request's retries have a time budget, and a
circuit breaker stops the run early on an unreachable server or refused credentials, with one
line, nothing lost, and a rerun that resumes."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time

import httpx
import pytest

from glotbench.engine.config import RunConfig
from glotbench.engine.retry import RetriesExhausted, RetryPolicy, RunGuard, with_retries
from glotbench.engine.session import run_evaluation
from glotbench.errors import RunStopped, TransientModelError


def _log(base):
    return httpx.get(base.replace("/v1", "/_log")).json()["log"]


def _closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def test_retry_after_is_honoured(stub_server, data_root, tmp_path):
    base = stub_server("--bad", "retry-after", "--retry-after", "2")
    cfg = RunConfig(model="openai:stub", base_url=base, tasks=["mm_eval.semantics"], limit=3, concurrency=3,
                    max_retries=3, retry_base_delay=0.01, output=str(tmp_path / "run"), bootstrap=20)
    results, _ = run_evaluation(cfg, show_progress=False)
    assert results["tasks"]["mm_eval.semantics"]["n_scored"] == 3
    by_hash: dict[str, list] = {}
    for e in _log(base):
        by_hash.setdefault(e["hash"], []).append(e)
    assert len(by_hash) == 3
    for tries in by_hash.values():
        assert [t["status"] for t in tries] == [429, 200]
        # the server asked for 2 s; the backoff alone would have waited ~0.01 s
        assert tries[1]["t"] - tries[0]["t"] >= 2.0


def test_retry_after_is_capped():
    err = TransientModelError("slow down", retry_after=3600)
    assert RetryPolicy(max_retry_after=5).wait_for(1, err, __import__("random").Random(0)) == 5


def test_http_date_retry_after_parses():
    from email.utils import formatdate

    from glotbench.models.http_errors import parse_retry_after

    assert 8 <= parse_retry_after(formatdate(time.time() + 10, usegmt=True)) <= 10
    assert parse_retry_after("7") == 7 and parse_retry_after("soon") is None and parse_retry_after(None) is None


def test_item_budget_bounds_a_never_ending_stream(stub_server):
    """A body that never ends: each attempt times out; the item's budget ends its retries."""
    from glotbench.models.base import GenRequest
    from glotbench.models.openai_compat import OpenAICompatModel

    base = stub_server("--bad", "endless")
    model = OpenAICompatModel("stub", base_url=base, api_key_env="GLOTBENCH_TEST_NO_SUCH_KEY", timeout=0.5)
    policy = RetryPolicy(max_attempts=100, base_delay=0.05, timeout=0.5, item_budget_s=2.0)

    async def go():
        try:
            return await with_retries(lambda: model.generate(GenRequest(prompt="x")), policy)
        finally:
            await model.aclose()

    t0 = time.monotonic()
    with pytest.raises(RetriesExhausted) as info:
        asyncio.run(go())
    assert "per item used up" in info.value.why and info.value.attempts < 10
    assert time.monotonic() - t0 < 2.0 + 0.5 + 1.0  # budget + one attempt + slack


def test_run_budget_stops_the_run():
    async def always_fails():
        raise TransientModelError("HTTP 503")

    guard = RunGuard(RetryPolicy(base_delay=0.01, run_budget_s=0.05, max_attempts=1000, item_budget_s=None))

    async def go():
        with pytest.raises(RunStopped, match="retry budget of 0.05s per run is used up.*HTTP 503"):
            await with_retries(always_fails, guard.policy, guard=guard)

    asyncio.run(go())
    assert guard.stopped
    asyncio.run(go())  # every later request stops at once too


def test_run_budget_ends_a_run_against_a_never_ending_stream(stub_server, data_root, tmp_path):
    base = stub_server("--bad", "endless")
    cfg = RunConfig(model="openai:stub", base_url=base, tasks=["mm_eval.semantics"], limit=50, concurrency=4,
                    timeout=0.5, max_retries=20, retry_base_delay=0.01, retry_budget_run=4,
                    output=str(tmp_path / "run"), bootstrap=20)
    with pytest.raises(RunStopped, match="per run is used up"):
        run_evaluation(cfg, show_progress=False)
    assert len(_log(base)) < 30  # not 50 items x 21 attempts


def test_unreachable_server_stops_the_run_early_and_resumes(data_root, tmp_path):
    url = _closed_port_url()
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "glotbench", "run", "--model", "openai:stub", "--base-url", url,
           "--tasks", "mm_eval", "--output", str(out), "--no-progress"]
    t0 = time.monotonic()
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "OPENAI_API_KEY": "x"})
    elapsed = time.monotonic() - t0
    assert done.returncode == 2, done.stderr
    err_lines = [x for x in done.stderr.splitlines() if x.startswith("error:")]
    assert len(err_lines) == 1 and "consecutive requests could not reach the server" in err_lines[0]
    assert "rerun the same command to resume" in err_lines[0] and "Traceback" not in done.stderr
    assert elapsed < 60, f"an unreachable server took {elapsed:.1f}s to stop the run"
    print(f"unreachable server stopped mm_eval after {elapsed:.1f}s")
    # nothing was recorded as an error item: the rerun retries everything
    results = json.loads((out / "results.json").read_text())
    assert all(t["n_scored"] == 0 and t["n_errors"] == 0 for t in results["tasks"].values())


def test_auth_error_stops_the_run_after_the_first_wave(stub_server, data_root, tmp_path):
    base = stub_server("--bad", "auth")
    cfg = RunConfig(model="openai:stub", base_url=base, tasks=["mm_eval.knowledge"], limit=200, concurrency=4,
                    output=str(tmp_path / "run"), bootstrap=20)
    with pytest.raises(RunStopped, match="refused our credentials.*HTTP 401.*invalid api key"):
        run_evaluation(cfg, show_progress=False)
    assert len(_log(base)) <= 4  # at most the requests already in flight, not all 200


def test_breaker_does_not_trip_on_a_healthy_run_with_some_failures(stub_server, data_root, tmp_path):
    base = stub_server("--fault-rate", "0.3", "--stall", "0.1")
    cfg = RunConfig(model="openai:stub", base_url=base, tasks=["mm_eval.semantics"], limit=20, concurrency=4,
                    max_retries=1, retry_base_delay=0.01, breaker_failures=2, output=str(tmp_path / "run"), bootstrap=20)
    results, _ = run_evaluation(cfg, show_progress=False)
    t = results["tasks"]["mm_eval.semantics"]
    assert t["n_scored"] + t["n_errors"] == 20
