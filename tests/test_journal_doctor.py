"""Finding 6: a corrupt journal is one line naming `glotbench doctor RUN`; a 0-byte journal is
corrupt, not empty; `glotbench doctor` salvages a truncated journal and the rerun sends only what
was lost; after a disk-full write failure the answers held in memory are written, not re-sent."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
import time

import httpx
import pytest

from glotbench.engine.config import RunConfig
from glotbench.engine.journal import Journal
from glotbench.engine.session import run_evaluation
from glotbench.errors import JournalCorrupt


def _cmd(base, out, n=60):
    return [sys.executable, "-m", "glotbench", "run", "--model", "openai:stub", "--base-url", base,
            "--tasks", "mm_eval.semantics", "--limit", str(n), "--concurrency", "4", "--output", str(out), "--no-progress"]


ENV = {**os.environ, "OPENAI_API_KEY": "x"}


def _log(base):
    return httpx.get(base.replace("/v1", "/_log")).json()["log"]


def _checkpoint(db):
    con = sqlite3.connect(db)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()


def test_zero_byte_journal_is_corrupt_not_empty(stub_server, data_root, tmp_path):
    base = stub_server()
    out = tmp_path / "run"
    out.mkdir()
    (out / "journal.sqlite").write_bytes(b"")
    done = subprocess.run(_cmd(base, out), env=ENV, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    lines = [x for x in done.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and "0-byte file" in lines[0] and f"glotbench runs doctor {out}" in lines[0]
    assert _log(base) == []  # nothing re-sent
    doc = subprocess.run([sys.executable, "-m", "glotbench", "runs", "doctor", str(out)], capture_output=True, text=True,
                         timeout=60)
    assert doc.returncode == 0 and "0-byte file" in doc.stdout and "nothing was readable" in doc.stdout
    assert Journal(out / "journal.sqlite").cached_keys() == set()  # a fresh, healthy journal


def test_garbage_journal_is_one_line_with_the_recovery_command(tmp_path):
    db = tmp_path / "journal.sqlite"
    db.write_bytes(b"this is not a database" * 100)
    with pytest.raises(JournalCorrupt, match=f"glotbench runs doctor {tmp_path}"):
        Journal(db)


def test_doctor_salvages_a_truncated_journal_and_rerun_sends_only_the_lost(stub_server, data_root, tmp_path):
    base = stub_server("--answer", "B")
    out = tmp_path / "run"
    first = subprocess.run(_cmd(base, out), env=ENV, capture_output=True, text=True, timeout=180)
    assert first.returncode == 0, first.stderr
    db = out / "journal.sqlite"
    _checkpoint(db)
    size = db.stat().st_size
    with db.open("r+b") as fh:  # cut the file at 60%: the tail pages are gone
        fh.truncate(int(size * 0.6) // 4096 * 4096)

    again = subprocess.run(_cmd(base, out), env=ENV, capture_output=True, text=True, timeout=120)
    assert again.returncode == 2 and "Traceback" not in again.stderr, again.stderr
    assert f"glotbench runs doctor {out}" in again.stderr and len(again.stderr.strip().splitlines()) == 1

    doc = subprocess.run([sys.executable, "-m", "glotbench", "runs", "doctor", str(out)], capture_output=True, text=True,
                         timeout=120)
    assert doc.returncode == 0, doc.stderr
    assert "responses:" in doc.stdout and "salvaged" in doc.stdout and "kept as" in doc.stdout
    kept = [p for p in out.iterdir() if ".corrupt-" in p.name and not p.name.endswith(("-wal", "-shm"))]
    assert len(kept) == 1
    con = sqlite3.connect(db)
    n_salvaged = con.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
    n_scored = con.execute("SELECT COUNT(*) FROM samples WHERE status='scored'").fetchone()[0]
    # an item is done if its scored row survived, or its answer did (then it is rescored, not re-sent)
    answered = {r[0] for r in con.execute("SELECT key FROM responses")}
    scored_keys = {k for (rec,) in con.execute("SELECT record FROM samples WHERE status='scored'")
                   for k in json.loads(rec)["request_keys"]}
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    con.close()
    assert 0 < n_salvaged < 60 and 0 < n_scored < 60
    ok = subprocess.run([sys.executable, "-m", "glotbench", "runs", "doctor", str(out)], capture_output=True, text=True,
                        timeout=60)
    assert ok.returncode == 0 and "ok" in ok.stdout

    n_log = len(_log(base))
    resumed = subprocess.run(_cmd(base, out), env=ENV, capture_output=True, text=True, timeout=180)
    assert resumed.returncode == 0, resumed.stderr
    resent = _log(base)[n_log:]
    assert len(resent) == 60 - len(answered | scored_keys)  # only what the damage cost
    t = json.loads((out / "results.json").read_text())["tasks"]["mm_eval.semantics"]
    assert t["n_scored"] == 60


def test_disk_full_answers_are_written_from_memory_not_resent(stub_server, data_root, tmp_path):
    """SQLite's own disk-full (max_page_count reached) hits mid-run; space frees up a moment
    later; the answers that arrived meanwhile are written from memory and never sent again."""
    base = stub_server("--delay", "0.02")
    out = tmp_path / "run"
    cfg = RunConfig(model="openai:stub", base_url=base, tasks=["mm_eval.semantics"], limit=200, concurrency=4,
                    output=str(out), bootstrap=20, journal_flush_wait=30)
    real_init = Journal.__init__
    holder = {}

    def init(self, path):
        real_init(self, path)
        pages = self.conn.execute("PRAGMA page_count").fetchone()[0]
        self.conn.execute(f"PRAGMA max_page_count={pages + 8}")  # full after a few dozen rows
        holder["j"] = self

    def free_space_later():
        while "j" not in holder or holder["j"].write_error is None:
            time.sleep(0.01)
        time.sleep(1.0)
        holder["j"].conn.execute("PRAGMA max_page_count=1000000")

    Journal.__init__ = init
    t = threading.Thread(target=free_space_later, daemon=True)
    t.start()
    try:
        from glotbench.errors import RunStopped

        with pytest.raises(RunStopped, match="cannot write the journal"):
            run_evaluation(cfg, show_progress=False)
    finally:
        Journal.__init__ = real_init
    t.join(5)
    sent_first = {e["hash"] for e in _log(base)}
    con = sqlite3.connect(out / "journal.sqlite")
    n_written = con.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
    con.close()
    assert 0 < len(sent_first) < 200
    assert n_written == len(sent_first), "every answer that arrived is on disk"

    n_log = len(_log(base))
    results, _ = run_evaluation(cfg, show_progress=False)
    resent = _log(base)[n_log:]
    assert not ({e["hash"] for e in resent} & sent_first), "an answered request was sent again"
    assert results["tasks"]["mm_eval.semantics"]["n_scored"] == 200


def test_disk_full_message_promises_the_resends_the_rerun_makes(stub_server, data_root, tmp_path):
    """issue 42, finding 8: the message promised 31 re-sends (every held write) where the rerun sent
    15 (the held answers). Now it names the answers, and the rerun re-sends exactly those."""
    import re

    from glotbench.errors import RunStopped

    base = stub_server("--delay", "0.02")
    out = tmp_path / "run"
    cfg = RunConfig(model="openai:stub", base_url=base, tasks=["mm_eval.semantics"], limit=120, concurrency=4,
                    output=str(out), bootstrap=20, journal_flush_wait=0.5)
    real_init = Journal.__init__

    def init(self, path):
        real_init(self, path)
        pages = self.conn.execute("PRAGMA page_count").fetchone()[0]
        self.conn.execute(f"PRAGMA max_page_count={pages + 8}")  # full after a few dozen rows, never freed

    Journal.__init__ = init
    try:
        with pytest.raises(RunStopped) as err:
            run_evaluation(cfg, show_progress=False)
    finally:
        Journal.__init__ = real_init
    m = re.search(r"(\d+) request\(s\) are sent again", str(err.value))
    assert m, str(err.value)
    promised = int(m.group(1))
    sent_first = {e["hash"] for e in _log(base)}
    n_log = len(_log(base))
    results, _ = run_evaluation(cfg, show_progress=False)
    again = {e["hash"] for e in _log(base)[n_log:]} & sent_first
    assert promised > 0 and len(again) == promised, (promised, len(again))
    assert results["tasks"]["mm_eval.semantics"]["n_scored"] == 120
