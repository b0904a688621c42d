"""Merge shard journals into the run's journal, in SQLite, one transaction per shard.

Responses are keyed by a hash of the model and the full request, so a response present in both
is the same answer: ``INSERT OR IGNORE`` keeps the first. A sample row is taken when the run's
journal has none for that item, when it replaces an error by a score, or when it is a newer
record of the same status; errors are copied once (same key, time and text). Merging the same
shard twice therefore changes nothing (tests/test_sharding.py).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from glotbench.engine.journal import Journal, corrupt_message
from glotbench.errors import JournalCorrupt

_SAMPLE_COLS = "run_key, task, sample_id, idx, status, record, created, sum"  # sum: the row's checksum (journal.row_sum)
_STEPS = {
    "responses": ("INSERT OR IGNORE INTO main.responses (key, role, kind, model_id, request, response, latency_s, "
                  "created, sum) SELECT key, role, kind, model_id, request, response, latency_s, created, sum "
                  "FROM src.responses"),
    "samples": (f"INSERT OR REPLACE INTO main.samples ({_SAMPLE_COLS}) SELECT s.run_key, s.task, s.sample_id, s.idx, "
                "s.status, s.record, s.created, s.sum FROM src.samples s LEFT JOIN main.samples d "
                "ON d.run_key = s.run_key AND d.task = s.task AND d.sample_id = s.sample_id "
                "WHERE d.run_key IS NULL OR (d.status != 'scored' AND s.status = 'scored') "
                "OR (d.status = s.status AND s.created > d.created)"),
    "judgments": ("INSERT OR IGNORE INTO main.judgments (judge_id, task, sample_id, sample_index, record, created, sum) "
                  "SELECT judge_id, task, sample_id, sample_index, record, created, sum FROM src.judgments"),
    "errors": ("INSERT INTO main.errors (key, role, task, sample_id, error, attempts, created) "
               "SELECT e.key, e.role, e.task, e.sample_id, e.error, e.attempts, e.created FROM src.errors e "
               "WHERE NOT EXISTS (SELECT 1 FROM main.errors d WHERE d.key = e.key AND d.created = e.created "
               "AND d.error = e.error)"),
}


@dataclass
class MergeCounts:
    """Rows each merge added or replaced, per table."""

    responses: int = 0
    samples: int = 0
    judgments: int = 0
    errors: int = 0
    shards: int = 0

    def add(self, other: "MergeCounts") -> None:
        for k in ("responses", "samples", "judgments", "errors", "shards"):
            setattr(self, k, getattr(self, k) + getattr(other, k))

    def changed(self) -> int:
        return self.responses + self.samples + self.judgments + self.errors


def merge_journal(dst: Journal, src: Path) -> MergeCounts:
    """Copy one shard journal's rows into ``dst`` (one transaction; nothing half-merged)."""
    if not Path(src).is_file() or Path(src).stat().st_size == 0:
        return MergeCounts()
    # The shard may have been killed: open it once with its own connection so SQLite replays its WAL.
    Journal(src).close()
    counts = MergeCounts(shards=1)
    conn = dst.conn
    try:
        conn.execute("ATTACH DATABASE ? AS src", (str(src),))
    except sqlite3.DatabaseError as err:
        raise JournalCorrupt(corrupt_message(Path(src), err)) from None
    try:
        conn.execute("BEGIN IMMEDIATE")
        try:
            for table, sql in _STEPS.items():
                before = conn.total_changes
                conn.execute(sql)
                setattr(counts, table, conn.total_changes - before)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    except sqlite3.DatabaseError as err:
        if isinstance(err, sqlite3.OperationalError) and "locked" in str(err):
            raise
        raise JournalCorrupt(corrupt_message(Path(src), err)) from None
    finally:
        conn.execute("DETACH DATABASE src")
    return counts


def merge_shards(dst: Journal, sources: list[Path]) -> MergeCounts:
    total = MergeCounts()
    for src in sources:
        total.add(merge_journal(dst, src))
    return total
