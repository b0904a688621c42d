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
