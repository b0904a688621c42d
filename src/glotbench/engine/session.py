"""One evaluation run: plan (engine/plan.py: every check before a request), execute (send what is
still to do through the journal, under the run's lock), report (summarise and write the results).
What the user sees goes through an observer (engine/observer.py); nothing here prints."""

from __future__ import annotations

import asyncio
import os
import re
import sqlite3
import time
from pathlib import Path
from typing import Any

from rich.markup import escape

from glotbench.engine.fingerprint import run_fingerprint
from glotbench.engine.journal import JOURNAL_NAME, Journal, corrupt_message
from glotbench.engine.lock import RunLock
from glotbench.engine.observer import RunObserver
from glotbench.engine.plan import RunPlan, cache_settings, plan, retry_policy
from glotbench.engine.run_stats import record_session, run_block, session_entry
from glotbench.engine.runner import TaskRun, execute, summarise
from glotbench.engine.stored_summary import restamp_results, stored_task_results, write_stamp
from glotbench.errors import GlotbenchError, JournalCorrupt, RunStopped
from glotbench.models.base import Model
from glotbench.output.model_meta import model_meta
from glotbench.output.results import export_samples, package_versions, write_json
from glotbench.output.run_result import RunResult, TaskResult, migrate_task
from glotbench.output.table import not_recorded_counts
from glotbench.settings import RunSettings


def _flush_held_writes(journal: Journal, observer: RunObserver, wait_s: float) -> bool:
    """Retry writing what the journal holds in memory (a full disk) for up to ``wait_s`` seconds,
    so answers already paid for are written, not sent again."""
    observer.say(f"[red]journal write failed[/] ({journal.write_error}): holding {journal.pending} write(s) in memory; "
                 f"retrying for {wait_s:g}s: free disk space now")
    deadline = time.monotonic() + wait_s
    while not journal.flush():
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.5)
    observer.say("journal: the held writes are now on disk")
    return True


def run_evaluation(cfg: RunSettings, *, console: Any = None, show_progress: bool = True,
                   model: Model | None = None, wait_lock: bool = False,
                   observer: RunObserver | None = None) -> tuple[dict, Path]:
    """Plan, then run (or resume) the evaluation. The run directory is locked for the whole run; a
    corrupt journal is one line naming ``glotbench doctor``; a run stopped by the circuit breaker
    writes results for what finished, then raises :class:`RunStopped`. ``observer``: who is told
    what happens (default: a rich ``console``, with a progress bar unless ``show_progress=False``)."""
    if observer is None:
        from glotbench.engine.display import ConsoleObserver

        observer = ConsoleObserver(console, show_progress)
    p = plan(cfg, observer, model)
    lock = RunLock(p.out_dir).acquire(wait=wait_lock, on_wait=lambda pid: observer.say(f"waiting: PID {pid} holds {p.out_dir}"))
    try:
        return _run_locked(p, observer)
    except sqlite3.DatabaseError as err:
        raise JournalCorrupt(corrupt_message(p.out_dir / JOURNAL_NAME, err)) from None
    finally:
        lock.release()


