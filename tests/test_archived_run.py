"""issue 48: a healthy finished run on read-only storage (an archive) is read by `export` (every
format), `report`, `compare` and a rerun of its `run` command, without "the journal is corrupt".

Read-only storage is a real read-only bind mount in a private mount namespace (tests/readonly_storage.py:
as root, chmod does not stop writes); without unshare, chmod -R a-w as a non-root user."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from readonly_storage import run_read_only

TASK = "mm_eval.semantics"
ENV = {"OPENAI_API_KEY": "x"}


def _run_cmd(base, out, n=8):
    return [sys.executable, "-m", "glotbench", "run", "--model", "openai:stub", "--base-url", base, "--tasks", TASK,
            "--limit", str(n), "--output", str(out), "--no-progress", "--bootstrap", "20"]


def _gb(*args):
    return [sys.executable, "-m", "glotbench", *map(str, args)]


def test_archived_run_is_exported_reported_compared_and_rerun(stub_server, data_root, tmp_path):
    base = stub_server("--answer", "B")
    arch = tmp_path / "archive"
    runs = [arch / "a", arch / "b"]
    for r in runs:
        done = subprocess.run(_run_cmd(base, r), env={**os.environ, **ENV}, capture_output=True, text=True, timeout=180)
        assert done.returncode == 0, done.stderr[-2000:]
    before = {p: p.read_bytes() for p in runs[0].rglob("*") if p.is_file()}
    out = tmp_path / "out"
    out.mkdir()
    checks = {
        "export samples": _gb("runs", "export", runs[0], "-o", out / "s.jsonl"),
        "export csv": _gb("runs", "export", runs[0], "-f", "csv", "-o", out / "s.csv"),
        "export lm-eval": _gb("runs", "export", runs[0], "-f", "lm-eval", "-o", out / "lmeval"),
        "report": _gb("runs", "report", *runs, "-o", out / "r.html"),
        "compare": _gb("runs", "compare", "--paired", *runs),
        "run again": _run_cmd(base, runs[0]),
    }
    for what, argv in checks.items():
        done = run_read_only(arch, argv, env=ENV, cwd=tmp_path)
        assert done.returncode == 0, (what, done.stdout[-1000:], done.stderr[-2000:])
        assert "corrupt" not in done.stderr and "Traceback" not in done.stderr, (what, done.stderr[-2000:])
        if what == "run again":
            assert "nothing was written" in done.stderr, done.stderr[-2000:]
    assert len((out / "s.jsonl").read_text().splitlines()) == 8
    assert (out / "s.csv").is_file() and (out / "r.html").is_file()
    assert {p: p.read_bytes() for p in runs[0].rglob("*") if p.is_file()} == before  # nothing written
    # an unfinished run on read-only storage: one line, nothing sent
    more = run_read_only(arch, _run_cmd(base, runs[0], n=12), env=ENV, cwd=tmp_path)
    assert more.returncode != 0 and "cannot write" in more.stderr and "Traceback" not in more.stderr, more.stderr
    assert len(more.stderr.strip().splitlines()) <= 3, more.stderr
    # doctor checks an archived journal where it is
    doc = run_read_only(arch, _gb("runs", "doctor", runs[0], "--check"), env=ENV, cwd=tmp_path)
    assert doc.returncode == 0 and "ok" in doc.stdout, doc.stdout + doc.stderr


def test_read_only_journal_opens_with_a_read_only_uri(tmp_path):
    """The fallback itself: a WAL journal in a folder that cannot hold the WAL's files opens with
    ``mode=ro`` or ``immutable=1``; writes are dropped and counted, reads work."""
    from glotbench.engine import sqlite_ro
    from glotbench.engine.journal import Journal

    j = Journal(tmp_path / "journal.sqlite")
    j.put_response("k", role="model", kind="generate", model_id="m", request={}, response={"text": "A"}, latency_s=0.1)
    j.close()
    orig = sqlite_ro.writable
    try:
        import glotbench.engine.journal as jmod

        jmod.writable = lambda path: False  # what os.access says on read-only storage
        ro = Journal(tmp_path / "journal.sqlite")
        assert ro.read_only and ro.get_response("k") == {"text": "A"}
        ro.set_meta("x", 1)
        assert ro.dropped_writes == 1 and ro.get_meta("x") is None
        ro.close()
    finally:
        jmod.writable = orig
