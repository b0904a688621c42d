"""The shared response cache: answers reused across run directories (docs/cache.md).

Opt-in: ``--cache DIR`` (or ``GLOTBENCH_CACHE=DIR``; ``default`` is the user cache folder,
``$XDG_CACHE_HOME/glotbench/responses`` or ``~/.cache/glotbench/responses``); ``--no-cache``
bypasses it. It is read before a request is sent and written after an answer arrives, never with
an error (a failed request is not an answer). Entries are content-addressed: the key is the
journal's request key (a hash of the model identity and the full request) combined with the
model's settings, so an answer is only reused for the same model, set up the same way, asked the
same thing. One SQLite file in WAL mode with a busy timeout: two runs sharing a cache may read and
write at once. A hit is copied into the run's own journal, so a run directory stays complete on
its own.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from pathlib import Path

from glotbench import json_codec
from glotbench.errors import GlotbenchError

CACHE_FILE = "responses.sqlite"
ENV = "GLOTBENCH_CACHE"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    response TEXT NOT NULL,
    created REAL NOT NULL
);
"""


def user_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "glotbench" / "responses"


def cache_dir_for(cache: str | None, no_cache: bool = False) -> Path | None:
    """The cache folder a run uses: ``--cache``, else ``GLOTBENCH_CACHE``; None when off."""
    if no_cache:
        return None
    value = cache or os.environ.get(ENV) or None
    if value is None or value.strip().lower() in ("", "0", "off", "false", "no"):
        return None
    if value.strip().lower() in ("default", "1", "on", "true", "yes"):
        return user_cache_dir()
    return Path(value).expanduser()


def _setup(conn: sqlite3.Connection, busy_timeout_s: float) -> None:
    """WAL mode and the schema. Two processes creating the cache at once: switching the journal mode
    answers "database is locked" at once, without SQLite's busy wait, so it is retried here."""
    import time

    deadline = time.monotonic() + busy_timeout_s
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.executescript(_SCHEMA)
            return
        except sqlite3.OperationalError as err:
            if "locked" not in str(err) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


class ResponseCache:
    """A content-addressed store of answers, shared by run directories (and processes)."""

    def __init__(self, folder: Path, *, busy_timeout_s: float = 60.0):
        self.folder = Path(folder)
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            self.path = self.folder / CACHE_FILE
            self._conn = sqlite3.connect(str(self.path), isolation_level=None, check_same_thread=False,
                                         timeout=busy_timeout_s)
            self._conn.execute(f"PRAGMA busy_timeout={int(busy_timeout_s * 1000)}")
            _setup(self._conn, busy_timeout_s)
        except (OSError, sqlite3.DatabaseError) as err:
            raise GlotbenchError(f"response cache {self.folder}: cannot open it ({err}); "
                                 f"pick another --cache folder or pass --no-cache") from None
        self.hits = 0
        self.writes = 0

    @staticmethod
    def cache_key(request_key: str, model_settings: dict) -> str:
        ident = json.dumps(model_settings, sort_keys=True, default=str, ensure_ascii=False)
        return hashlib.sha256(f"{request_key}\n{ident}".encode()).hexdigest()

    def get(self, key: str) -> dict | None:
        try:
            row = self._conn.execute("SELECT CAST(response AS BLOB) FROM responses WHERE key=?", (key,)).fetchone()
        except sqlite3.OperationalError:  # busy past the timeout: a miss costs a request, never a wrong answer
            return None
        if row is None:
            return None
        self.hits += 1
        return json_codec.loads(row[0])

    def put(self, key: str, *, model_id: str, kind: str, response: dict) -> None:
        body = json_codec.dumps_utf8(response)
        try:
            self._conn.execute("INSERT OR IGNORE INTO responses(key, model_id, kind, response, created)"
                               " VALUES (?,?,?,CAST(? AS TEXT),?)", (key, model_id, kind, body, time.time()))
            self.writes += 1
        except sqlite3.OperationalError:  # busy or disk full: the run's own journal still has the answer
            pass

    def __len__(self) -> int:
        return self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def close(self) -> None:
        try:
            self._conn.close()
        except sqlite3.Error:
            pass


def open_cache(cache: str | None, no_cache: bool = False) -> ResponseCache | None:
    folder = cache_dir_for(cache, no_cache)
    return ResponseCache(folder) if folder is not None else None
