"""Opening a SQLite file this process may not write: an archived run, a shared read-only cache.

``writable(path)`` asks the operating system (``os.access`` for the file and its folder: SQLite's
WAL needs the folder for its ``-wal`` and ``-shm`` files). A read-only mount answers no even to
root; plain ``chmod a-w`` does not stop root, who then opens the file as usual.
``open_read_only(path)`` tries ``mode=ro`` (works while the WAL's files exist or can be made), then
``immutable=1`` (the file as it is on disk, no locks: right for storage nobody writes).
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path


def writable(path: Path) -> bool:
    path = Path(path)
    if not os.access(path.parent, os.W_OK):
        return False
    return not path.exists() or os.access(path, os.W_OK)


def is_read_only_error(err: BaseException) -> bool:
    text = str(err).lower().replace(" ", "").replace("-", "")
    return "readonly" in text or "unabletoopen" in text


def open_read_only(path: Path, timeout: float = 5.0) -> sqlite3.Connection:
    """A connection that reads ``path`` and never writes it (raises sqlite3.DatabaseError)."""
    last: sqlite3.DatabaseError | None = None
    for query in ("mode=ro", "immutable=1"):
        try:
            conn = sqlite3.connect(f"{Path(path).resolve().as_uri()}?{query}", uri=True, isolation_level=None,
                                   check_same_thread=False, timeout=timeout)
        except sqlite3.DatabaseError as err:
            last = err
            continue
        try:
            conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
            return conn
        except sqlite3.DatabaseError as err:
            conn.close()
            last = err
    assert last is not None
    raise last
