"""The shared response cache: answers reused across run directories (docs/cache.md).

Opt-in (``--cache DIR``, ``GLOTBENCH_CACHE``); content-addressed by the journal's request key, the
model's settings and the served identity (:func:`cache_identity`); one SQLite file in WAL mode; a
hit is copied into the run's own journal. Untrusted like any file: a damaged or misshapen row is a
miss, counted and named; a folder this process cannot write is opened read-only. The details:
docs/cache.md.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from pathlib import Path

from glotbench import json_codec
from glotbench.engine.journal import answer_problem
from glotbench.engine.sqlite_ro import is_read_only_error, open_read_only, writable
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

    def __init__(self, folder: Path, *, busy_timeout_s: float = 60.0, strict: bool = True):
        """``strict=False`` (a run): a cache SQLite cannot open is no cache (``self.problem`` says
        why, every read a miss); ``strict=True`` raises it as one line."""
        self.folder = Path(folder)
        self.path = self.folder / CACHE_FILE
        self.read_only = False
        self.problem: str | None = None
        self._conn: sqlite3.Connection | None = None
        self.hits = self.writes = 0
        self.read_errors = 0  # reads SQLite could not do (damaged pages): misses, sent again
        self.bad_rows = 0  # rows that parsed to no answer of the right shape: misses, sent again
        self.write_errors = 0
        self.last_problem: str | None = None  # the last read error or bad row, for the run's one line
        try:
            try:
                self.folder.mkdir(parents=True, exist_ok=True)
            except OSError:
                if not self.path.is_file():
                    raise
            if not writable(self.path):
                self._conn, self.read_only = open_read_only(self.path, busy_timeout_s), True
            else:
                try:
                    self._conn = sqlite3.connect(str(self.path), isolation_level=None, check_same_thread=False,
                                                 timeout=busy_timeout_s)
                    self._conn.execute(f"PRAGMA busy_timeout={int(busy_timeout_s * 1000)}")
                    _setup(self._conn, busy_timeout_s)
                except sqlite3.OperationalError as err:
                    if not is_read_only_error(err) or not self.path.is_file():
                        raise
                    if self._conn is not None:
                        self._conn.close()  # a read-only file root opened for writing: read it as it is
                    self._conn, self.read_only = open_read_only(self.path, busy_timeout_s), True
        except (OSError, sqlite3.DatabaseError) as err:
            if strict:
                raise GlotbenchError(f"response cache {self.folder}: cannot open it ({err}); "
                                     f"pick another --cache folder or pass --no-cache") from None
            self._conn = None
            self.problem = f"cannot open it ({err})"

    @staticmethod
    def cache_key(request_key: str, model_settings: dict) -> str:
        ident = json.dumps(model_settings, sort_keys=True, default=str, ensure_ascii=False)
        return hashlib.sha256(f"{request_key}\n{ident}".encode()).hexdigest()

    def get(self, key: str, kind: str | None = None) -> dict | None:
        """The answer stored under ``key``, or None: a miss, a read SQLite cannot do, or a row that is
        no answer (of ``kind`` when given). Only a sound answer counts as a hit."""
        if self._conn is None:
            return None
        try:
            row = self._conn.execute("SELECT CAST(response AS BLOB), kind FROM responses WHERE key=?",
                                     (key,)).fetchone()
        except sqlite3.OperationalError as err:
            if "locked" in str(err) or "busy" in str(err):  # busy past the timeout: a miss, never a wrong answer
                return None
            return self._read_error(key, err)
        except sqlite3.DatabaseError as err:  # a damaged page: a miss, the request is sent again
            return self._read_error(key, err)
        if row is None:
            return None
        try:
            answer = json_codec.loads(row[0])
        except (ValueError, TypeError, RecursionError) as err:
            return self._bad_row(key, f"not valid JSON ({str(err).splitlines()[0][:80]})")
        want = kind or row[1]
        problem = answer_problem(want, answer) if want in ("generate", "loglikelihood") else "unknown kind"
        if problem is None and kind is not None and row[1] != kind:
            problem = f"stored as a {row[1]!r} answer"
        if problem:
            return self._bad_row(key, problem)
        self.hits += 1
        return answer

    def _read_error(self, key: str, err: Exception) -> None:
        self.read_errors += 1
        self.last_problem = f"row {key[:12]}: {err}"
        return None

    def _bad_row(self, key: str, why: str) -> None:
        self.bad_rows += 1
        self.last_problem = f"row {key[:12]}: {why}"
        return None

    def put(self, key: str, *, model_id: str, kind: str, response: dict) -> None:
        if self._conn is None or self.read_only:
            return
        body = json_codec.dumps_utf8(response)
        try:
            # REPLACE: a row that was damaged (read as a miss) is overwritten by the fresh answer
            self._conn.execute("INSERT OR REPLACE INTO responses(key, model_id, kind, response, created)"
                               " VALUES (?,?,?,CAST(? AS TEXT),?)", (key, model_id, kind, body, time.time()))
            self.writes += 1
        except sqlite3.DatabaseError:  # busy, disk full, a damaged page: the run's own journal has the answer
            self.write_errors += 1

    def report(self) -> dict:
        """What this run did with the cache, for results.json and the console."""
        out = {"folder": str(self.folder), "hits": self.hits, "writes": self.writes}
        for name in ("read_errors", "bad_rows", "write_errors"):
            if getattr(self, name):
                out[name] = getattr(self, name)
        if self.read_only:
            out["read_only"] = True
        if self.problem:
            out["problem"] = self.problem
        if self.last_problem and (self.read_errors or self.bad_rows):
            out["last_problem"] = self.last_problem
        return out

    def __len__(self) -> int:
        if self._conn is None:
            return 0
        return self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def close(self) -> None:
        try:
            if self._conn is not None:
                self._conn.close()
        except sqlite3.Error:
            pass


def open_cache(cache: str | None, no_cache: bool = False, *, strict: bool = False) -> ResponseCache | None:
    folder = cache_dir_for(cache, no_cache)
    return ResponseCache(folder, strict=strict) if folder is not None else None


def cache_identity(model, served: dict | None, trust_name: bool) -> tuple[dict | None, str]:
    """(what the cache keys a model's answers on, how) for ``model`` whose server said ``served``
    (``Model.served_identity()``). An in-process model: its settings (they name its file). A model
    behind a server that said what it serves: its settings and that identity (another model loaded
    under the same name and URL is another key). A server that could not say: its settings alone
    with ``trust_name`` (``--cache-trust-name``), else None: the cache is not used for it."""
    settings = model.settings()
    if not getattr(model, "serves_remotely", False):
        return settings, "model settings"
    if served:
        return {**settings, "served": served}, "served model identity"
    if trust_name:
        return settings, "model name and URL (--cache-trust-name)"
    return None, "not used: the server does not say which model it serves; pass --cache-trust-name to key on the name"
