"""``glotbench doctor`` on the shared response cache: check every row of ``responses.sqlite`` and
rebuild it from the sound ones (read as :mod:`glotbench.engine.salvage` reads a journal's)."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

from glotbench import json_codec
from glotbench.engine.response_cache import _SCHEMA, CACHE_FILE, answer_problem
from glotbench.engine.salvage import Report, _rows
from glotbench.engine.sqlite_ro import open_read_only


def check_cache(folder: Path) -> tuple[int, list[str]]:
    """(rows read, one line per problem) of the cache in ``folder``: SQLite's integrity check, then
    every row read on its own (a row SQLite cannot read, or no answer of its kind). Read-only."""
    path = Path(folder) / CACHE_FILE
    if not path.is_file():
        return 0, []
    try:
        con = open_read_only(path)
    except sqlite3.DatabaseError as err:
        return 0, [f"cannot open it ({err})"]
    problems: list[str] = []
    n = 0
    try:
        try:
            rows = [r[0] for r in con.execute("PRAGMA quick_check")]
        except sqlite3.DatabaseError as err:
            rows = [str(err)]
        if rows != ["ok"]:
            problems.append("page damage: " + "; ".join(rows[:2]))
        report = Report(path=path, ok=False)
        bad = 0
        for key, kind, body in _rows(con, "responses", ["key", "kind", "CAST(response AS BLOB)"], report,
                                     path.stat().st_size // 4 + 1000):
            n += 1
            try:
                answer = json_codec.loads(body)
            except (ValueError, TypeError, RecursionError):
                answer = None
            if answer is None or answer_problem(kind if kind in ("generate", "loglikelihood") else "generate", answer):
                bad += 1
        if report.unreadable.get("responses"):
            problems.append(f"{report.unreadable['responses']} unreadable stretch(es) of rows")
        if bad:
            problems.append(f"{bad} row(s) that are no answer of their kind (wrong shape or not JSON)")
    finally:
        con.close()
    return n, problems


def rebuild_cache(folder: Path) -> tuple[int, Path]:
    """Copy every sound row of the cache in ``folder`` into a fresh file that takes its place; the
    damaged file is kept beside it (``responses.sqlite.corrupt-<time>``). (rows kept, kept file)."""
    path = Path(folder) / CACHE_FILE
    fresh = path.with_name(path.name + ".rebuild")
    for p in (fresh, Path(str(fresh) + "-wal"), Path(str(fresh) + "-shm")):
        p.unlink(missing_ok=True)
    out = sqlite3.connect(str(fresh), isolation_level=None)
    out.executescript(_SCHEMA)
    kept = 0
    try:
        con = open_read_only(path)
    except sqlite3.DatabaseError:
        con = None
    if con is not None:
        try:
            out.execute("BEGIN")
            for key, model_id, kind, body, created in _rows(
                    con, "responses", ["key", "model_id", "kind", "CAST(response AS BLOB)", "created"],
                    Report(path=path, ok=False), path.stat().st_size // 4 + 1000):
                try:
                    answer = json_codec.loads(body)
                except (ValueError, TypeError, RecursionError):
                    continue
                if kind not in ("generate", "loglikelihood") or answer_problem(kind, answer):
                    continue
                out.execute("INSERT OR REPLACE INTO responses(key, model_id, kind, response, created) "
                            "VALUES (?,?,?,CAST(? AS TEXT),?)", (key, model_id, kind, body, created))
                kept += 1
            out.execute("COMMIT")
        finally:
            con.close()
    out.close()
    stamp = time.strftime("%Y%m%dT%H%M%S")
    aside = path.with_name(f"{path.name}.corrupt-{stamp}")
    os.replace(path, aside)
    for suffix in ("-wal", "-shm"):
        side = Path(str(path) + suffix)
        if side.exists():
            os.replace(side, Path(str(aside) + suffix))
    os.replace(fresh, path)
    return kept, aside
