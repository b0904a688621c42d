"""The run's side of a sharded run: split the items still to do, run the shard jobs on the chosen
executor, merge their journals into the run's journal. The session then aggregates from that
journal exactly as an unsharded run does (same records, same order, same bootstrap seed)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

from glotbench.engine.caller import CallStats
from glotbench.engine.journal import Journal
from glotbench.engine.shards.assign import shard_journals, split_items
from glotbench.engine.shards.executors import RUNNERS
from glotbench.engine.shards.merge import MergeCounts, merge_shards


@dataclass
class ShardedCall:
    """What the session reads from a run's caller (counters, why it stopped), summed over shards."""

    stats: CallStats = field(default_factory=CallStats)
    judge: SimpleNamespace | None = None
    guard: SimpleNamespace = field(default_factory=lambda: SimpleNamespace(stopped=None))
    shards: dict = field(default_factory=dict)
    model_notes: list[str] = field(default_factory=list)  # each shard's model's notes (replica counts, ...)


def merge_run(run_dir: Path, journal: Journal) -> MergeCounts:
    """Merge every shard journal under ``run_dir`` into the run's journal (idempotent)."""
    return merge_shards(journal, shard_journals(run_dir))


def make_jobs(plan, runs) -> list[dict]:
    """One job per shard with items to run: the run's plan for those items (RunPlan.shard_job)."""
    items = [(tr.task.name, s.id) for tr in runs for s in tr.todo]
    return [plan.shard_job(k, per_task) for k, per_task in enumerate(split_items(items, plan.settings.shards)) if per_task]


def run_sharded(plan, runs, journal: Journal, say, started: float) -> ShardedCall:
    """Run the shards of ``plan`` (engine/plan.py); ``started`` (epoch seconds) is when this session
    began: answers committed since then are this session's requests, a killed shard attempt's included."""
    cfg, run_dir = plan.settings, plan.out_dir
    jobs = make_jobs(plan, runs)
    say(f"{cfg.shards} shard(s), {len(jobs)} with items to run, on executor {cfg.executor}: "
        + ", ".join(f"shard {j['index']}: {sum(len(v) for v in j['items'].values())}" for j in jobs))
    results, failures = RUNNERS[cfg.executor](cfg, jobs, say)
    counts = merge_run(run_dir, journal)
    say(f"merged {counts.shards} shard journal(s): {counts.responses} response(s), {counts.samples} item record(s)")
    out = ShardedCall(shards={"n": cfg.shards, "executor": cfg.executor,
                              "results": {str(k): r for k, r in sorted(results.items())},
                              "failed": {str(k): why for k, why in sorted(failures.items())}})
    # the shards' own counters miss what a killed attempt sent; the merged journal does not
    out.stats.sent = journal.count_responses(since=started, role="model")
    judge_sent = journal.count_responses(since=started, role="judge")
    out.model_notes = [f"shard {k}: {note}" for k, r in sorted(results.items()) for note in r.get("model_notes") or []]
    for r in results.values():
        r.pop("model_notes", None)
        out.stats.cached += r.get("requests_cached", 0)
        out.stats.retries += r.get("retries", 0)
        out.stats.failed += r.get("failed_requests", 0)
    if judge_sent:
        out.judge = SimpleNamespace(stats=CallStats(sent=judge_sent))
    reasons = [f"shard {k} failed after {cfg.shard_retries} retr{'y' if cfg.shard_retries == 1 else 'ies'}: {why}"
               for k, why in sorted(failures.items())]
    reasons += [f"shard {r['index']} stopped: {r['stopped']}" for r in results.values() if r.get("stopped")]
    if reasons:
        out.guard.stopped = "; ".join(reasons)
    return out
