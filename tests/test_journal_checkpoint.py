"""The journal's WAL checkpoints run on their own thread: the journal's connection never checkpoints
inside a commit, the log is still copied into the database while a run writes, nothing committed is
lost (also while a reader pins the log), and closing leaves no thread and no log behind."""

from __future__ import annotations

import asyncio
import sqlite3
import threading

import glotbench.engine.journal_checkpoint as jc
from glotbench.engine.journal import Journal


async def _answer_many(j: Journal, n: int, size: int, start: int = 0) -> None:
    for i in range(start, start + n):
        j.put_response(f"k{i}", role="judge:x", kind="generate", model_id="m", request={"messages": ["x" * size]},
                       response={"text": str(i)}, latency_s=0.0)
        await asyncio.sleep(0)  # the group commit of this iteration runs
    await asyncio.sleep(0)


def _rows_in_database_file(db, tmp_path, table: str = "responses") -> int:
    """Rows of ``table`` in the database file alone (a copy without its -wal): what checkpoints copied."""
    copy = tmp_path / "file-only.db"
    copy.write_bytes(db.read_bytes())
    con = sqlite3.connect(copy)
    try:
        return con.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
    except sqlite3.OperationalError:  # no table yet: the schema is still in the log
        return 0
    finally:
        con.close()
        copy.unlink()


def test_commits_never_checkpoint_and_the_thread_does(tmp_path, monkeypatch):
    monkeypatch.setattr(jc, "CHECKPOINT_CHARS", 50_000)
    db = tmp_path / "journal.db"
    j = Journal(db)
    assert j._conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0
    # ~200k characters per half: ~4 requests at 50k each. Requests made while the thread is busy
    # coalesce into one checkpoint (how many is timing), so each half waits for the thread to be idle.
    asyncio.run(_answer_many(j, 100, 2_000))
    assert j.checkpointer.wait_idle(10)
    first = j.checkpointer.checkpoints
    assert first >= 1 and _rows_in_database_file(db, tmp_path) >= 75  # copied while the journal is open
    asyncio.run(_answer_many(j, 100, 2_000, start=100))
    assert j.checkpointer.wait_idle(10)
    assert j.checkpointer.checkpoints > first, (first, j.checkpointer.checkpoints)
    assert j.checkpointer.last_error is None
    assert _rows_in_database_file(db, tmp_path) >= 175
    thread = j.checkpointer._thread
    assert thread is not None and thread.is_alive() and thread in threading.enumerate()
    j.close()
    assert not thread.is_alive()
    assert not (tmp_path / "journal.db-wal").exists()
    con = sqlite3.connect(db)
    assert con.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 200
    con.close()


def test_a_reader_pinning_the_log_loses_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(jc, "CHECKPOINT_CHARS", 20_000)
    db = tmp_path / "journal.db"
    j = Journal(db)
    asyncio.run(_answer_many(j, 20, 2_000))
    reader = sqlite3.connect(db, isolation_level=None)
    reader.execute("BEGIN")
    assert reader.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 20  # a snapshot held open
    asyncio.run(_answer_many(j, 100, 2_000))  # checkpoints run, but cannot pass the reader's snapshot
    assert j.checkpointer.wait_idle(10)
    assert reader.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 20
    reader.execute("COMMIT")
    reader.close()
    j.checkpoint_now()
    assert j.checkpointer.wait_idle(10)
    assert _rows_in_database_file(db, tmp_path) == 100  # once the reader is gone, the whole log goes in
    j.close()
    con = sqlite3.connect(db)
    assert con.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 100  # keys k0..k99, the first 20 replaced
    con.close()


def test_small_journals_start_no_thread(tmp_path):
    j = Journal(tmp_path / "journal.db")
    asyncio.run(_answer_many(j, 5, 100))
    assert j.checkpointer.checkpoints == 0 and j.checkpointer._thread is None
    j.close()
    assert not (tmp_path / "journal.db-wal").exists()


def test_checkpoint_now_copies_the_whole_log(tmp_path):
    db = tmp_path / "journal.db"
    j = Journal(db)
    asyncio.run(_answer_many(j, 30, 1_000))  # far below the threshold: nothing copied yet
    j.put_sample("rk", "t", "s1", 0, "scored", {"pred": "A"})  # a deferred row goes in first
    assert _rows_in_database_file(db, tmp_path) == 0
    j.checkpoint_now()
    assert j.checkpointer.wait_idle(10) and j.checkpointer.checkpoints == 1
    assert _rows_in_database_file(db, tmp_path) == 30
    assert _rows_in_database_file(db, tmp_path, "samples") == 1
    j.close()
