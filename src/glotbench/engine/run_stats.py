"""A run's statistics over all the sessions (invocations) that worked on it.

Each ``glotbench run`` of one run directory is a session; its numbers (requests sent, cached,
retried, failed, judge requests, seconds) are appended to the journal's ``sessions`` list, an
interrupted one too. ``results.json``'s ``run`` block holds the totals over every session plus
the list, so a rerun that finds everything done (0 requests, 0.02 s) keeps the original run's
numbers instead of overwriting them. A journal written before sessions were kept seeds the
list from the ``run`` block of its results.json.
"""

from __future__ import annotations

import json
from pathlib import Path

from glotbench.engine.journal import Journal

META_KEY = "sessions"
COUNTS = ("requests_sent", "requests_cached", "retries", "failed_requests", "judge_requests_sent")


def session_entry(started: float, elapsed: float, caller=None, *, interrupted: bool = False,
                  journal: Journal | None = None) -> dict:
    """One session's numbers; from the caller's counters, or (interrupted) the journal's rows."""
    entry: dict = {"started": round(started, 3), "elapsed_s": round(elapsed, 3)}
    if caller is not None:
        entry.update(requests_sent=caller.stats.sent, requests_cached=caller.stats.cached,
                     retries=caller.stats.retries, failed_requests=caller.stats.failed,
                     judge_requests_sent=caller.judge.stats.sent if caller.judge else 0)
        shared = caller.stats.shared_hits + (caller.judge.stats.shared_hits if caller.judge else 0)
        if shared:
            entry["requests_from_shared_cache"] = shared
    elif interrupted and journal is not None:
        entry.update(requests_sent=journal.count_responses(since=started, role="model"),
                     judge_requests_sent=journal.count_responses(since=started, role="judge"))
    else:
        entry.update({k: 0 for k in COUNTS})
    if interrupted:
        entry["interrupted"] = True
    return entry


def _seed(out_dir: Path) -> list[dict]:
    """Sessions of a run directory written before sessions were kept: its results.json's numbers."""
    try:
        run = json.loads((out_dir / "results.json").read_text(encoding="utf-8")).get("run") or {}
    except (OSError, ValueError):
        return []
    if "sessions" in run or "elapsed_s" not in run:
        return []
    return [{"started": None, "elapsed_s": run.get("elapsed_s") or 0.0, **{k: run.get(k) or 0 for k in COUNTS},
             "from": "results.json"}]


def record_session(journal: Journal, out_dir: Path, entry: dict) -> list[dict]:
    sessions = journal.get_meta(META_KEY)
    if sessions is None:
        sessions = _seed(out_dir)
    sessions.append(entry)
    journal.set_meta(META_KEY, sessions)
    return sessions


def run_block(out_dir: Path, sessions: list[dict]) -> dict:
    """results.json's ``run`` block: totals over every session, then the sessions themselves."""
    totals = {k: sum(s.get(k) or 0 for s in sessions) for k in COUNTS}
    return {"output_dir": str(out_dir), "elapsed_s": round(sum(s.get("elapsed_s") or 0.0 for s in sessions), 3),
            **totals, "sessions": sessions}
