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