def _run_locked(p: RunPlan, observer: RunObserver) -> tuple[dict, Path]:
    cfg, out_dir, model = p.settings, p.out_dir, p.model
    out_dir.mkdir(parents=True, exist_ok=True)
    journal = Journal(out_dir / JOURNAL_NAME)
    try:
        previous = journal.get_meta("config") or {}
        if previous.get("judge") and cfg.judge and previous["judge"] != cfg.judge:
            observer.say(f"[yellow]note[/]: {out_dir} was judged by {previous['judge']}; items already graded keep "
                         f"that grade. To add {cfg.judge} as a second judge run: glotbench judge rerun {out_dir} --judge {cfg.judge}")
        journal.set_meta("config", cfg.model_dump())
        journal.set_meta("model_settings", model.settings())
        from glotbench.engine.shards.driver import merge_run

        if not journal.read_only:
            merge_run(out_dir, journal)  # shard journals of this run (a killed or earlier sharded session) first
        tasks = [tp.task for tp in p.tasks]
        reused = stored_task_results(journal, out_dir, cfg.model_dump(), tasks, cfg, model.settings())
        if reused is not None:  # a finished run, nothing changed: re-report without re-rendering or re-scoring
            results, out = _rereport(cfg, out_dir, journal, model, p.judge, p.skipped, *reused, observer=observer)
            if not journal.read_only:
                results = add_variant_spread(cfg, out_dir, results, headline_prompts(tasks), journal)
            return results, out
        runs = [tp.task_run(journal) for tp in p.tasks]
        for tr in runs:
            _warn(observer, tr.task.name, list(dict.fromkeys(getattr(tr.task, "load_warnings", []))))
        started = time.time()
        t0 = time.perf_counter()
        caller = execute_plan(p, runs, journal, observer)
        return report(p, runs, journal, caller, observer, session_entry(started, time.perf_counter() - t0, caller))
    finally:
        journal.close()


def execute_plan(p: RunPlan, runs: list[TaskRun], journal: Journal, observer: RunObserver):
    """Send every item still to do (through the journal: an answer already there is not sent again),
    on the run's shards or in this process; the caller (its counters, why it stopped) or None."""
    cfg, out_dir, model = p.settings, p.out_dir, p.model
    todo = sum(len(r.todo) for r in runs)
    done = sum(len(r.samples) for r in runs) - todo
    if not todo:
        observer.say(f"all {done} item(s) already in the journal {out_dir / JOURNAL_NAME}; no model calls")
        return None
    if journal.read_only:
        raise GlotbenchError(f"{out_dir}: the journal is on storage this process cannot write (an archived run) and "
                             f"{todo} item(s) are still to run; copy the run directory somewhere writable and rerun there "
                             f"(export, report and compare read it where it is)")
    already = f"{done} already done, " if done and not cfg.shards else ""
    observer.say(f"[bold]glotbench[/] {model.model_id} · {len(runs)} task(s) · {already}{todo} item(s) to run · output {out_dir}")
    started, t0 = time.time(), time.perf_counter()
    if cfg.shards:
        from glotbench.engine.shards.driver import run_sharded

        for m in (model, p.judge):  # the shards load their own: free an in-process model's memory now
            if m is not None:
                asyncio.run(m.aclose())
        return run_sharded(p, runs, journal, observer.say, started)
    counter = observer.progress(todo)
    try:
        return asyncio.run(execute(runs, model, journal, concurrency=cfg.concurrency or model.max_parallel or 8,
                                   policy=retry_policy(cfg), seed=cfg.seed, cache=cache_settings(cfg),
                                   on_progress=counter, judge_model=p.judge, say=observer.say))
    except KeyboardInterrupt:
        record_session(journal, out_dir, session_entry(started, time.perf_counter() - t0, interrupted=True,
                                                       journal=journal))
        raise
    finally:
        counter.close()


