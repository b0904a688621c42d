"""glotbench.evaluate() called from a host program leaves the host's garbage collector as it is, also
while the run works (only the `glotbench run` process paces its own collections: docs/performance.md)."""

from __future__ import annotations

import gc

import pytest


def test_evaluate_leaves_the_host_gc_alone(stub_server, data_root, tmp_path, monkeypatch):
    import glotbench
    from glotbench.engine import session

    monkeypatch.setenv("OPENAI_API_KEY", "x")
    base = stub_server("--answer", "A")
    seen = []
    original = session.execute

    async def spy(*args, **kwargs):
        seen.append((gc.get_threshold(), gc.get_freeze_count(), gc.isenabled()))
        return await original(*args, **kwargs)

    monkeypatch.setattr(session, "execute", spy)
    host = (gc.get_threshold(), gc.get_freeze_count(), gc.isenabled())
    if host[1]:
        pytest.skip("this test process froze objects itself")
    res = glotbench.evaluate(model="openai:stub", tasks=["mm_eval.syntax"], limit=3, base_url=base, bootstrap=20,
                             output=str(tmp_path / "run"))
    assert res.tasks["mm_eval.syntax"].n_items == 3
    assert seen == [host]  # during the run
    assert (gc.get_threshold(), gc.get_freeze_count(), gc.isenabled()) == host  # and after


def test_the_cli_run_paces_its_own_collections(stub_server, data_root, tmp_path):
    """`glotbench run` (a process of its own) freezes what is alive at the start and raises the young
    threshold: a tenth of a run's CPU went to collections otherwise (bench/scale.py)."""
    import os
    import subprocess
    import sys
    import textwrap
    from pathlib import Path

    base = stub_server("--answer", "A")
    script = textwrap.dedent("""
        import gc, sys
        from glotbench.engine import session
        original = session.execute
        async def spy(*a, **k):
            print("GC", gc.get_threshold()[0], gc.get_freeze_count() > 0, file=sys.stderr)
            return await original(*a, **k)
        session.execute = spy
        sys.argv = ["glotbench"] + sys.argv[1:]
        from glotbench.cli import main
        main()
    """)
    src = str(Path(__file__).resolve().parents[1] / "src")
    r = subprocess.run([sys.executable, "-c", script, "run", "-m", "openai:stub", "--base-url", base, "-t", "mm_eval.syntax",
                        "--limit", "2", "--bootstrap", "20", "-o", str(tmp_path / "run"), "--no-progress"],
                       capture_output=True, text=True, timeout=300,
                       env={**os.environ, "PYTHONPATH": src, "OPENAI_API_KEY": "x"})
    assert r.returncode == 0, r.stderr[-2000:]
    assert "GC 10000 True" in r.stderr
