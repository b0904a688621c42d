"""The shared response cache (docs/cache.md): runs in different directories share answers.

Each run is a fresh ``glotbench run`` subprocess against the stub server; requests are counted in
the stub's ``/_log``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

SRC = str(Path(__file__).resolve().parents[1] / "src")
A, B = "hulu.cola", "hulu.rte"


def _cli(*args: str, cwd: Path, env_extra: dict | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "OPENAI_API_KEY": "x", "PYTHONPATH": SRC, **(env_extra or {})}
    if not env_extra or "GLOTBENCH_CACHE" not in env_extra:
        env.pop("GLOTBENCH_CACHE", None)  # a user's own cache must not change what the test counts
    return subprocess.run([sys.executable, "-m", "glotbench", *args], env=env, capture_output=True, text=True,
                          timeout=300, cwd=cwd)


def _sent(base: str) -> int:
    with urllib.request.urlopen(base.rsplit("/v1", 1)[0] + "/_log") as r:
        return len(json.load(r)["log"])


def _run(base, tmp_path, out, *extra, tasks=f"{A},{B}", env_extra=None):
    done = _cli("run", "-m", "openai:stub", "--base-url", base, "-t", tasks, "--limit", "4", "--bootstrap", "20",
                "-o", str(tmp_path / out), "--no-progress", *extra, cwd=tmp_path, env_extra=env_extra)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads((tmp_path / out / "results.json").read_text())


def _metrics(results: dict) -> dict:
    return {t: r["metrics"] for t, r in results["tasks"].items()}


def test_second_run_sends_only_the_new_tasks_requests(stub_server, tmp_path, data_root):
    base = stub_server("--answer", "1")
    cache = tmp_path / "cache"
    n0 = _sent(base)
    _run(base, tmp_path, "one", "--cache", str(cache), tasks=A)
    only_a = _sent(base) - n0
    assert only_a > 0 and (cache / "responses.sqlite").is_file()

    n1 = _sent(base)
    cached = _run(base, tmp_path, "two", "--cache", str(cache))
    second = _sent(base) - n1

    n2 = _sent(base)
    plain = _run(base, tmp_path, "three")  # no cache: every request of both tasks
    both = _sent(base) - n2
    assert second == both - only_a, (second, both, only_a)
    assert second > 0
    assert _metrics(cached) == _metrics(plain)
    assert cached["fingerprint"] == plain["fingerprint"]  # the cache is no request setting
    samples = lambda d: [{k: v for k, v in json.loads(x).items() if k not in ("created",)}  # noqa: E731
                         for x in (tmp_path / d / "samples.jsonl").read_text().splitlines()]
    assert [(r["sample_id"], r["outputs"][0]["text"], r["pred"]) for r in samples("two")] == \
        [(r["sample_id"], r["outputs"][0]["text"], r["pred"]) for r in samples("three")]
    assert cached["run"]["sessions"][-1]["requests_from_shared_cache"] == only_a

    # --no-cache bypasses it; the environment variable turns it on without the flag
    n3 = _sent(base)
    _run(base, tmp_path, "four", "--no-cache", env_extra={"GLOTBENCH_CACHE": str(cache)})
    assert _sent(base) - n3 == both
    n4 = _sent(base)
    _run(base, tmp_path, "five", env_extra={"GLOTBENCH_CACHE": str(cache)})
    assert _sent(base) - n4 == 0


def test_errors_are_never_cached(tmp_path):
    from glotbench.engine.response_cache import ResponseCache
    import asyncio

    from glotbench.engine.caller import CachedCaller, RequestFailed
    from glotbench.engine.journal import Journal
    from glotbench.engine.retry import RetryPolicy
    from glotbench.errors import ModelError
    from glotbench.models.base import GenRequest, GenResult

    class Flaky:
        model_id, max_parallel, is_chat, timeout_scale = "flaky", 1, True, 1
        calls = 0

        def settings(self):
            return {"model_id": self.model_id}

        async def generate(self, request):
            Flaky.calls += 1
            if Flaky.calls == 1:
                raise ModelError("refused")
            return GenResult(text="ok")

    cache = ResponseCache(tmp_path / "c")
    req = GenRequest(prompt="hi", max_tokens=5)

    async def go(journal):
        caller = CachedCaller(Flaky(), journal, policy=RetryPolicy(max_attempts=1), shared=cache)
        try:
            return (await caller(req)).text, caller.stats
        except RequestFailed:
            return None, caller.stats

    assert asyncio.run(go(Journal(tmp_path / "r1" / "j.sqlite")))[0] is None
    assert len(cache) == 0  # the failure is not an answer
    text, stats = asyncio.run(go(Journal(tmp_path / "r2" / "j.sqlite")))
    assert text == "ok" and stats.sent == 1 and len(cache) == 1
    text, stats = asyncio.run(go(Journal(tmp_path / "r3" / "j.sqlite")))
    assert text == "ok" and stats.sent == 0 and stats.shared_hits == 1 and Flaky.calls == 2


def test_two_writers_at_once(tmp_path):
    """Two processes writing the same cache at once: every entry lands, no 'database is locked'."""
    code = ("import sys; from glotbench.engine.response_cache import ResponseCache as C; c=C(sys.argv[1]);"
            "[c.put(f'{sys.argv[2]}{i}', model_id='m', kind='generate', response={'text': str(i)}) for i in range(300)];"
            "print(c.writes)")
    env = {**os.environ, "PYTHONPATH": SRC}
    procs = [subprocess.Popen([sys.executable, "-c", code, str(tmp_path / "c"), tag], env=env,
                              stdout=subprocess.PIPE, text=True) for tag in "ab"]
    outs = [p.communicate(timeout=120)[0].strip() for p in procs]
    assert outs == ["300", "300"]
    from glotbench.engine.response_cache import ResponseCache

    assert len(ResponseCache(tmp_path / "c")) == 600


def test_processes_creating_the_cache_at_once_all_open_it(tmp_path):
    """Four processes opening a new cache together, ten times: switching it to WAL answered
    "database is locked" without SQLite's busy wait (2 of 40 such rounds failed); now retried."""
    code = ("import sys; from glotbench.engine.response_cache import ResponseCache as C; c=C(sys.argv[1]);"
            "c.put(sys.argv[2], model_id='m', kind='generate', response={'text': 'x'}); print(c.writes)")
    env = {**os.environ, "PYTHONPATH": SRC}
    for round_ in range(10):
        folder = tmp_path / f"c{round_}"
        procs = [subprocess.Popen([sys.executable, "-c", code, str(folder), tag], env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for tag in "abcd"]
        outs = [p.communicate(timeout=120) for p in procs]
        assert [o[0].strip() for o in outs] == ["1"] * 4, [o[1][-300:] for o in outs]