def report(p: RunPlan, runs: list[TaskRun], journal: Journal, caller, observer: RunObserver,
           entry: dict) -> tuple[dict, Path]:
    """Record the session, summarise every task from the journal's records and write the results
    (results.json, samples.jsonl, the re-report stamp); raises RunStopped when the run stopped early."""
    cfg, out_dir, model = p.settings, p.out_dir, p.model
    if getattr(caller, "cache_report", None):
        entry["shared_cache"] = caller.cache_report  # keyed on what, hits, damaged rows read as misses
    if getattr(caller, "served", None):
        journal.set_meta("served_model", caller.served)  # what the server said it serves (docs/cache.md)
    if getattr(caller, "shards", None):
        entry["shards"] = caller.shards  # per-shard counters, host and failures
    sessions = record_session(journal, out_dir, entry)
    stopped = caller.guard.stopped if caller is not None else None
    if journal.pending and not _flush_held_writes(journal, observer, cfg.journal_flush_wait):
        n = journal.held_answers
        raise RunStopped(f"cannot write the journal {journal.path} ({journal.write_error}): "
                         f"{journal.pending} write(s) held in memory were lost, {n} of them model answers; free disk "
                         f"space and rerun: {n} request(s) are sent again, the other rows are rebuilt from the journal")
    model_notes = caller.model_notes if hasattr(caller, "model_notes") else model.run_notes()  # sharded: the shards'
    for line in model_notes:
        observer.say(f"[yellow]note[/] {line}")
    for tr in runs:
        tr.release_samples()
    task_results = summarise(runs, journal, n_boot=cfg.bootstrap, seed=cfg.seed, out_dir=None if journal.read_only else out_dir)
    results = _write_results(cfg, out_dir, journal, model, p.judge, sessions, model_notes, task_results,
                             p.skipped, observer.say)
    if journal.read_only:
        _read_only_note(observer, out_dir)
        return results, out_dir
    export_samples(journal, out_dir / "samples.jsonl", {n: t["fingerprint"]["id"] for n, t in task_results.items()})
    write_stamp(journal, out_dir, cfg.model_dump(), runs, task_results)
    results = add_variant_spread(cfg, out_dir, results, headline_prompts(tr.task for tr in runs), journal)
    if stopped:
        raise RunStopped(f"run stopped early: {stopped}. Everything answered is in {out_dir / JOURNAL_NAME}; "
                         f"rerun the same command to resume")
    return results, out_dir


def headline_prompts(tasks) -> dict[str, str]:
    """Per task that declares prompt variants, the name of its headline prompt."""
    return {t.name: t.spec.headline_prompt for t in tasks if t.spec.prompts}


def add_variant_spread(cfg: RunSettings, out_dir: Path, results: dict, headlines: dict[str, str],
                       journal: Journal) -> dict:
    """A ``--prompt-variants`` run: the spread of each task's variants (report/variants.py) added to
    results.json as ``prompt_variants`` (the re-report stamp follows the rewritten file)."""
    if not cfg.prompt_variants:
        return results
    from glotbench.report.runs import load_run
    from glotbench.report.variants import spreads

    results = {**results, "prompt_variants": spreads(load_run(out_dir), headlines, cfg.bootstrap or 1000, cfg.seed)}
    write_json(out_dir / "results.json", results)
    restamp_results(journal, out_dir)
    return results


def _warn(observer: RunObserver, task: str, warns: list[str]) -> None:
    if warns:
        more = f" (and {len(warns) - 1} more)" if len(warns) > 1 else ""
        observer.say(f"[yellow]warning[/] {task}: {warns[0]}{more}")


def grades_from_file_block(model: Model) -> dict | None:
    """results.json's ``judge`` of a run scored from a recorded file's grades (no judge called)."""
    if not getattr(model, "has_grades", False):
        return None
    return {"model_id": model.grade_judge_id, "backend": "recorded-grades", "source": "grades from file",
            "file": str(model.path), "sha256": model.sha, "column": model.cols["grade"]}


def keep_earlier_results(out_dir: Path, fingerprint: str) -> str | None:
    """When ``out_dir/results.json`` holds another run's result (another run fingerprint: another
    setting such as ``--temperature``, or other tasks), keep it beside as ``results.<fingerprint>.json``
    before this run writes its own, and return the one line that says so (None when nothing is kept)."""
    path = out_dir / "results.json"
    if not path.is_file():
        return None
    try:
        import json

        old = json.loads(path.read_text(encoding="utf-8"))
        old_fp = str(old.get("fingerprint") or "")
    except (OSError, ValueError, AttributeError):
        old_fp = ""
    if old_fp == fingerprint:
        return None
    name = f"results.{re.sub(r'[^A-Za-z0-9_.-]', '_', old_fp) or 'unreadable'}.json"
    kept = out_dir / name
    if not kept.exists():
        os.replace(path, kept)
    what = f"run {old_fp}" if old_fp else "an unreadable results.json"
    return (f"{out_dir} held the result of another setting ({what}); kept it as {kept.name}, results.json is now "
            f"run {fingerprint} (docs/footguns.md: one -o per setting)")


