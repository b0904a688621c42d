"""WAL checkpoints of a run journal, on a thread of their own.

SQLite copies its write-ahead log into the database file (a checkpoint) whenever the log passes
1,000 pages, inside whichever commit crossed the line; with ``synchronous=NORMAL`` that commit then
waits on two fsyncs. A run commits from its event loop, so every request and answer in flight
waited too: in a 2,000-item judged run (16 MB of rows) those waits were about 0.1 s of the
journal's 0.3 s. Here the journal's own connection never checkpoints
(``wal_autocheckpoint=0``); after a commit that brings the rows written since the last checkpoint
past :data:`CHECKPOINT_CHARS` characters, :meth:`Checkpointer.request` wakes a thread that runs a PASSIVE
checkpoint through a second connection (SQLite lets a checkpoint and a writer run at once, and
releases the GIL while it works). Closing the journal stops the thread first, then the journal's
last close checkpoints what is left, as before.

A failed checkpoint (disk full, a reader holding the log) changes nothing that was committed: the
log keeps the rows, and the next request or the close tries again.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

CHECKPOINT_CHARS = 4 << 20  # characters of rows (4-12 MB of UTF-8): about SQLite's 1,000 pages of 4 KB


class Checkpointer:
    def __init__(self, path: Path):
        self.path = Path(path)
        self.written = 0  # characters of rows committed since the last request
        self.checkpoints = 0  # checkpoints run (tests)
        self.last_error: str | None = None
        self._wake = threading.Event()
        self._idle = threading.Event()
        self._idle.set()
        self._stopping = False
        self._thread: threading.Thread | None = None

    def committed(self, nchars: int) -> None:
        """Count rows just committed; past the threshold, wake the thread."""
        self.written += nchars
        if self.written >= CHECKPOINT_CHARS:
            self.written = 0
            self.request()

    def request(self) -> None:
        if self._stopping:
            return
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name=f"glotbench-checkpoint-{self.path.name}", daemon=True)
            self._thread.start()
        self._idle.clear()
        self._wake.set()

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Until no requested checkpoint is left to run (tests)."""
        return self._idle.wait(timeout)

    def _loop(self) -> None:
        conn = None
        try:
            conn = sqlite3.connect(str(self.path), isolation_level=None, check_same_thread=False, timeout=1.0)
            while True:
                self._wake.wait()
                self._wake.clear()
                if self._stopping:
                    return
                try:
                    conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
                    self.checkpoints += 1
                    self.last_error = None
                except sqlite3.Error as err:  # the rows stay in the log; the next try or the close copies them
                    self.last_error = str(err)
                if not self._wake.is_set():
                    self._idle.set()
        except sqlite3.Error as err:
            self.last_error = str(err)
        finally:
            self._idle.set()
            if conn is not None:
                conn.close()

    def stop(self) -> None:
        """Stop the thread (after the checkpoint it is running, if any)."""
        self._stopping = True
        self._wake.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
