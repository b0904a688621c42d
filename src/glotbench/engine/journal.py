"""The run journal and response cache: one SQLite file per run directory.

Every response is committed as it arrives (WAL mode), keyed by a hash of the model identity and
the full request, so a killed run resumes exactly: a request whose response is in the journal is
never sent again. Scored samples, errors and run metadata live beside it.

Rows wait in one queue, in order, until written. Outside an event loop every write is committed at
once. Inside a run's loop the rows of one loop iteration are committed together at the start of the
next (a commit per row cost a sixth of a run's CPU against an instant server: bench/scale.py); until then an
answer is served from memory, and :meth:`Journal.committed`, which ``CachedCaller`` awaits before it
sends a request, bounds what a SIGKILL can lose to the requests in flight (docs/footguns.md).
A write that fails (disk full, I/O error) keeps the queue, answers served from memory, and is
tried again by the next commit and by :meth:`Journal.flush`. Every read of samples or judgments
writes the queue first.
A file that SQLite cannot read, a 0-byte file (a journal always has its schema) or tables that
differ from :data:`SCHEMA` (schema damage: :func:`schema_problem`) raise
:class:`~glotbench.errors.JournalCorrupt` naming ``glotbench runs doctor RUN``.

Rows carry a checksum of their content (``sum``: :func:`row_sum`; issue 48). A response row that
fails it, does not parse or is no answer of its kind is a miss (the request is sent again, the new
answer replaces it); a sample row that fails it, or whose answers are such rows, is not done (the
rerun scores it again). Rows without a checksum (journals written before) are accepted. A journal
on storage this process cannot write (an archived run) is opened read-only (engine/sqlite_ro.py):
it is read, and nothing is written to it.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sqlite3
import time
import types
from pathlib import Path
from typing import Any, Container, Iterator, Mapping

from glotbench import json_codec
from glotbench.engine.sqlite_ro import is_read_only_error, open_read_only, writable
from glotbench.errors import JournalCorrupt

JOURNAL_NAME = "journal.sqlite"  # a run directory's journal (shards' too: RUN/shards/K/journal.sqlite)

def answer_problem(kind: str, answer: object) -> str | None:
    """Why ``answer`` (a parsed cache or journal row) is no answer of ``kind``, or None when it is one:
    a generation is an object with a string ``text``; a log-likelihood one with a number ``logprob``,
    a boolean ``is_greedy`` and an integer ``n_tokens``."""
    if not isinstance(answer, dict):
        return f"not a JSON object ({type(answer).__name__})"
    if kind == "loglikelihood":
        lp, greedy, n = answer.get("logprob"), answer.get("is_greedy"), answer.get("n_tokens")
        if isinstance(lp, bool) or not isinstance(lp, (int, float)):
            return "no number 'logprob'"
        if not isinstance(greedy, bool) or isinstance(n, bool) or not isinstance(n, int):
            return "no boolean 'is_greedy' or integer 'n_tokens'"
        return None
    if not isinstance(answer.get("text"), str):
        return "no string 'text'"
    for key in ("reasoning", "finish_reason"):
        if answer.get(key) is not None and not isinstance(answer[key], str):
            return f"'{key}' is not a string"
    for key in ("input_tokens", "output_tokens"):
        v = answer.get(key)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int)):
            return f"'{key}' is not an integer"
    return None


SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    role TEXT NOT NULL,            -- 'model' or 'judge:<judge id>'
    kind TEXT NOT NULL,            -- 'generate' or 'loglikelihood'
    model_id TEXT NOT NULL,
    request TEXT NOT NULL,
    response TEXT NOT NULL,
    latency_s REAL,
    created REAL NOT NULL,
    sum TEXT                       -- row_sum(key, response); NULL in journals written before checksums
);
CREATE TABLE IF NOT EXISTS errors (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    key TEXT NOT NULL,
    role TEXT NOT NULL,
    task TEXT,
    sample_id TEXT,
    error TEXT NOT NULL,
    attempts INTEGER NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS samples (
    run_key TEXT NOT NULL,         -- fingerprint of the task within this run
    task TEXT NOT NULL,
    sample_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    status TEXT NOT NULL,          -- 'scored' or 'error'
    record TEXT NOT NULL,          -- JSON: prompt, outputs, extracted, pred, gold, values, metadata, error
    created REAL NOT NULL,
    sum TEXT,                      -- row_sum(run_key, task, sample_id, status, record)
    PRIMARY KEY (run_key, task, sample_id)
);
CREATE TABLE IF NOT EXISTS judgments (
    judge_id TEXT NOT NULL,
    task TEXT NOT NULL,
    sample_id TEXT NOT NULL,
    sample_index INTEGER NOT NULL DEFAULT 0,
    record TEXT NOT NULL,
    created REAL NOT NULL,
    sum TEXT,                      -- row_sum(judge_id, task, sample_id, sample_index, record)
    PRIMARY KEY (judge_id, task, sample_id, sample_index)
);
CREATE TABLE IF NOT EXISTS edits (id INTEGER PRIMARY KEY CHECK (id = 1), n INTEGER NOT NULL);
""" + "".join(f"""CREATE TRIGGER IF NOT EXISTS {table}_{event.lower()} AFTER {event} ON {table}
BEGIN INSERT INTO edits VALUES (1, 1) ON CONFLICT(id) DO UPDATE SET n = n + 1; END;
""" for table in ("responses", "samples", "judgments") for event in ("UPDATE", "DELETE"))
# The triggers above count every row changed or deleted in place, by any SQLite client (glotbench
# itself only inserts: INSERT OR REPLACE fires no DELETE trigger without recursive_triggers). A
# stored-summary stamp records the count, so a re-report need not checksum every row (edit_count).
EDIT_TRIGGERS = tuple(f"{table}_{event}" for table in ("responses", "samples", "judgments")
                      for event in ("update", "delete"))


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


