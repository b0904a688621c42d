"""One shard job: run the items the driver assigned to shard K against the shard's own journal.

The job is a plain JSON-able dict (Ray, submitit and ``python -m`` all carry it as it is):
``index``, ``run_dir``, ``config`` (the run's settings), ``items`` (task -> sample ids) and
``tasks`` (task -> the plan's request settings, mode and fingerprint: engine/plan.py's
``RunPlan.shard_job``, so every shard files its records under the run's keys even where a model
file lives at another path, and re-derives no setting). The shard's journal reads
answers through to the run's journal, so nothing merged from an earlier session is sent again;
a rerun of the shard (Ray's retry, a resubmission) resumes from its journal.

    python -m glotbench.engine.shards.worker JOB.json RESULT.json
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
import time
from pathlib import Path

from glotbench.engine.journal import JOURNAL_NAME
from glotbench.engine.shards.assign import shard_dir


def run_shard(job: dict) -> dict:
    """Run one shard to the end; return its counters (requests sent, cached, ...)."""
    from glotbench.catalog import build

    build()  # a composition root (a subprocess, Ray or Slurm worker): its process's catalog
    from glotbench.engine.journal import Journal
    from glotbench.engine.lock import RunLock
    from glotbench.engine.plan import cache_settings, retry_policy, shard_plan
    from glotbench.engine.runner import execute
    from glotbench.models.loading import load_judge, load_model_from_config
    from glotbench.testing import faults

    t0 = time.perf_counter()
    cfg, plans = shard_plan(job)
    run_dir, index = Path(job["run_dir"]), int(job["index"])
    sdir = shard_dir(run_dir, index)
    lock = RunLock(sdir).acquire()
    journal = main = None
    try:
        model = load_model_from_config(cfg)
        judge_model = None
        if cfg.judge and any(tp.task.needs_judge for tp in plans):
            judge_model = load_judge(cfg.judge, cfg.judge_options(), cfg.timeout)
        journal = Journal(sdir / JOURNAL_NAME)
        if (run_dir / JOURNAL_NAME).is_file():
            main = Journal(run_dir / JOURNAL_NAME)
            journal.fallback = main
        journal.set_meta("shard", {"index": index, "config": job["config"]})
        faults.arm(journal, index, sdir)
        runs = []
        for tp in plans:
            ids = set(job["items"][tp.task.name])
            tp.samples = [s for s in tp.task.run_samples(tp.request) if s.id in ids]
            runs.append(tp.task_run(journal))
        todo = sum(len(r.todo) for r in runs)
        caller = asyncio.run(execute(runs, model, journal, concurrency=cfg.concurrency or model.max_parallel or 8,
                                     policy=retry_policy(cfg), seed=cfg.seed, cache=cache_settings(cfg),
                                     judge_model=judge_model))
        deadline = time.monotonic() + cfg.journal_flush_wait
        while not journal.flush() and time.monotonic() < deadline:
            time.sleep(0.5)
        stopped = caller.guard.stopped
        if journal.pending:
            stopped = f"cannot write the shard journal {journal.path} ({journal.write_error})"
        return {"index": index, "items": todo, "requests_sent": caller.stats.sent,
                "requests_cached": caller.stats.cached, "retries": caller.stats.retries,
                "failed_requests": caller.stats.failed,
                "judge_requests_sent": caller.judge.stats.sent if caller.judge else 0,
                "stopped": stopped, "model_notes": model.run_notes(), "host": socket.gethostname(), "pid": os.getpid(),
                "elapsed_s": round(time.perf_counter() - t0, 3)}
    finally:
        for j in (journal, main):
            if j is not None:
                j.close()
        lock.release()


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print("usage: python -m glotbench.engine.shards.worker JOB.json RESULT.json", file=sys.stderr)
        return 2
    job = json.loads(Path(args[0]).read_text(encoding="utf-8"))
    result = run_shard(job)
    tmp = Path(args[1]).with_suffix(".tmp")
    tmp.write_text(json.dumps(result), encoding="utf-8")
    os.replace(tmp, args[1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
