"""Check a run journal and salvage the readable rows of a damaged one into a fresh file.

Rows are read one at a time in rowid order from the damaged file; a row (or a stretch of the
table) that SQLite cannot read is skipped by probing ever larger rowid steps past it, so one bad
page costs the rows on that page, not the rest of the table. The walk is bounded: a damaged table
can answer ``rowid > N`` with a row at or below N (rowid 0 again and again: ``doctor`` once looped
for ever), which is treated as damage and stepped over, and no table yields more rows than the file
could hold. A header SQLite refuses (random bytes over the first 100) is rebuilt from a fresh
journal's header so the intact pages behind it are read. The damaged file is kept beside the new
one (``journal.sqlite.corrupt-<time>``); nothing is deleted.

:func:`check` tells page damage (SQLite's integrity check fails) from schema damage (readable
tables that differ from the journal schema, which ``glotbench run`` refuses too).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path

from glotbench.engine.journal import SCHEMA, schema_problem

TABLES = ("meta", "responses", "errors", "samples", "judgments")
MAX_PROBE = 1 << 40


@dataclass
class Report:
    path: Path
    ok: bool
    problem: str = ""
    salvaged: dict[str, int] = field(default_factory=dict)
    unreadable: dict[str, int] = field(default_factory=dict)  # rowid stretches that could not be read
    dropped: dict[str, int] = field(default_factory=dict)  # rows read but left out (checksum, parse, a dropped answer)
    kept_as: Path | None = None


def check(path: Path) -> tuple[bool, str]:
    """(healthy, problem): a 0-byte file is corrupt (a journal always holds its schema); the
    problem starts with "page damage" or "schema damage" when SQLite could open the file."""
    path = Path(path)
    if not path.exists():
        return False, "no journal file"
    if path.stat().st_size == 0:
        return False, "0-byte file"
    try:
        from glotbench.engine.sqlite_ro import open_read_only

        con = open_read_only(path)  # mode=ro, or immutable=1 on storage that cannot hold the WAL's files
        try:
            rows = [r[0] for r in con.execute("PRAGMA integrity_check")]
            if rows != ["ok"]:
                return False, "page damage: " + "; ".join(rows[:3])
            damage = schema_problem(con)
            if damage:
                return False, f"schema damage: {damage}"
            rows = damaged_rows(con)
            if rows:
                more = f" (and {len(rows) - 3} more)" if len(rows) > 3 else ""
                return False, (f"row damage: {len(rows)} row(s) fail their checksum or do not parse: "
                               + "; ".join(rows[:3]) + more)
        finally:
            con.close()
    except sqlite3.DatabaseError as err:
        return False, f"page damage: {err}"
    return True, ""


def damaged_rows(con: sqlite3.Connection) -> list[str]:
    """One line per row that fails its checksum (journal.row_sum), does not parse, or is no answer
    of its kind (a response) or no JSON object (a sample or judgment record)."""
    from glotbench.engine.journal import response_row_answer, row_sum

    out = []
    cols = {t: [r[1] for r in con.execute(f"PRAGMA table_info({t})")] for t in ("responses", "samples", "judgments")}
    sums = {t: "sum" if "sum" in c else "NULL" for t, c in cols.items()}
    for key, body, kind, stored, task, sid in con.execute(
            f"SELECT r.key, CAST(r.response AS BLOB), r.kind, r.{sums['responses']}, e.task, e.sample_id FROM responses r "
            "LEFT JOIN (SELECT key, MAX(task) AS task, MAX(sample_id) AS sample_id FROM errors GROUP BY key) e "
            "ON e.key = r.key"):
        if response_row_answer(key, body, kind, stored) is None:
            where = f", task {task}, item {sid}" if task else ""
            why = "fails its checksum" if stored is not None and stored != row_sum(key, body) else "is no readable answer"
            out.append(f"table responses, key {key[:12]}{where}: {why}")
    # the columns each row's checksum covers, in order (task and item are the 2nd and 3rd, the record the last)
    summed = {"samples": "run_key, task, sample_id, status", "judgments": "judge_id, task, sample_id, sample_index"}
    for table, columns in summed.items():
        for *fields, stored in con.execute(
                f"SELECT {columns}, CAST(record AS BLOB), {sums[table]} FROM {table}"):
            task, sid, rec = fields[1], fields[2], fields[-1]
            if stored is not None and stored != row_sum(*fields):
                out.append(f"table {table}, task {task}, item {sid}: fails its checksum")
            elif not _json_object(rec):
                out.append(f"table {table}, task {task}, item {sid}: the record is not a JSON object")
    return out


def _sound(table: str, row: dict, dropped_keys: set[str]) -> bool:
    """Whether a row read from a damaged journal may be kept: it passes its checksum and parses (a
    response: an answer of its kind; ``dropped_keys`` collects those left out) and, a sample, uses
    no response that was left out (its item is then done again, its request re-sent)."""
    from glotbench.engine.journal import response_row_answer, row_sum

    stored = row.get("sum")
    if table == "responses":
        if response_row_answer(str(row.get("key")), row.get("response"), row.get("kind"), stored) is None:
            dropped_keys.add(str(row.get("key")))
            return False
        return True
    rec = row.get("record")
    rec_b = rec if isinstance(rec, (bytes, bytearray)) else str(rec).encode("utf-8") if rec is not None else b""
    if table == "samples":
        if stored is not None and stored != row_sum(row.get("run_key"), row.get("task"), row.get("sample_id"),
                                                    row.get("status"), rec_b):
            return False
        if dropped_keys:
            try:
                keys = json.loads(rec_b).get("request_keys") or ()
            except (ValueError, AttributeError):
                return False
            return not dropped_keys.intersection(keys)
        return True
    if table == "judgments" and stored is not None:
        return stored == row_sum(row.get("judge_id"), row.get("task"), row.get("sample_id"), row.get("sample_index"), rec_b)
    return True


def _json_object(text) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except (ValueError, TypeError):
        return False


def _columns(con: sqlite3.Connection, table: str) -> list[str]:
    try:
        return [r[1] for r in con.execute(f"PRAGMA table_info({table})")]
    except sqlite3.DatabaseError:
        return []


def _rows(con: sqlite3.Connection, table: str, cols: list[str], report: Report, max_rows: int):
    """Yield readable rows of ``table`` in rowid order, stepping over unreadable stretches. Every
    row yielded has a larger rowid than the one before (an answer at or below the last rowid is
    damage, stepped over like an error), and at most ``max_rows`` rows are yielded: it terminates on
    any file."""
    sel = f"SELECT rowid, {', '.join(cols)} FROM {table} WHERE rowid > ? ORDER BY rowid LIMIT 1"

    def read(after: int):
        row = con.execute(sel, (after,)).fetchone()
        if row is not None and (not isinstance(row[0], int) or row[0] <= after):
            raise sqlite3.DatabaseError(f"rowid {row[0]!r} out of order")
        return row

    last = -(1 << 62)
    bad = n = 0
    while n < max_rows:
        try:
            row = read(last)
        except sqlite3.DatabaseError:
            row = None
            # probe past the damage: rowid last+1, +2, +4, ... until a read succeeds, then
            # narrow down (binary search) to the first readable rowid after the bad stretch
            start = max(last, 0)
            lo, hi, step = start, None, 1
            while step < MAX_PROBE:
                try:
                    row = read(start + step)
                    hi = start + step
                    break
                except sqlite3.DatabaseError:
                    lo = start + step
                    step *= 2
            while hi is not None and hi - lo > 1:
                mid = (lo + hi) // 2
                try:
                    row = read(mid)
                    hi = mid
                except sqlite3.DatabaseError:
                    lo = mid
            if hi is not None:
                try:
                    row = read(hi)
                except sqlite3.DatabaseError:
                    row = None
            bad += 1
        if row is None:
            break
        last = row[0]
        n += 1
        yield row[1:]
    report.unreadable[table] = bad


_HEADER_PAGE_SIZES = (4096, 1024, 2048, 8192, 16384, 32768, 65536, 512)


def _fresh_header(page_size: int) -> bytes:
    """The 100-byte header of a new, empty journal with ``page_size`` (rollback mode)."""
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "h.sqlite"
        con = sqlite3.connect(str(p))
        con.execute(f"PRAGMA page_size={page_size}")
        con.executescript(SCHEMA)
        con.close()
        return p.read_bytes()[:100]


def _opens(path: Path) -> bool:
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            con.execute("SELECT name FROM sqlite_master").fetchall()
            return True
        finally:
            con.close()
    except sqlite3.DatabaseError:
        return False


def _rebuild_header(work: Path, wal: bool = False) -> None:
    """When SQLite cannot open ``work`` and its header looks wrong, write a fresh journal's header
    (page size guessed: the first that makes the schema readable) with the file's page count."""
    if _opens(work):
        return
    original = work.read_bytes()[:100]
    size = work.stat().st_size
    for page in _HEADER_PAGE_SIZES:
        if size < page:
            continue
        head = bytearray(_fresh_header(page))
        head[28:32] = (size // page).to_bytes(4, "big")
        head[40:44] = (1).to_bytes(4, "big")  # schema cookie: any value, read once
        if wal:
            head[18] = head[19] = 2  # read the write-ahead log beside it
        with work.open("r+b") as fh:
            fh.write(head)
        if _opens(work):
            return
    with work.open("r+b") as fh:  # nothing worked: leave it as it was
        fh.write(original)


def _readable_copy(path: Path) -> Path | None:
    """A copy of the damaged file (and its WAL) whose header page count matches the file's length:
    SQLite refuses a truncated file outright when the header promises more pages than exist."""
    if not path.exists() or path.stat().st_size < 100:
        return None
    work = path.with_name(path.name + ".reading")
    shutil.copyfile(path, work)
    with work.open("r+b") as fh:  # streamed copy, header patched in place: memory stays flat
        head = fh.read(100)
        if head[:16] == b"SQLite format 3\x00":
            page = int.from_bytes(head[16:18], "big")
            page = 65536 if page == 1 else page
            if page >= 512:
                n_pages = work.stat().st_size // page
                fh.truncate(n_pages * page)
                fh.seek(28)
                fh.write(n_pages.to_bytes(4, "big"))
    wal = Path(str(path) + "-wal")
    if wal.exists():
        shutil.copyfile(wal, Path(str(work) + "-wal"))
    _rebuild_header(work, wal.exists())
    return work


def salvage(path: Path) -> Report:
    """Copy every readable row of ``path`` into a fresh journal that takes its place."""
    path = Path(path)
    ok, problem = check(path)
    report = Report(path=path, ok=ok, problem=problem)
    if ok:
        return report
    fresh = path.with_name(path.name + ".salvage")
    for p in (fresh, Path(str(fresh) + "-wal"), Path(str(fresh) + "-shm")):
        p.unlink(missing_ok=True)
    out = sqlite3.connect(str(fresh), isolation_level=None)
    out.executescript(SCHEMA)
    work = _readable_copy(path)
    if work is not None:
        try:
            src = sqlite3.connect(f"file:{work}?mode=ro", uri=True)
        except sqlite3.DatabaseError:
            src = None
        if src is not None:
            max_rows = work.stat().st_size // 4 + 1000  # no row takes fewer than 4 bytes of a page
            try:
                dropped_keys: set[str] = set()  # response rows left out: the items that used them are redone
                for table in TABLES:
                    want = _columns(out, table)
                    have = [c for c in _columns(src, table) if c in want]
                    n = 0
                    if have:
                        out.execute("BEGIN")
                        rec_at = have.index("record") if table in ("samples", "judgments") and "record" in have else None
                        for row in _rows(src, table, have, report, max_rows):
                            if not _sound(table, dict(zip(have, row)), dropped_keys):  # rebuilt or re-sent by the rerun
                                report.unreadable[table] = report.unreadable.get(table, 0) + 1
                                report.dropped[table] = report.dropped.get(table, 0) + 1
                                continue
                            if rec_at is not None and not _json_object(row[rec_at]):  # rebuilt by the rerun
                                report.unreadable[table] = report.unreadable.get(table, 0) + 1
                                continue
                            try:
                                out.execute(f"INSERT OR REPLACE INTO {table}({', '.join(have)}) "
                                            f"VALUES ({', '.join('?' * len(have))})", row)
                                n += 1
                            except sqlite3.DatabaseError:  # a row missing a NOT NULL column
                                report.unreadable[table] = report.unreadable.get(table, 0) + 1
                        out.execute("COMMIT")
                    report.salvaged[table] = n
            finally:
                src.close()
        for p in (work, Path(str(work) + "-wal"), Path(str(work) + "-shm")):
            p.unlink(missing_ok=True)
    out.close()
    stamp = time.strftime("%Y%m%dT%H%M%S")
    kept = path.with_name(f"{path.name}.corrupt-{stamp}")
    if path.exists():
        os.replace(path, kept)
        for suffix in ("-wal", "-shm"):
            side = Path(str(path) + suffix)
            if side.exists():
                os.replace(side, Path(str(kept) + suffix))
        report.kept_as = kept
    os.replace(fresh, path)
    return report