def _write_results(cfg: RunSettings, out_dir: Path, journal: Journal, model: Model, judge_model: Model | None,
                   sessions: list[dict], model_notes: list[str], task_results: dict, skipped: dict,
                   say=None) -> dict:
    fps = {name: t["fingerprint"] for name, t in task_results.items()}
    errors = journal.errors()
    results = {
        "glotbench_version": package_versions()["glotbench"],
        "fingerprint": run_fingerprint(fps),
        "note": cfg.note,
        "model": model.settings(),
        # what the model's (judge's) server said it serves when the last requests were sent: ids,
        # model file, hash (models/served_identity.py); null where it could not say
        "served_model": journal.get_meta("served_model"),
        "config": cfg.model_dump(),
        "settings": cfg.request_settings(),
        "versions": package_versions(),
        "run": run_block(out_dir, sessions),  # totals over every session of this run, and the sessions
        "judge": judge_model.settings() if judge_model else grades_from_file_block(model),
        "model_notes": model_notes,
        "errors": errors[-50:],
        "tasks": task_results,
        "skipped_tasks": skipped,
    }
    meta = model_meta(cfg.model_meta, cfg.model_meta_file)
    if not meta.empty:
        results["model_meta"] = meta.to_json()  # compare --by (output/model_meta.py)
    absent = not_recorded_counts(errors)  # items a recorded-answers file lacks: not failures after retries
    if absent:
        results["not_recorded"] = {t: min(n, task_results[t].get("n_errors", n)) if t in task_results else n
                                   for t, n in absent.items()}
    # typed and versioned (stored task results of an older version migrated): results.json is RunResult.to_json()
    results = RunResult(results["fingerprint"], results["model"],
                        {n: TaskResult.from_json(n, migrate_task(t)) for n, t in task_results.items()}, raw=results).to_json()
    if not journal.read_only:
        kept = keep_earlier_results(out_dir, results["fingerprint"])
        if kept and say is not None:
            say(f"[yellow]note[/]: {escape(kept)}")
        write_json(out_dir / "results.json", results)
    return results


def _read_only_note(observer: RunObserver, out_dir: Path) -> None:
    observer.say(f"[yellow]note[/]: {out_dir} is on storage this process cannot write (an archived run): its journal "
                  f"was read, nothing was written (results.json and samples.jsonl are as they were)")


def _rereport(cfg: RunSettings, out_dir: Path, journal: Journal, model: Model, judge_model: Model | None, skipped: dict,
              task_results: dict, counts: list, *, observer: RunObserver) -> tuple[dict, Path]:
    """A finished run whose inputs are unchanged: its stored per-task results, this session added."""
    for name, _, warns in counts:
        _warn(observer, name, warns)
    t0, started = time.perf_counter(), time.time()
    observer.say(f"all {sum(n for _, n, _ in counts)} item(s) already in the journal {out_dir / JOURNAL_NAME}; "
                 f"no model calls (nothing changed since the run finished: results re-read, not recomputed)")
    sessions = record_session(journal, out_dir, session_entry(started, time.perf_counter() - t0, None))
    model_notes = model.run_notes()
    for line in model_notes:
        observer.say(f"[yellow]note[/] {line}")
    results = _write_results(cfg, out_dir, journal, model, judge_model, sessions, model_notes, task_results, skipped,
                             observer.say)
    if journal.read_only:
        _read_only_note(observer, out_dir)
        return results, out_dir
    restamp_results(journal, out_dir)
    return results, out_dir
