"""Issue 42, finding 6 and the doctor parts of 8: ``glotbench doctor`` terminates on any file (64 KB
zeroed mid-file looped for ever), tells schema damage from page damage, never calls "ok" a journal
that ``glotbench run`` refuses, and salvages intact pages behind a randomised header. Real
subprocesses on journals written with SQLite directly (no model needed)."""

from __future__ import annotations

import os
import random
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from glotbench.engine.journal import SCHEMA, Journal
from glotbench.errors import JournalCorrupt

N = 3000


def _journal(path: Path, n: int = N, schema: str = SCHEMA) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(path)
    con.executescript(schema)
    now = time.time()
    con.executemany("INSERT INTO responses(key, role, kind, model_id, request, response, latency_s, created) "
                    "VALUES (?,?,?,?,?,?,?,?)",
                    [(f"k{i}", "model", "generate", "m", "q" * 150, '{"text": "' + "a" * 300 + '"}', 0.1, now) for i in range(n)])
    con.commit()
    con.close()
    return path


def _doctor(*args, timeout=60):
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    return subprocess.run([sys.executable, "-m", "glotbench", "runs", "doctor", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, env=env)


def _responses(path: Path) -> int:
    j = Journal(path)
    try:
        return len(j.cached_keys())
    finally:
        j.close()


def test_doctor_terminates_on_64kb_zeroed_mid_file_and_salvages_rows(tmp_path):
    db = _journal(tmp_path / "run" / "journal.sqlite")
    size = db.stat().st_size
    assert size > 1_000_000
    with db.open("r+b") as fh:
        fh.seek(size // 2 - 32 * 1024)
        fh.write(b"\0" * 65536)
    t0 = time.monotonic()
    done = _doctor(db.parent, timeout=60)  # the old walk never ended (rowid 0 returned again and again)
    took = time.monotonic() - t0
    assert done.returncode == 0 and took < 30, (took, done.stdout, done.stderr[-500:])
    assert "page damage" in done.stdout and "Traceback" not in done.stderr
    n = _responses(db)
    assert N - 200 < n < N, n  # the rows on the zeroed pages are lost, the rest kept
    assert _doctor(db.parent, "--check").returncode == 0


def test_doctor_salvages_intact_pages_behind_a_randomised_header(tmp_path):
    db = _journal(tmp_path / "run" / "journal.sqlite")
    with db.open("r+b") as fh:
        fh.write(bytes(random.Random(42).randrange(256) for _ in range(100)))
    with pytest.raises(JournalCorrupt):
        Journal(db)
    done = _doctor(db.parent)
    assert done.returncode == 0, done.stderr[-500:]
    assert _responses(db) == N, done.stdout  # 0 rows before: SQLite refused the file outright


SAMPLES_WRONG = SCHEMA.replace("    record TEXT NOT NULL,          -- JSON: prompt", "    payload TEXT NOT NULL,         -- JSON: prompt")
NO_LATENCY = SCHEMA.replace("    latency_s REAL,\n", "")
RENAMED_RESPONSE = SCHEMA.replace("    response TEXT NOT NULL,\n", "    answer TEXT NOT NULL,\n")


@pytest.mark.parametrize("schema, what", [(SAMPLES_WRONG, "samples"), (NO_LATENCY, "latency_s"), (RENAMED_RESPONSE, "response")],
                         ids=["wrong-samples-columns", "missing-latency_s", "renamed-response"])
def test_damaged_schema_is_not_ok_and_run_refuses_it(tmp_path, schema, what):
    db = tmp_path / "run" / "journal.sqlite"
    db.parent.mkdir()
    con = sqlite3.connect(db)
    con.executescript(schema)
    con.close()
    with pytest.raises(JournalCorrupt, match="schema damage") as err:
        Journal(db)
    assert what in str(err.value) and "glotbench runs doctor" in str(err.value)
    check = _doctor(db.parent, "--check")
    assert check.returncode == 1 and ": ok (" not in check.stdout, check.stdout
    assert "schema damage" in check.stdout and what in check.stdout
    fixed = _doctor(db.parent)
    assert fixed.returncode == 0 and "schema damage" in fixed.stdout
    Journal(db).close()  # a fresh journal with the right schema now
