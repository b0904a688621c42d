"""Counting a run journal's answered requests from a test while (or after) a process writes it."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def count_responses(db: Path) -> int:
    """Rows in the journal's ``responses`` table; 0 while the file or the table does not exist yet."""
    if not Path(db).exists():
        return 0
    con = sqlite3.connect(db, timeout=5)
    try:
        return con.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
    except sqlite3.OperationalError:
        return 0
    finally:
        con.close()


def stored_rows(db: Path) -> dict[str, list[tuple]]:
    """What a finished run's journal holds, in a fixed order, for comparing two runs row for row:
    every response (checksum included), every sample record and every error."""
    con = sqlite3.connect(db)
    try:
        return {
            "responses": con.execute("SELECT key, role, kind, model_id, request, response, sum FROM responses "
                                     "ORDER BY key").fetchall(),
            "samples": con.execute("SELECT run_key, task, sample_id, idx, status, record, sum FROM samples "
                                   "ORDER BY task, idx").fetchall(),
            "errors": con.execute("SELECT key, error FROM errors ORDER BY id").fetchall(),
        }
    finally:
        con.close()
