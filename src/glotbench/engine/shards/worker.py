"""One shard job: run the items the driver assigned to shard K against the shard's own journal.

The job is a plain JSON-able dict (Ray, submitit and ``python -m`` all carry it as it is):
``index``, ``run_dir``, ``config`` (the run's settings), ``items`` (task -> sample ids) and
``fingerprints`` (task -> the driver's task fingerprint, so every shard files its records under
the run's keys even where a model file lives at another path). The shard's journal reads
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

from glotbench.tasks.names import DEFAULT_SUITE
from glotbench.engine.shards.assign import shard_dir

JOURNAL_NAME = "journal.sqlite"


def retry_policy(cfg):
    from glotbench.engine.retry import RetryPolicy

    return RetryPolicy(max_attempts=max(1, cfg.max_retries + 1), base_delay=cfg.retry_base_delay, timeout=cfg.timeout,
                       max_retry_after=cfg.max_retry_after, item_budget_s=cfg.retry_budget_item,
                       run_budget_s=cfg.retry_budget_run, breaker_failures=cfg.breaker_failures)


def run_shard(job: dict) -> dict:
    """Run one shard to the end; return its counters (requests sent, cached, ...)."""
    from glotbench.catalog import build

    build()  # a composition root (a subprocess, Ray or Slurm worker): its process's catalog
    from glotbench.engine.journal import Journal
    from glotbench.engine.lock import RunLock
    from glotbench.engine.runner import TaskRun, execute, task_mode
    from glotbench.tasks.request_settings import RequestSettings
    from glotbench.engine.session import load_judge, load_model_from_config
    from glotbench.settings import RunSettings
    from glotbench.tasks.registry import resolve
    from glotbench.testing import faults

    t0 = time.perf_counter()
    cfg = RunSettings.model_validate(job["config"])
    run_dir, index = Path(job["run_dir"]), int(job["index"])
    sdir = shard_dir(run_dir, index)
    lock = RunLock(sdir).acquire()
    journal = main = None
    try:
        wanted = job["items"]
        tasks = [t for t in resolve(cfg.tasks or [DEFAULT_SUITE]) if t.name in wanted]
        model = load_model_from_config(cfg)
        judge_model = None
        if cfg.judge and any(t.needs_judge for t in tasks):
            judge_model = load_judge(cfg.judge, cfg.judge_options(), cfg.timeout)
        journal = Journal(sdir / JOURNAL_NAME)
        if (run_dir / JOURNAL_NAME).is_file():
            main = Journal(run_dir / JOURNAL_NAME)
            journal.fallback = main
        journal.set_meta("shard", {"index": index, "config": job["config"]})
        faults.arm(journal, index, sdir)
        runs = []
        for task in tasks:
            ids = set(wanted[task.name])
            fp = job["fingerprints"][task.name]
            req = RequestSettings.of(cfg)
            samples = [s for s in task.run_samples(req) if s.id in ids]
            done = journal.scored_ids(fp["id"], task.name)
            runs.append(TaskRun(task=task, mode=task_mode(task, req), fingerprint=fp, samples=samples,
                                todo=[s for s in samples if s.id not in done], settings=req))
        todo = sum(len(r.todo) for r in runs)
        concurrency = cfg.concurrency or model.max_parallel or 8
        caller = asyncio.run(execute(runs, model, journal, cfg, concurrency=concurrency, policy=retry_policy(cfg),
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
