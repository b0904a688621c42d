"""Finding 4: a huge response body and a huge dataset record are refused with one clear line,
while memory stays flat (each is read in bounded pieces). Peak RSS is read from a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap


def _peak_rss_mb(code: str, env: dict | None = None) -> tuple[float, str]:
    """Run ``code`` in a fresh interpreter; return (peak RSS in MB, its stdout)."""
    # VmHWM, not ru_maxrss: the latter survives exec and would count the parent's memory at fork
    wrapper = code + textwrap.dedent("""
        hwm = next(x for x in open("/proc/self/status") if x.startswith("VmHWM"))
        print("PEAK", int(hwm.split()[1]) / 1024)
    """)
    done = subprocess.run([sys.executable, "-c", wrapper], capture_output=True, text=True, timeout=300,
                          env={**os.environ, **(env or {}), "PYTHONPATH": os.pathsep.join(sys.path)})
    assert done.returncode == 0, done.stderr
    peak = float(next(x for x in done.stdout.splitlines() if x.startswith("PEAK")).split()[1])
    return peak, done.stdout


def test_huge_response_is_refused_with_flat_memory(stub_server):
    base = stub_server("--bad", "huge", "--huge-mb", "300")
    code = textwrap.dedent(f"""
        import asyncio
        from glotbench.models.base import GenRequest
        from glotbench.models.openai_compat import OpenAICompatModel
        from glotbench.errors import PermanentModelError
        m = OpenAICompatModel("stub", base_url={base!r}, api_key_env="NO_SUCH_KEY_X", timeout=60,
                              max_response_bytes=4 << 20)
        async def go():
            try:
                await m.generate(GenRequest(prompt="x"))
            except PermanentModelError as e:
                print("ERR", e)
            finally:
                await m.aclose()
        asyncio.run(go())
    """)
    peak, out = _peak_rss_mb(code)
    err = next(x for x in out.splitlines() if x.startswith("ERR"))
    assert "over the 4194304-byte response cap" in err or "exceeded the 4194304-byte response cap" in err
    assert peak < 250, f"peak RSS {peak:.0f} MB for a 300 MB body"  # the whole body alone would be 300 MB


def test_huge_response_in_a_run_is_an_item_error(stub_server, data_root, tmp_path):
    from glotbench.engine.config import RunConfig
    from glotbench.engine.session import run_evaluation

    base = stub_server("--bad", "huge", "--huge-mb", "8", "--bad-every", "4")
    cfg = RunConfig(model="openai:stub", base_url=base, tasks=["mm_eval.semantics"], limit=8, concurrency=2,
                    model_args={"max_response_bytes": 1 << 20}, output=str(tmp_path / "run"), bootstrap=20)
    results, _ = run_evaluation(cfg, show_progress=False)
    t = results["tasks"]["mm_eval.semantics"]
    assert (t["n_scored"], t["n_errors"]) == (6, 2)
    assert all("response cap" in e["error"] for e in results["errors"])


def test_huge_dataset_line_is_refused_with_flat_memory(tmp_path):
    path = tmp_path / "big.jsonl"
    with path.open("w") as fh:
        fh.write(json.dumps({"id": 1, "q": "ok"}) + "\n")
        fh.write('{"id": 2, "q": "')  # one 300 MB line, written in pieces
        for _ in range(300):
            fh.write("x" * (1 << 20))
        fh.write('"}\n')
    code = textwrap.dedent(f"""
        from pathlib import Path
        from glotbench.data.loaders import read_records
        from glotbench.errors import DataError
        try:
            read_records(Path({str(path)!r}), "jsonl")
        except DataError as e:
            print("ERR", e)
    """)
    peak, out = _peak_rss_mb(code, {"GLOTBENCH_MAX_RECORD_BYTES": str(1 << 20)})
    err = next(x for x in out.splitlines() if x.startswith("ERR"))
    assert f"{path}: line 2: record larger than the 1048576-byte cap" in err
    assert peak < 150, f"peak RSS {peak:.0f} MB reading a 300 MB line"


def test_a_gzip_body_is_capped_after_decompression():
    """A compressed body's Content-Length is its size before decompression: the cap counts what
    comes out (here 8 MB out of a 8 KB body), not what the header declares."""
    import asyncio
    import gzip

    from aiohttp import web

    from glotbench.errors import PermanentModelError
    from glotbench.models.base import GenRequest
    from glotbench.models.openai_compat import OpenAICompatModel

    inner = b'{"choices": [{"message": {"content": "' + b"A" * (8 << 20) + b'"}}]}'
    body = gzip.compress(inner)

    async def handler(request):
        return web.Response(body=body, headers={"Content-Encoding": "gzip", "Content-Type": "application/json"})

    async def go():
        app = web.Application()
        app.router.add_post("/v1/chat/completions", handler)
        app.router.add_post("/v1/completions", handler)
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]
        m = OpenAICompatModel("stub", base_url=f"http://127.0.0.1:{port}/v1", api_key_env="NO_SUCH_KEY_X",
                              timeout=30, max_response_bytes=1 << 20)
        try:
            await m.generate(GenRequest(prompt="x"))
        except PermanentModelError as e:
            return str(e)
        finally:
            await m.aclose()
            await runner.cleanup()
        return "no error"

    assert len(body) < 1 << 20
    assert "exceeded the 1048576-byte response cap" in asyncio.run(go())