@types.coroutine
def _one_step():
    """Yield to the event loop once (``asyncio.sleep(0)`` without its checks)."""
    yield


def _dumps(obj: Any) -> str:
    """A meta value's JSON text."""
    return json_codec.dumps(obj, separators=json_codec.COMPACT)


def _row_bytes(obj: Any) -> bytes:
    """A sample or judgment record's JSON, compact, UTF-8: samples.jsonl splices this text in as it is
    (output/results.py). The INSERT casts it to TEXT (``CAST(? AS TEXT)``)."""
    return json_codec.dumps_utf8(obj, separators=json_codec.COMPACT)


# Columns a journal written by an older glotbench lacks: added when it is opened for writing,
# read as NULL (no checksum) when it is not.
OPTIONAL_COLUMNS = {"responses": ("sum",), "samples": ("sum",), "judgments": ("sum",)}


def row_sum(*parts: Any) -> str:
    """The checksum of a row's content: SHA-256 (first 16 hex digits) of its parts, each as text or
    UTF-8 bytes, separated by NUL."""
    return _sha256(b"\0".join([p if type(p) is bytes else p.encode("utf-8") if type(p) is str else
                               p if isinstance(p, (bytes, bytearray)) else str(p).encode("utf-8")
                               for p in parts])).hexdigest()[:16]  # one update: the same digest as one per part


_sha256 = hashlib.sha256


_EXPECTED: dict[str, dict[str, tuple]] | None = None


def expected_columns() -> dict[str, dict[str, tuple]]:
    """``{table: {column: (type, notnull, pk)}}`` of :data:`SCHEMA`, read from an in-memory copy."""
    global _EXPECTED
    if _EXPECTED is None:
        con = sqlite3.connect(":memory:")
        con.executescript(SCHEMA)
        _EXPECTED = {t: _table_columns(con, t) for t in ("meta", "responses", "errors", "samples", "judgments")}
        con.close()
    return _EXPECTED


