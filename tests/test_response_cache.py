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


# ------------------------------------------------------------------------------------------- issue 48
def _samples(run: Path) -> list[dict]:
    return [json.loads(x) for x in (run / "samples.jsonl").read_text(encoding="utf-8").splitlines()]


def test_another_model_behind_the_same_url_and_name_is_sent_again(tmp_path, data_root):
    """Run A fills the cache against a server serving model A; the server is replaced (same port,
    same model name) by one serving model B: run B sends every request again and reports B's
    answers, not A's; B's own rerun is then answered from the cache."""
    from glotbench.testing.servers import free_port, start_stub, stop

    port, cache = free_port(), tmp_path / "cache"
    base, a = start_stub("--answer", "1", "--served-id", "model-a.gguf", port=port)
    try:
        _run(base, tmp_path, "a", "--cache", str(cache))
        sent_a = _sent(base)
    finally:
        stop(a)
    base, b = start_stub("--answer", "0", "--served-id", "model-b.gguf", port=port)
    try:
        res_b = _run(base, tmp_path, "b", "--cache", str(cache))
        assert _sent(base) == sent_a, "run B took model A's answers from the cache"
        assert {r["outputs"][0]["text"] for r in _samples(tmp_path / "b")} == {"0"}
        assert res_b["served_model"]["model"]["models"] == [{"id": "model-b.gguf"}]
        assert res_b["run"]["sessions"][-1]["shared_cache"]["keyed_on"]["model"] == "served model identity"
        _run(base, tmp_path, "b2", "--cache", str(cache))
        assert _sent(base) == sent_a  # B's answers are cached under B's identity
    finally:
        stop(b)


