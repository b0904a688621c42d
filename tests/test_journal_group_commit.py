"""Journal rows wait in one queue: outside an event loop every write is committed at once; in a run's
loop the rows of one iteration are committed together at the loop's next iteration (group commit).

A real SQLite journal, a real SIGKILL of a real process: what was written outside a loop is on disk;
inside a loop only the last iteration's rows can be lost (those answers' requests were in flight, and
a rerun sends them again), exactly as docs/footguns.md says.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

from glotbench.engine.journal import Journal

SRC = str(Path(__file__).resolve().parents[1] / "src")


def _rows(db: Path, table: str) -> int:
    con = sqlite3.connect(db)
    try:
        return con.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
    finally:
        con.close()


def _run_until_killed(db: Path, body: str) -> None:
    """Run ``body`` in a fresh process with a journal at ``db`` and ``answer(i)`` (an answer and its
    sample row); it must end by SIGKILLing itself."""
    script = textwrap.dedent(f"""
        import asyncio, os, signal, sys
        sys.path.insert(0, {SRC!r})
        from glotbench.engine.journal import Journal
        j = Journal({str(db)!r})
        def answer(i):
            j.put_response(f"k{{i}}", role="model", kind="generate", model_id="m", request={{"i": i}},
                           response={{"text": "A"}}, latency_s=0.0)
            j.put_sample("rk", "t", f"s{{i}}", i, "scored", {{"pred": "A"}})
    """) + textwrap.dedent(body)
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert p.returncode == -signal.SIGKILL, p.stderr


def _answer(j: Journal, key: str) -> None:
    j.put_response(key, role="model", kind="generate", model_id="m", request={"prompt": key},
                   response={"text": "A"}, latency_s=0.0)


def test_outside_a_loop_every_row_is_committed_at_once(tmp_path):
    db = tmp_path / "journal.sqlite"
    j = Journal(db)
    j.put_sample("rk", "t", "s1", 0, "scored", {"pred": "A"})
    j.put_judgment("judge", "t", "s1", 0, {"grade": "A"})
    assert (_rows(db, "samples"), _rows(db, "judgments")) == (1, 1)
    _answer(j, "k1")
    assert _rows(db, "responses") == 1 and j.pending == 0
    j.put_sample("rk", "t", "s3", 2, "error", {"error": "x"})
    assert [r["sample_id"] for r in j.iter_samples("rk", "t")] == ["s1", "s3"]
    j.close()


def test_sigkill_outside_a_loop_keeps_every_row(tmp_path):
    db = tmp_path / "journal.sqlite"
    _run_until_killed(db, """
        for i in range(50):
            answer(i)
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    assert _rows(db, "responses") == 50 and _rows(db, "samples") == 50


def test_disk_failure_keeps_the_rows_in_order_and_writes_them_later(tmp_path):
    db = tmp_path / "journal.sqlite"
    j = Journal(db)
    _answer(j, "k0")
    pages = j.conn.execute("PRAGMA page_count").fetchone()[0]
    j.conn.execute(f"PRAGMA max_page_count={pages}")  # the file may not grow: the next writes fail
    big = {"pad": "x" * 20000}
    j.put_sample("rk", "t", "s1", 0, "scored", big)
    _answer(j, "k1" * 3000)
    assert j.write_error and j.pending == 2 and j.held_answers == 1  # the sample row first, then the answer
    assert j.get_response("k1" * 3000) == {"text": "A"}  # served from memory meanwhile
    assert "k1" * 3000 in j.cached_keys()
    j.put_sample("rk", "t", "s2", 1, "scored", {"pred": "B"})
    assert j.pending == 3
    j._conn.execute("PRAGMA max_page_count=1000000")
    assert j.flush() and j.pending == 0 and j.held_answers == 0 and j.write_error is None
    assert _rows(db, "responses") == 2 and j.scored_ids("rk", "t") == {"s1", "s2"}
    j.close()


def test_answers_in_one_loop_iteration_are_committed_together_at_the_next(tmp_path):
    """Group commit: inside an event loop, answers wait for the loop's next iteration and go in one
    transaction; meanwhile they are served from memory (a duplicate request is not sent again)."""
    import asyncio

    db = tmp_path / "journal.sqlite"
    j = Journal(db)

    async def go():
        for i in range(5):
            _answer(j, f"k{i}")
            j.put_sample("rk", "t", f"s{i}", i, "scored", {"pred": "A"})
        assert _rows(db, "responses") == 0 and _rows(db, "samples") == 0  # nothing committed yet
        assert j.get_response("k3") == {"text": "A"} and "k4" in j.cached_keys()  # served from memory
        await asyncio.sleep(0)  # the loop's next iteration
        assert (_rows(db, "responses"), _rows(db, "samples")) == (5, 5)
        assert j.held_answers == 0  # committed: read from the database again
        assert j.get_response("k3") == {"text": "A"}
        _answer(j, "k5")
        assert j.count_responses(since=0, role="model") == 6  # a read writes what waits first

    asyncio.run(go())
    asyncio.run(_second_loop(j, db))
    j.close()


async def _second_loop(j: Journal, db: Path) -> None:
    """A later loop in the same process (a rerun, a rejudge) gets its own group commits."""
    import asyncio

    _answer(j, "later")
    await asyncio.sleep(0)
    assert _rows(db, "responses") == 7


def test_sigkill_in_a_loop_loses_only_the_answers_of_that_iteration(tmp_path):
    db = tmp_path / "journal.sqlite"
    _run_until_killed(db, """
        async def main():
            for i in range(30):
                answer(i)
                if i in (9, 19):
                    await asyncio.sleep(0)  # answers 0-29 arrive in three iterations of ten; killed in the third
            os.kill(os.getpid(), signal.SIGKILL)
        asyncio.run(main())
    """)
    assert _rows(db, "responses") == 20 and _rows(db, "samples") == 20  # the last iteration's ten were in flight


def test_one_group_commit_writes_each_statement_in_its_order(tmp_path):
    """A tick's rows are written one statement at a time (answers, samples, judgments interleave as
    items finish): within a statement the order is kept, so a sample rewritten in the same tick
    keeps its last record, and every row of every table is there after the commit."""
    import asyncio

    db = tmp_path / "journal.sqlite"
    j = Journal(db)

    async def tick() -> None:
        for i in range(5):
            _answer(j, f"k{i}")
            j.put_sample("rk", "t", "s", i, "scored", {"pred": f"v{i}"})  # the same sample, rewritten
            j.put_judgment("judge", "t", f"s{i}", 0, {"grade": "A", "i": i})
            j.put_sample("rk", "t", f"s{i}", i, "scored", {"pred": "A"})
        await j.committed()

    asyncio.run(tick())
    con = sqlite3.connect(db)
    try:
        assert con.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 5
        assert con.execute("SELECT COUNT(*) FROM judgments").fetchone()[0] == 5
        assert con.execute("SELECT idx, record FROM samples WHERE sample_id='s'").fetchone() == (4, '{"pred":"v4"}')
        assert con.execute("SELECT COUNT(*) FROM samples").fetchone()[0] == 6
    finally:
        con.close()
        j.close()
