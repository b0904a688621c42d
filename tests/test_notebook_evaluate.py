"""`glotbench.evaluate()` in a real Jupyter kernel (ipykernel, driven by nbclient): a cell runs inside the
kernel's running event loop, where `asyncio.run()` fails; `evaluate()` still runs, and a cell can
`await glotbench.evaluate_async(...)`. Also: `evaluate()` called from a coroutine in a plain process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SRC = str(Path(__file__).resolve().parents[1] / "src")


def _cells(base: str) -> list[str]:
    kw = dict(model="openai:stub", tasks=["mm_eval.syntax"], limit=4, base_url=base, bootstrap=20, max_retries=0)
    return [
        # the kernel runs cells in a running event loop: asyncio.run() is refused there
        textwrap.dedent("""
            import asyncio, json
            asyncio.get_running_loop()
            coro = asyncio.sleep(0)
            try:
                asyncio.run(coro)
                refused = False
            except RuntimeError as err:
                refused = "running event loop" in str(err)
                coro.close()
            print("REFUSED", refused)
        """),
        textwrap.dedent(f"""
            import glotbench
            res = glotbench.evaluate(**{kw!r}, output="run_sync")
            t = res.tasks["mm_eval.syntax"]
            print("SYNC", json.dumps({{"n": t.n_items, "acc": t.metrics["accuracy"].value, "dir": str(res.output_dir),
                                      "ids": [s.id for s in res.samples]}}))
        """),
        textwrap.dedent(f"""
            res2 = await glotbench.evaluate_async(**{kw!r}, output="run_async")
            print("ASYNC", json.dumps({{"n": res2.tasks["mm_eval.syntax"].n_items,
                                       "acc": res2.tasks["mm_eval.syntax"].metrics["accuracy"].value}}))
        """),
    ]


def _printed(nb, tag: str) -> str:
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            for line in (out.get("text") or "").splitlines():
                if line.startswith(tag + " "):
                    return line[len(tag) + 1:]
    raise AssertionError(f"no {tag} line in the notebook's outputs: {[c.get('outputs') for c in nb.cells]}")


def test_evaluate_in_a_jupyter_kernel(stub_server, data_root, tmp_path, monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    base = stub_server("--answer", "A")
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    monkeypatch.setenv("PYTHONPATH", SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in _cells(base)])
    # the kernel is ipykernel in this interpreter (a subprocess of its own), its cwd tmp_path
    client = nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    assert _printed(nb, "REFUSED") == "True"
    sync = json.loads(_printed(nb, "SYNC"))
    results = json.loads((tmp_path / "run_sync" / "results.json").read_text())
    task = results["tasks"]["mm_eval.syntax"]
    assert sync["n"] == task["n_items"] == 4
    assert sync["acc"] == task["metrics"]["accuracy"]["value"]
    assert sync["dir"] == "run_sync"
    lines = [json.loads(x) for x in (tmp_path / "run_sync" / "samples.jsonl").read_text().splitlines()]
    assert sync["ids"] == [x["sample_id"] for x in lines]
    # the stub answers A: accuracy is the share of golds that are A, counted here from the samples
    assert sync["acc"] == pytest.approx(sum(x["gold"] == "A" for x in lines) / len(lines))
    asyn = json.loads(_printed(nb, "ASYNC"))
    assert asyn == {"n": 4, "acc": sync["acc"]}
    assert (tmp_path / "run_async" / "results.json").is_file()


SCRIPT = textwrap.dedent("""
    import asyncio, json, sys, threading
    import glotbench
    kw = json.loads(sys.argv[1])

    async def main():
        ticks = 0
        async def tick():
            nonlocal ticks
            while True:
                await asyncio.sleep(0)
                ticks += 1
        ticker = asyncio.create_task(tick())
        res = await glotbench.evaluate_async(**kw, output="a")
        ticker.cancel()
        # a coroutine calling the blocking evaluate(): no 'asyncio.run() cannot be called' error
        res2 = glotbench.evaluate(**kw, output="b")
        return res, res2, ticks

    res, res2, ticks = asyncio.run(main())
    print(json.dumps({"a": res.tasks["mm_eval.syntax"].n_items, "b": res2.tasks["mm_eval.syntax"].n_items,
                      "same": res.tasks["mm_eval.syntax"].metrics == res2.tasks["mm_eval.syntax"].metrics,
                      "loop_served": ticks > 0, "threads": threading.active_count()}))