def _table_columns(con: sqlite3.Connection, table: str) -> dict[str, tuple]:
    return {r[1]: (str(r[2]).upper(), int(r[3]), int(r[5])) for r in con.execute(f"PRAGMA table_info({table})")}


def schema_problem(con: sqlite3.Connection) -> str | None:
    """What is wrong with the tables of an opened journal, or ``None``: every table of
    :data:`SCHEMA` with every column, of the same type, NOT NULL and key; an extra column is only
    a problem when it is NOT NULL with no default (an insert of ours would fail on it). A table with
    ``response`` renamed or ``latency_s`` missing used to pass as "ok" while every insert failed."""
    problems = []
    for table, want in expected_columns().items():
        have = _table_columns(con, table)
        if not have:
            problems.append(f"table {table} is missing")
            continue
        missing = [c for c in want if c not in have and c not in OPTIONAL_COLUMNS.get(table, ())]
        changed = [c for c in want if c in have and have[c] != want[c]]
        extra = [r[1] for r in con.execute(f"PRAGMA table_info({table})") if r[1] not in want and r[3] and r[4] is None]
        if missing:
            problems.append(f"table {table} lacks column(s) {', '.join(missing)}")
        if changed:
            problems.append(f"table {table}: column(s) {', '.join(changed)} differ from the journal schema")
        if extra:
            problems.append(f"table {table} has unknown required column(s) {', '.join(extra)}")
    return "; ".join(problems) or None


def response_row_answer(key: str, body: bytes | str | None, kind: str | None, stored_sum: str | None, *,
                        parse: bool = True) -> dict | bool | None:
    """A response row's answer, or None when the row fails its checksum, does not parse, or is no
    answer of its kind. ``parse=False`` checks the checksum only and answers True for a sound row."""

    if body is None:
        return None
    raw = body if isinstance(body, (bytes, bytearray)) else str(body).encode("utf-8")
    if stored_sum is not None and stored_sum != row_sum(key, raw):
        return None
    if not parse:
        return True
    try:
        answer = json_codec.loads(raw)
    except (ValueError, TypeError, RecursionError):
        return None
    if answer_problem(kind or "generate", answer) is not None:
        return None
    return answer


def corrupt_message(path: Path, err: BaseException | str) -> str:
    run = Path(path).parent
    return (f"{path}: the journal is corrupt ({err}); salvage what is readable with: glotbench runs doctor {run}")