def test_a_server_that_cannot_say_needs_cache_trust_name(tmp_path, data_root, stub_server):
    base = stub_server("--answer", "1", "--no-models")
    cache = tmp_path / "cache"
    done = _cli("run", "-m", "openai:stub", "--base-url", base, "-t", A, "--limit", "4", "--bootstrap", "20",
                "-o", str(tmp_path / "one"), "--no-progress", "--cache", str(cache), cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "--cache-trust-name" in done.stderr
    first = _sent(base)
    res = _run(base, tmp_path, "two", "--cache", str(cache), tasks=A)
    assert _sent(base) == 2 * first  # refused: nothing read from (or written to) the cache
    assert res["served_model"] == {"model": None}
    assert res["run"]["sessions"][-1]["shared_cache"]["keyed_on"]["model"].startswith("not used")
    _run(base, tmp_path, "three", "--cache", str(cache), "--cache-trust-name", tasks=A)
    n = _sent(base)
    res = _run(base, tmp_path, "four", "--cache", str(cache), "--cache-trust-name", tasks=A)
    assert _sent(base) == n  # trusted by name: answered from the cache
    assert "--cache-trust-name" in res["run"]["sessions"][-1]["shared_cache"]["keyed_on"]["model"]


def test_llamacpp_props_model_file_is_part_of_the_identity(tmp_path):
    """llama.cpp's /props: the model file's path, and where it is on this machine its size, mtime and
    edge hash: the same path with another file behind it is another identity."""
    from glotbench.models.served_identity import probe
    from glotbench.testing.servers import start_stub, stop

    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF" + b"a" * 5000)
    base, p = start_stub("--model-path", str(gguf))
    try:
        one = probe(base, "stub")
        gguf.write_bytes(b"GGUF" + b"b" * 5000)
        two = probe(base, "stub")
    finally:
        stop(p)
    assert one["props"]["model_path"] == str(gguf) and one["props"]["file"]["size"] == 5004
    assert one != two and one["models"] == two["models"]


def _zero(path: Path, offset: int, n: int) -> None:
    with path.open("r+b") as fh:
        fh.seek(offset)
        fh.write(b"\0" * n)


def test_zeroed_cache_pages_are_misses_and_doctor_names_the_damage(tmp_path, data_root, stub_server):
    """32 KB zeroed in the middle of a filled cache: the affected items are sent again (none fails
    after retries), the run counts and names it, `glotbench doctor` reports it and rebuilds it."""
    base = stub_server("--answer", "1" + " padding" * 200)
    cache = tmp_path / "cache"
    first = _cli("run", "-m", "openai:stub", "--base-url", base, "-t", f"{A},{B}", "--limit", "40", "--bootstrap", "20",
                 "-o", str(tmp_path / "one"), "--no-progress", "--cache", str(cache), cwd=tmp_path)
    assert first.returncode == 0, first.stderr[-2000:]
    total = _sent(base)
    db = cache / "responses.sqlite"
    size = db.stat().st_size
    assert size > 96 * 1024, size
    _zero(db, size // 2 - 16 * 1024, 32 * 1024)
    n0 = _sent(base)
    done = _cli("run", "-m", "openai:stub", "--base-url", base, "-t", f"{A},{B}", "--limit", "40", "--bootstrap", "20",
                "-o", str(tmp_path / "two"), "--no-progress", "--cache", str(cache), cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    resent = _sent(base) - n0
    print(f"cache {size} bytes, {total} answers; 32 KB zeroed: {resent} re-sent")
    assert 0 < resent <= total
    recs = _samples(tmp_path / "two")
    assert all(r["status"] == "scored" for r in recs), [r.get("error") for r in recs if r["status"] != "scored"]
    report = json.loads((tmp_path / "two" / "results.json").read_text())["run"]["sessions"][-1]["shared_cache"]
    assert report.get("read_errors", 0) + report.get("bad_rows", 0) > 0, report
    assert "response cache" in done.stderr and "misses" in done.stderr
    check = _cli("runs", "doctor", str(tmp_path / "two"), "--check", cwd=tmp_path)
    assert check.returncode == 1 and "response cache" in check.stdout and "damaged" in check.stdout, check.stdout
    fix = _cli("runs", "doctor", str(tmp_path / "two"), cwd=tmp_path)
    assert fix.returncode == 0 and "rebuilt" in fix.stdout, fix.stdout + fix.stderr
    assert "ok" in _cli("runs", "doctor", str(tmp_path / "two"), "--check", cwd=tmp_path).stdout


def test_rows_of_the_wrong_shape_are_misses_counted(tmp_path):
    import asyncio
    import sqlite3

    from glotbench.engine.caller import CachedCaller
    from glotbench.engine.journal import Journal
    from glotbench.engine.response_cache import ResponseCache
    from glotbench.models.base import GenRequest, GenResult

    class Echo:
        model_id, max_parallel, is_chat, timeout_scale = "echo", 1, True, 1
        calls = 0

        def settings(self):
            return {"model_id": self.model_id}

        async def generate(self, request):
            Echo.calls += 1
            return GenResult(text="fresh")

    cache = ResponseCache(tmp_path / "c")
    reqs = [GenRequest(prompt=f"q{i}", max_tokens=5) for i in range(3)]

    async def go(journal):
        caller = CachedCaller(Echo(), journal, shared=cache)
        return [(await caller(r)).text for r in reqs], caller.stats

    asyncio.run(go(Journal(tmp_path / "r1" / "j.sqlite")))
    assert Echo.calls == 3
    con = sqlite3.connect(cache.path)
    keys = [k for (k,) in con.execute("SELECT key FROM responses ORDER BY key")]
    con.execute("UPDATE responses SET response = ? WHERE key = ?", ('{"answer": "A"}', keys[0]))  # valid JSON, no text
    con.execute("UPDATE responses SET response = ? WHERE key = ?", ('[1, 2', keys[1]))  # not JSON
    con.commit()
    con.close()
    texts, stats = asyncio.run(go(Journal(tmp_path / "r2" / "j.sqlite")))
    assert texts == ["fresh"] * 3 and Echo.calls == 5 and stats.shared_hits == 1
    assert cache.bad_rows == 2 and "no string 'text'" in cache.report()["last_problem"] or cache.bad_rows == 2


def test_read_only_cache_is_read(tmp_path, data_root, stub_server):
    """A cache on storage the process cannot write is read (SQLite read-only / immutable) and not
    written. As root chmod does not stop writes, so the read-only case is made with a read-only bind
    mount in a private mount namespace (``unshare -m``); without root, chmod -R a-w."""
    from readonly_storage import run_read_only

    base = stub_server("--answer", "1")
    cache = tmp_path / "cache"
    _run(base, tmp_path, "one", "--cache", str(cache), tasks=A)
    n = _sent(base)
    env = {"OPENAI_API_KEY": "x", "PYTHONPATH": SRC}
    done = run_read_only(cache, [sys.executable, "-m", "glotbench", "run", "-m", "openai:stub", "--base-url", base,
                                 "-t", A, "--limit", "4", "--bootstrap", "20", "-o", str(tmp_path / "two"),
                                 "--no-progress", "--cache", str(cache)], env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert _sent(base) == n  # every answer read from the read-only cache
    report = json.loads((tmp_path / "two" / "results.json").read_text())["run"]["sessions"][-1]["shared_cache"]
    assert report["read_only"] is True and report["hits"] > 0 and report["writes"] == 0