""")


def test_evaluate_from_a_coroutine_in_a_fresh_process(stub_server, data_root, tmp_path):
    base = stub_server("--answer", "A")
    kw = dict(model="openai:stub", tasks=["mm_eval.syntax"], limit=3, base_url=base, bootstrap=20, max_retries=0)
    r = subprocess.run([sys.executable, "-c", SCRIPT, json.dumps(kw)], cwd=tmp_path, capture_output=True, text=True,
                       timeout=300, env={**os.environ, "OPENAI_API_KEY": "x",
                                         "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")})
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["a"] == out["b"] == 3 and out["same"] is True
    assert out["loop_served"] is True  # the caller's loop kept running while evaluate_async worked


def test_evaluate_settings_are_checked_before_a_thread_starts():
    import asyncio

    import pydantic

    import glotbench

    async def main():
        with pytest.raises(pydantic.ValidationError):
            await glotbench.evaluate_async(model="openai:stub", tasks=["mm_eval.syntax"], no_such_setting=1)
        with pytest.raises(pydantic.ValidationError):
            glotbench.evaluate(model="openai:stub", tasks=["mm_eval.syntax"], no_such_setting=1)

    asyncio.run(main())


def _responses(journal: Path) -> int:
    import sqlite3

    if not journal.is_file():
        return 0
    try:
        db = sqlite3.connect(f"file:{journal}?mode=ro", uri=True, timeout=5)
        try:
            return db.execute("SELECT count(*) FROM responses").fetchone()[0]
        finally:
            db.close()
    except sqlite3.Error:
        return 0


def test_a_kernel_interrupt_stops_the_run_and_the_next_call_resumes(stub_server, data_root, tmp_path, monkeypatch):
    """Interrupting the kernel while `evaluate()` works in its thread: the cell ends in KeyboardInterrupt,
    the run records an interrupted session and unlocks its directory; the same call then resumes it."""
    jupyter_client = pytest.importorskip("jupyter_client")
    pytest.importorskip("ipykernel")
    import time

    base = stub_server("--answer", "A", "--delay", "0.2")
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    monkeypatch.setenv("PYTHONPATH", SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    kw = dict(model="openai:stub", tasks=["mm_eval.syntax"], limit=40, base_url=base, bootstrap=20, max_retries=0,
              concurrency=1, output="run")
    km = jupyter_client.KernelManager(kernel_name="python3")
    km.start_kernel(cwd=str(tmp_path))
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=120)

        def run_cell(code: str, *, interrupt_when=None) -> tuple[dict, str]:
            msg_id = kc.execute(code)
            deadline = time.monotonic() + 240
            if interrupt_when is not None:
                while not interrupt_when():  # a condition on the run's journal, bounded: not a timed test
                    assert time.monotonic() < deadline, "the run never started"
                    time.sleep(0.05)
                km.interrupt_kernel()
            out = []
            while True:
                msg = kc.get_iopub_msg(timeout=240)
                if msg["parent_header"].get("msg_id") != msg_id:
                    continue
                if msg["msg_type"] == "stream":
                    out.append(msg["content"]["text"])
                if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                    break
            reply = kc.get_shell_msg(timeout=240)
            return reply["content"], "".join(out)

        call = f"import glotbench, json\nres = glotbench.evaluate(**{kw!r})\n"
        reply, _ = run_cell(call, interrupt_when=lambda: _responses(tmp_path / "run" / "journal.sqlite") >= 2)
        assert reply["status"] == "error" and reply["ename"] == "KeyboardInterrupt", reply
        reply, out = run_cell(call + "print('N', res.tasks['mm_eval.syntax'].n_items, len(res.samples))")
        assert reply["status"] == "ok", reply
        assert "N 40 40" in out
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    sessions = json.loads((tmp_path / "run" / "results.json").read_text())["run"]["sessions"]
    assert [bool(s.get("interrupted")) for s in sessions] == [True, False]