class Journal:
    def __init__(self, path: Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.path.is_dir():
            from glotbench.errors import GlotbenchError

            raise GlotbenchError(f"{self.path}: is a folder, not a journal file; move it away (a run keeps its "
                                 f"journal in the file {self.path.name})")
        if self.path.exists() and self.path.stat().st_size == 0:
            raise JournalCorrupt(corrupt_message(self.path, "0-byte file"))
        self._queue: list[tuple[str, tuple]] = []  # rows not yet written, in order
        self._held: dict[str, bytes] = {}  # key -> answer JSON of the answers in the queue (served from memory)
        self._tick: asyncio.Future | None = None  # the commit scheduled on the running loop, until it has run
        self.write_error: str | None = None
        # A shard's journal reads answers through to the run's own journal (never writes there),
        # so answers merged from earlier sessions are not sent again (docs/sharding.md).
        self.fallback: Journal | None = None
        self.read_only = False
        self.dropped_writes = 0  # rows a read-only journal did not write
        self.damaged_keys: set[str] = set()  # response rows read as misses (checksum, JSON, shape)
        self._damaged_responses: set[str] | None = None
        try:
            if self.path.exists() and not writable(self.path):
                self._open_read_only()
            else:
                try:
                    self._conn = sqlite3.connect(str(self.path), isolation_level=None, check_same_thread=False)
                    self._conn.execute("PRAGMA journal_mode=WAL")
                except sqlite3.OperationalError as err:
                    if not (self.path.exists() and is_read_only_error(err)):
                        raise
                    self._open_read_only()  # a read-only mount or file that os.access let through
            if not self.read_only:
                self._conn.execute("PRAGMA synchronous=NORMAL")
                counted = self._conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'edits'").fetchone()
                self._conn.executescript(SCHEMA)
                if not counted:
                    self._count_rows_before_triggers()
                self._add_optional_columns()
            self._conn.execute("SELECT COUNT(*) FROM meta").fetchone()
            damage = schema_problem(self._conn)
            self._has_sum = {t: "sum" in _table_columns(self._conn, t) for t in OPTIONAL_COLUMNS}
        except sqlite3.DatabaseError as err:
            if isinstance(err, sqlite3.OperationalError) and "locked" in str(err):
                raise
            raise JournalCorrupt(corrupt_message(self.path, err)) from None
        if damage:
            self._conn.close()
            raise JournalCorrupt(corrupt_message(self.path, f"schema damage: {damage}"))

    def _open_read_only(self) -> None:
        conn = getattr(self, "_conn", None)
        if conn is not None:
            conn.close()
        self._conn = open_read_only(self.path)
        self.read_only = True

    def _count_rows_before_triggers(self) -> None:
        """A journal written before the edit triggers may hold rows edited in place: counted as one
        edit, so its stored summary is never reused without checksumming every row (edit_count)."""
        if any(self._conn.execute(f"SELECT EXISTS (SELECT 1 FROM {t})").fetchone()[0]
               for t in ("responses", "samples", "judgments")):
            self._conn.execute("INSERT OR IGNORE INTO edits VALUES (1, 1)")

    def _add_optional_columns(self) -> None:
        """A journal written before checksums gets their column (its old rows keep NULL: accepted)."""
        for table, cols in OPTIONAL_COLUMNS.items():
            have = _table_columns(self._conn, table)
            for col in cols:
                if have and col not in have:
                    self._conn.execute(f"ALTER TABLE {table} ADD COLUMN {col} TEXT")

    @property
    def conn(self) -> sqlite3.Connection:
        """The SQLite connection, for code that queries the journal directly (shard merges, the
        stored-summary stamp): the queued rows are written first, so it sees them."""
        self.flush()
        return self._conn

    def close(self) -> None:
        self.flush()
        self._conn.close()

    # -- writes
    @property
    def pending(self) -> int:
        """Rows not yet on disk (after a failed write: what is held in memory)."""
        return len(self._queue)

    @property
    def held_answers(self) -> int:
        """Model answers held in memory, not yet on disk: what a rerun would send again (the other
        held rows, samples and errors, are rebuilt from the journal without a request)."""
        return len(self._held)

    def _put(self, sql: str, params: tuple, *, answer: tuple[str, bytes] | None = None) -> None:
        """Queue a row; commit it now outside an event loop, at the loop's next iteration inside one.
        A read-only journal (an archived run) writes nothing: the row is counted and dropped."""
        if self.read_only:
            self.dropped_writes += 1
            return
        self._queue.append((sql, params))
        if answer is not None:
            self._held[answer[0]] = answer[1]
        loop = _running_loop()
        if loop is None:
            self.flush()
            return
        if self._tick is None:
            self._tick = loop.create_future()
            loop.call_soon(self._commit_tick)

    def flush(self) -> bool:
        """Write the queued rows in one transaction (one executemany per statement, order kept within
        each; every statement writes its own table); True when nothing is left pending."""
        if not self._queue:
            return True
        by_statement: dict[str, list[tuple]] = {}
        for sql, params in self._queue:
            by_statement.setdefault(sql, []).append(params)
        try:
            self._conn.execute("BEGIN")
            try:
                for sql, rows in by_statement.items():
                    self._conn.executemany(sql, rows)
                self._conn.execute("COMMIT")
            except BaseException:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                raise
        except sqlite3.OperationalError as err:  # disk full, I/O error, read-only file: keep everything
            self.write_error = str(err)
            return False
        self._queue.clear()
        self._held.clear()  # every held answer was in the queue
        self.write_error = None
        return True

    def _commit_tick(self) -> None:
        """The commit of one event-loop iteration's rows."""
        done, self._tick = self._tick, None
        try:
            self.flush()
        finally:
            if not done.done():  # cancelled with its run (Ctrl-C): nobody waits
                done.set_result(None)

    async def committed(self) -> None:
        """Wait for the commit of the rows queued so far (the start of the loop's next iteration); at
        once when none is scheduled. ``CachedCaller`` waits here before each request it sends: a
        request whose slot an uncommitted answer just freed would otherwise leave before that answer
        is committed, and a kill would re-send both."""
        tick = self._tick
        if tick is not None and not tick.done():
            # The commit was scheduled (call_soon) when its first row was queued, before this waiter
            # yields: the loop runs its ready callbacks in order, so one step of this task is enough
            # (no shielded future and callbacks per request: about 3 us less per request sent).
            await _one_step()
            if not tick.done():  # another loop's ordering: wait for it (shared: one cancelled waiter must not cancel it)
                await asyncio.shield(tick)

    # -- meta
    def set_meta(self, key: str, value: Any) -> None:
        self._put("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, _dumps(value)))

    def get_meta(self, key: str, default: Any = None) -> Any:
        row = self.conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return json.loads(row[0]) if row else default

    # -- response cache
    def get_response(self, key: str) -> dict | None:
        held = self._held.get(key)
        if held is not None:
            return json_codec.loads(held)
        sum_col = "sum" if self._has_sum["responses"] else "NULL"
        row = self._conn.execute(f"SELECT CAST(response AS BLOB), kind, {sum_col} FROM responses WHERE key=?",
                                 (key,)).fetchone()
        if row is None and self.fallback is not None:
            return self.fallback.get_response(key)
        if row is None:
            return None
        answer = response_row_answer(key, *row)
        if answer is None:  # fails its checksum, does not parse, or is no answer: sent again
            self.damaged_keys.add(key)
        return answer

    def latencies(self, role: str = "model") -> dict[str, float]:
        """Seconds each journaled request of ``role`` took (request key -> latency), from the
        ``responses`` table's ``latency_s``; answers taken from the shared response cache have none."""
        return dict(self.conn.execute("SELECT key, latency_s FROM responses WHERE role=? AND latency_s IS NOT NULL",
                                      (role,)))

    def get_request(self, key: str) -> dict | None:
        """The request a cached response answers (None when it is not in the journal)."""
        row = self.conn.execute("SELECT request FROM responses WHERE key=?", (key,)).fetchone()
        return json_codec.loads(row[0]) if row and row[0] else None

    def cached_keys(self) -> set[str]:
        own = {r[0] for r in self._conn.execute("SELECT key FROM responses")} | set(self._held)
        return own | self.fallback.cached_keys() if self.fallback is not None else own

    def put_response(self, key: str, *, role: str, kind: str, model_id: str, request: dict | bytes, response: dict,
                     latency_s: float | None) -> None:
        """Journal an answer (served from memory until it is committed). The engine passes the
        request's keyed JSON (``GenRequest.keyed_json``), the bytes the key is the sha256 of, so a
        journal row can be checked against its key."""
        body = json_codec.dumps_utf8(response)
        request_text = request if type(request) is bytes else json_codec.dumps_utf8(request)
        self._put("INSERT OR REPLACE INTO responses(key, role, kind, model_id, request, response, latency_s, created, sum)"
                  " VALUES (?,?,?,?,CAST(? AS TEXT),CAST(? AS TEXT),?,?,?)",
                  (key, role, kind, model_id, request_text, body, latency_s, time.time(), row_sum(key, body)),
                  answer=(key, body))
        self.damaged_keys.discard(key)

    def count_responses(self, *, since: float, role: str) -> int:
        """Responses of ``role`` ('model', 'judge') committed at or after ``since`` (epoch seconds)."""
        return self.conn.execute("SELECT COUNT(*) FROM responses WHERE created >= ? AND (role = ? OR role LIKE ?)",
                                 (since, role, role + ":%")).fetchone()[0]

    # -- errors
    def put_error(self, key: str, *, role: str, task: str | None, sample_id: str | None, error: str, attempts: int) -> None:
        self._put(
            "INSERT INTO errors(key, role, task, sample_id, error, attempts, created) VALUES (?,?,?,?,?,?,?)",
            (key, role, task, sample_id, error, attempts, time.time()),
        )

    def errors(self) -> list[dict]:
        cols = ("key", "role", "task", "sample_id", "error", "attempts", "created")
        return [dict(zip(cols, r)) for r in self.conn.execute(f"SELECT {', '.join(cols)} FROM errors ORDER BY id")]

    def _select(self, table: str, cols: tuple[str, ...], filters: dict[str, str | None], order_by: str):
        """``SELECT cols FROM table`` with ``col=?`` for every filter that is not ``None``.
        Table and column names are this module's own constants, never caller input."""
        self.flush()
        where = [(col, val) for col, val in filters.items() if val is not None]
        q = f"SELECT {', '.join(cols)} FROM {table}"
        if where:
            q += " WHERE " + " AND ".join(f"{col}=?" for col, _ in where)
        return self._conn.execute(f"{q} ORDER BY {order_by}", [val for _, val in where])

    # -- samples
    def put_sample(self, run_key: str, task: str, sample_id: str, idx: int, status: str, record: dict) -> None:
        text = _row_bytes(record)
        self._put(
            "INSERT OR REPLACE INTO samples(run_key, task, sample_id, idx, status, record, created, sum)"
            " VALUES (?,?,?,?,?,CAST(? AS TEXT),?,?)",
            (run_key, task, sample_id, idx, status, text, time.time(), row_sum(run_key, task, sample_id, status, text)),
        )

    def scored_ids(self, run_key: str, task: str) -> set[str]:
        """Items of ``task`` scored in this run: their row passes its checksum and parses, and none of
        their answers is a damaged response row (those items are done again; docs/footguns.md)."""
        sum_col = "sum" if self._has_sum["samples"] else "NULL"
        damaged = self.damaged_response_keys()
        out = set()
        for sid, status, rec, stored in self.conn.execute(
                f"SELECT sample_id, status, CAST(record AS BLOB), {sum_col} FROM samples "
                "WHERE run_key=? AND task=? AND status='scored'", (run_key, task)):
            if stored is not None and stored != row_sum(run_key, task, sid, status, rec):
                continue
            if stored is None or damaged:
                try:
                    parsed = json_codec.loads(rec)
                except (ValueError, TypeError, RecursionError):
                    continue
                if not isinstance(parsed, dict):
                    continue
                if damaged and damaged.intersection(parsed.get("request_keys") or ()):
                    continue
            out.add(sid)
        return out

    def has_damaged_rows(self) -> bool:
        """Whether any response or sample row fails its checksum or parse (a finished run whose
        journal was edited in place then takes the full path, which redoes exactly those items)."""
        if self.damaged_response_keys():
            return True
        if not self._has_sum["samples"]:
            return False
        for run_key, task, sid, status, rec, stored in self.conn.execute(
                "SELECT run_key, task, sample_id, status, CAST(record AS BLOB), sum FROM samples WHERE sum IS NOT NULL"):
            if stored != row_sum(run_key, task, sid, status, rec):
                return True
        return False

    def edit_count(self) -> int | None:
        """How many rows were changed or deleted in place since the edit triggers were made (1 more
        when the journal had rows before them), or None when a trigger or the count is missing (a
        journal written before them, opened read-only; a trigger dropped)."""
        names = {r[0] for r in self.conn.execute("SELECT name FROM sqlite_master WHERE type IN ('trigger', 'table')")}
        if not names.issuperset(EDIT_TRIGGERS + ("edits",)):
            return None
        row = self.conn.execute("SELECT n FROM edits WHERE id = 1").fetchone()
        return row[0] if row else 0

    def damaged_response_keys(self) -> set[str]:
        """Keys of response rows that fail their checksum, do not parse, or hold no answer of their
        kind (read once per journal; rows written later are written whole)."""
        if self._damaged_responses is None:
            sum_col = "sum" if self._has_sum["responses"] else "NULL"
            self._damaged_responses = {key for key, body, kind, stored in self.conn.execute(
                f"SELECT key, CAST(response AS BLOB), kind, {sum_col} FROM responses")
                if response_row_answer(key, body, kind, stored, parse=stored is None) is None}
        return self._damaged_responses

    def count_samples(self, run_key: str, task: str) -> int:
        """Rows of ``task`` under ``run_key``."""
        return self.conn.execute("SELECT COUNT(*) FROM samples WHERE run_key=? AND task=?", (run_key, task)).fetchone()[0]

    def iter_sample_rows(self, run_key: str | None = None, task: str | None = None, *,
                         record: str = "record") -> Iterator[tuple]:
        """(run_key, task, sample_id, idx, status, record JSON text) per sample, unparsed
        (``record="CAST(record AS BLOB)"``: its UTF-8, undecoded)."""
        return self._select("samples", ("run_key", "task", "sample_id", "idx", "status", record),
                            {"run_key": run_key, "task": task}, "task, idx")  # the cursor: no generator per row

    def iter_samples(self, run_key: str | None = None, task: str | None = None, *,
                     ids: Container[str] | None = None, known: Mapping[str, Any] | None = None) -> Iterator[Any]:
        """Each sample row as a dict (identity columns, then the parsed record), in the journal's order.
        ``ids``: only the rows of these sample ids (the others are not parsed); ``known``: sample id ->
        what to yield in place of that row, unparsed (runner.summarise: the briefs of the rows this
        process wrote)."""
        rows = self.iter_sample_rows(run_key, task, record="CAST(record AS BLOB)")
        try:
            for run_key_, task_, sid, idx, status, rec in rows:
                if ids is not None and sid not in ids:
                    continue
                if known:
                    brief = known.get(sid)
                    if brief is not None:
                        yield brief
                        continue
                yield {"run_key": run_key_, "task": task_, "sample_id": sid, "idx": idx, "status": status,
                       **self._parse_row(rec, "samples", task_, sid)}
        finally:
            rows.close()  # now, while the connection is open (not at exit, after it was closed)

    def _parse_row(self, rec: bytes, table: str, task: str, sid: str) -> dict:
        """A stored record's JSON; a row that is not valid JSON is one line naming it and the recovery."""
        try:
            out = json_codec.loads(rec)
        except ValueError as err:
            raise JournalCorrupt(corrupt_message(self.path, f"table {table}, task {task}, item {sid}: the record is not "
                                                            f"valid JSON ({str(err).splitlines()[0]})")) from None
        if not isinstance(out, dict):
            raise JournalCorrupt(corrupt_message(self.path, f"table {table}, task {task}, item {sid}: the record is not "
                                                            f"a JSON object"))
        return out

    # -- judgments (LLM-judge grades, one per judge x item x sample)
    def put_judgment(self, judge_id: str, task: str, sample_id: str, sample_index: int, record: dict) -> None:
        text = _row_bytes(record)
        self._put(
            "INSERT OR REPLACE INTO judgments(judge_id, task, sample_id, sample_index, record, created, sum)"
            " VALUES (?,?,?,?,CAST(? AS TEXT),?,?)",
            (judge_id, task, sample_id, sample_index, text, time.time(), row_sum(judge_id, task, sample_id, sample_index, text)),
        )

    def iter_judgments(self, judge_id: str | None = None, task: str | None = None) -> Iterator[dict]:
        rows = self._select("judgments", ("judge_id", "task", "sample_id", "sample_index", "CAST(record AS BLOB)"),
                            {"judge_id": judge_id, "task": task}, "task, sample_id, sample_index")
        for jid, task_, sid, k, rec in rows:
            yield {"judge_id": jid, "task": task_, "sample_id": sid, "sample_index": k,
                   **self._parse_row(rec, "judgments", task_, sid)}
