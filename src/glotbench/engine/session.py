"""One evaluation run end to end: resolve tasks, open the journal, call, score, write outputs."""

from __future__ import annotations

import asyncio
import os
import re
import sqlite3
import time
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from glotbench.tasks.request_settings import RequestSettings
from glotbench.tasks.names import DEFAULT_SUITE
from glotbench.engine.config import RunConfig
from glotbench.engine.fingerprint import run_fingerprint
from glotbench.engine.journal import Journal, corrupt_message
from glotbench.engine.lock import RunLock
from glotbench.engine.retry import RetryPolicy
from glotbench.engine.run_checks import (check_mode, check_same_model, check_same_overrides, model_identity,
                                         plain_layout_notes)
from glotbench.engine.run_stats import record_session, run_block, session_entry
from glotbench.engine.stored_summary import restamp_results, stored_task_results, write_stamp
from glotbench.errors import JournalCorrupt, RunStopped
from glotbench.engine.runner import execute, plan, summarise, task_mode
from glotbench.models.base import Model, canonical_json, sha256_hex
from glotbench.output.results import export_samples, package_versions, write_json
from glotbench.output.run_result import RunResult, TaskResult, migrate_task
from glotbench.output.table import not_recorded_counts
from glotbench.tasks.registry import resolve

JOURNAL_NAME = "journal.sqlite"
REPLICA_BACKENDS = ("openai", "vllm", "ollama")  # backends that spread requests over several --base-url replicas


def default_output_dir(model_id: str, cfg: RunConfig, model_settings: dict | None = None) -> Path:
    """Deterministic: the same command lands in the same directory, which is what makes resume work.
    The model's settings (chat or plain, ...) are part of it: another setting, another directory."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", model_id.split("@")[0])[:60].strip("_")
    ident = {"model": model_id, "tasks": cfg.tasks, **cfg.request_settings()}
    if model_settings:
        ident["model_settings"] = model_identity(model_settings)
    if cfg.judge:
        ident["judge"] = cfg.judge  # another judge, another directory (or add one with `glotbench judge`)
    key = sha256_hex(canonical_json(ident))[:10]
    return Path("runs") / slug / key


def load_model_from_config(cfg: RunConfig) -> Model:
    from glotbench.models.registry import load_cli_model

    kw = dict(cfg.model_args)
    if cfg.chat_template:
        kw["chat_template"] = read_chat_template(cfg.chat_template)
    if cfg.base_url:
        backend = (cfg.model or "").partition(":")[0].lower()
        if len(cfg.base_urls) > 1 and backend not in REPLICA_BACKENDS:
            from glotbench.errors import GlotbenchError

            raise GlotbenchError(f"--base-url with {len(cfg.base_urls)} URLs (replicas) works with "
                                 f"{', '.join(b + ':' for b in REPLICA_BACKENDS)} models, not {cfg.model}")
    if cfg.api_key_env:
        kw["api_key_env"] = cfg.api_key_env
    return load_cli_model(cfg.model, kw, base_url=cfg.base_url, timeout=cfg.timeout or None)


def read_chat_template(path: str) -> str:
    """The --chat-template file's text; a missing or unreadable file, or bad Jinja, is one line."""
    import jinja2

    from glotbench.errors import GlotbenchError

    try:
        text = Path(path).expanduser().read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise GlotbenchError(f"--chat-template {path}: cannot read it ({err})") from None
    from glotbench.prompts import sandbox

    try:
        sandbox.environment().parse(text)
    except jinja2.TemplateSyntaxError as err:
        raise GlotbenchError(f"--chat-template {path}, line {err.lineno}: {err.message}") from None
    why = sandbox.check(text)
    if why is not None:  # the backends render it in jinja2's sandbox too (llama-cpp-python, transformers)
        raise GlotbenchError(f"--chat-template {path}: {why}")
    return text


def load_judge(spec: str, judge_args: dict, timeout: float | None = None) -> Model:
    """A judge is any model glotbench can run; ``judge_args`` may carry base_url / api_key_env."""
    from glotbench.models.registry import load_cli_model

    return load_cli_model(spec, judge_args, timeout=timeout or None, flag="--judge-args")


def drop_tasks_without_data(tasks, cfg: RunConfig) -> tuple[list, dict[str, str]]:
    """Tasks that came in through a suite or glob and whose data file is absent are set aside
    (name -> the DataError's message) so the rest of the suite still runs. A task named on its
    own, or a selection where no task has its data, fails with the DataError as before."""
    from glotbench.errors import DataError

    named = {n.strip() for raw in (cfg.tasks or []) for n in raw.split(",")}
    keep, skipped = [], {}
    for t in tasks:
        if t.spec.dataset.format != "hf" or t.spec.dataset.splits:  # a Hub dataset kept in a local folder counts too
            try:
                t.split_path(cfg.split or t.spec.dataset.eval_split)
            except DataError as err:
                if (t.name in named and not cfg.skip_missing_data) or len(tasks) == 1:
                    raise
                skipped[t.name] = str(err)
                continue
        keep.append(t)
    if not keep:
        raise DataError(f"no selected task has its data: {next(iter(skipped.values()))}")
    return keep, skipped


def _may_set_aside(task, tasks: list, cfg: RunConfig) -> bool:
    """A task that came in through a suite or glob (or any task of a --skip-missing-data run, as a
    Czech-Bench config is) may be set aside; one named on its own, or alone, fails the run."""
    named = {n.strip() for raw in (cfg.tasks or []) for n in raw.split(",")}
    return len(tasks) > 1 and (task.name not in named or cfg.skip_missing_data)


def load_or_set_aside(tasks, cfg: RunConfig, skipped: dict[str, str]) -> tuple[list, dict[str, list]]:
    """Check every task's prompt files and read its items before the model is loaded. A task whose
    data is there but cannot be read (a file in another layout, a record the task cannot take) is
    set aside like a task without data: ``skipped[name]`` = its one-line reason, prefixed
    ``cannot load: ``; the others run (the Czech-Bench framework goes on when one benchmark fails).
    Returns the tasks kept and their items."""
    from glotbench.errors import DataError, GlotbenchError

    keep, loaded = [], {}
    for t in tasks:
        try:
            t.check_ready()
            loaded[t.name] = t.run_samples(RequestSettings.of(cfg))
        except Exception as err:  # noqa: BLE001 - any failure to read a task's data sets that task aside
            if not _may_set_aside(t, tasks, cfg):
                raise
            text = str(err) if isinstance(err, GlotbenchError) else f"{type(err).__name__}: {err}"
            skipped[t.name] = "cannot load: " + (text.strip().splitlines() or [type(err).__name__])[0]
            continue
        keep.append(t)
    if not keep:
        raise DataError(f"no selected task could be loaded: {next(iter(skipped.values()))}")
    return keep, loaded


def light_model(cfg: RunConfig) -> Model | None:
    """The run's model when building it loads no weights and sends nothing (an HTTP backend,
    ``light`` in models/backends.py), so it can be built before any item is read; None otherwise,
    or when building it fails (the run then builds it at its usual place and reports the error there)."""
    from glotbench.models.backends import BACKENDS

    try:
        if not BACKENDS.get((cfg.model or "embedded").partition(":")[0].strip().lower()).light:
            return None
        return load_model_from_config(cfg)
    except Exception:  # noqa: BLE001 - reported where the model is normally built, after the data checks
        return None


def finished_unchanged(cfg: RunConfig, tasks: list, model: Model) -> bool:
    """True when ``tasks`` ran to the end in the run's output directory and nothing they depend on
    changed since (engine/stored_summary.py): the run then re-reports without reading any item. Every
    task's own files (a grader, a prompt file) are still checked; a task that fails that check, or
    that was set aside in that run, takes the full path."""
    from glotbench.engine.stored_summary import can_reuse

    out_dir = Path(cfg.output) if cfg.output else default_output_dir(model.model_id, cfg, model.settings())
    if not (out_dir / JOURNAL_NAME).is_file():
        return False
    try:
        for t in tasks:
            t.check_ready()
    except Exception:  # noqa: BLE001 - load_or_set_aside reports it or sets the task aside
        return False
    return can_reuse(out_dir, JOURNAL_NAME, cfg.model_dump(), tasks, cfg, model.settings())


def fetch_missing_data(tasks, cfg: RunConfig, console: Console, *, show_progress: bool = True) -> None:
    """Pull the data of tasks that no data root holds (saying what, from where, how big, under which
    licence), unless the run is offline (``--offline``, ``HF_HUB_OFFLINE``): then the missing data
    is one line naming the task and ``glotbench data pull``. A failed pull is that task's reason."""
    from glotbench.sources.pull import offline

    lacking = [t for t in tasks if t.spec.source.fetch and t.data_location() is None
               and not all(o.manual for o in t.spec.source.fetch)]
    if not lacking or cfg.offline or offline():
        return
    from glotbench.sources.lock import Lock
    from glotbench.sources.pull import pull_tasks

    from glotbench.sources.progress import Transfers

    failed = pull_tasks(lacking, Lock.load(), say=lambda line: console.print(line, markup=False, highlight=False),
                        bar=Transfers(console) if show_progress else None)
    for t in lacking:
        if t.name in failed:
            t.data_problem = failed[t.name]


DIFFERS = "data differs from its source"


def check_data_unchanged(tasks, cfg: RunConfig, skipped: dict[str, str], console: Console) -> list:
    """Every file a task declares, checked against its declared (or locked, or pulled) size and
    sha256 before the model is loaded. A file in the cache that differs refuses the task in one line
    naming the file and ``glotbench data pull --force`` (a task from a suite is set aside with that
    line); ``--allow-modified-data`` runs it, and ``task.data_differs`` lists the files, which every
    output marks. A local root's copy (GLOTBENCH_DATA, shared/data: hand-made or edited on purpose,
    which a pull would not replace) runs, marked the same way. Returns the tasks kept."""
    from glotbench.errors import DataError
    from glotbench.sources.lock import Lock
    from glotbench.sources.pull import verify_task

    lock = None
    keep = []
    for t in tasks:
        loc = t.data_location() if t.spec.source.fetch else None
        if loc is None:
            keep.append(t)
            continue
        if lock is None:
            lock = Lock.load()
        bad = [c for c in verify_task(t.spec, loc.root, lock) if c.status == "mismatch"]
        if not bad:
            keep.append(t)
            continue
        files = ", ".join(c.path for c in bad)
        if cfg.allow_modified_data or loc.kind != "cache":
            # a local root (GLOTBENCH_DATA, shared/data) is the user's own copy: run, and say so everywhere
            t.data_differs = [c.path for c in bad]
            why = "--allow-modified-data" if cfg.allow_modified_data else f"the copy in {loc.root}"
            console.print(f"[yellow]{DIFFERS}[/] {t.name}: {files} ({why}; every result marked)", highlight=False)
            keep.append(t)
            continue
        line = (f"task {t.name}: {bad[0].path} in the cache differs from its source ({bad[0].detail}"
                f"{f'; {len(bad) - 1} more file(s)' if len(bad) > 1 else ''}): fetch it again with: glotbench data "
                f"pull {t.name} --force (or run it as it is with --allow-modified-data; results marked)")
        if _may_set_aside(t, tasks, cfg):
            skipped[t.name] = line
        else:
            raise DataError(line)
    if not keep:
        raise DataError(f"no selected task has its data: {next(iter(skipped.values()))}")
    return keep


def recorded_grades_given(cfg: RunConfig) -> bool:
    """The run's model is a recorded file with a grade column (checked before the model is loaded)."""
    spec = cfg.model or ""
    return spec.split(":", 1)[0].lower() == "recorded" and bool((cfg.model_args or {}).get("grade"))


def check_judge(tasks, judge_spec: str | None, grades_from_file: bool = False) -> None:
    """A judged task needs ``--judge``, unless the answers come with their grades (``recorded:FILE -M
    grade=COL``): those grades are then the score (docs/recorded-answers.md)."""
    from glotbench.errors import GlotbenchError

    need = [t.name for t in tasks if t.needs_judge]
    if need and not judge_spec and not grades_from_file:
        raise GlotbenchError(f"task(s) {', '.join(need)} are graded by an LLM judge: pass --judge MODEL "
                             "(e.g. --judge openai:gpt-4o or --judge llamacpp:/path/model.gguf), or score "
                             "released grades: --model recorded:FILE -M grade=COLUMN")


def _flush_held_writes(journal: Journal, console: Console, wait_s: float) -> bool:
    """Retry writing what the journal holds in memory (a full disk) for up to ``wait_s`` seconds,
    so answers already paid for are written, not sent again."""
    console.print(f"[red]journal write failed[/] ({journal.write_error}): holding {journal.pending} write(s) in memory; "
                  f"retrying for {wait_s:g}s: free disk space now")
    deadline = time.monotonic() + wait_s
    while not journal.flush():
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.5)
    console.print("journal: the held writes are now on disk")
    return True


def rate_text(done: int, elapsed: float) -> str:
    """Items per second, or seconds per item when under one a second (a slow run's ``0.0 it/s``
    said nothing); empty before the first item."""
    if done <= 0 or elapsed <= 0:
        return ""
    rate = done / elapsed
    return f"{rate:.1f} it/s" if rate >= 1 else f"{elapsed / done:.1f} s/it"


class _ProgressCounter:
    """The run's progress: items done (the bar), their rate, errors, and the answers received so far
    (a batched model answers many items' requests together, and an item with several requests,
    Best-of-N or a judge, is done only with its last one: the count moves before the bar does)."""

    def __init__(self, progress: Progress | None, task_id, t0: float):
        self.progress, self.task_id, self.t0 = progress, task_id, t0
        self.done = self.errors = self.answers = 0

    def __call__(self, status: str) -> None:
        self.done += 1
        if status == "error":
            self.errors += 1
        if self.progress is not None:
            self.progress.update(self.task_id, advance=1, rate=rate_text(self.done, time.perf_counter() - self.t0),
                                 errors=self.errors, answers=self.answers)

    def answer(self) -> None:
        """One answer received (model or judge)."""
        self.answers += 1
        if self.progress is not None:
            self.progress.update(self.task_id, answers=self.answers)


def _check_journal_model(out_dir: Path, current: dict, cfg: RunConfig) -> None:
    journal = Journal(out_dir / JOURNAL_NAME)
    try:
        check_same_model(journal.get_meta("model_settings"), current, out_dir)
        check_same_overrides(journal.get_meta("config"), cfg.model_dump(), out_dir)
    finally:
        journal.close()


def run_evaluation(cfg: RunConfig, *, console: Console | None = None, show_progress: bool = True,
                   model: Model | None = None, wait_lock: bool = False) -> tuple[dict, Path]:
    """Run (or resume) the evaluation. The run directory is locked for the whole run; a corrupt
    journal is one line naming ``glotbench doctor``; a run stopped by the circuit breaker writes
    results for what finished, then raises :class:`RunStopped`."""
    console = console or Console(stderr=True, soft_wrap=True)
    # sharding options: a missing extra (ray, submitit) or an option that would be ignored is one
    # line before any model is loaded
    from glotbench.engine.shards.executors import check_settings

    check_settings(cfg)
    selected = resolve(cfg.tasks or [DEFAULT_SUITE])
    fetch_missing_data(selected, cfg, console, show_progress=show_progress)
    tasks, skipped = drop_tasks_without_data(selected, cfg)
    tasks = check_data_unchanged(tasks, cfg, skipped, console)
    model = model or light_model(cfg)
    if model is not None and finished_unchanged(cfg, tasks, model):
        loaded = None  # a re-report: no item is read or rendered (the run checks the stamp again under its lock)
    else:
        tasks, loaded = load_or_set_aside(tasks, cfg, skipped)
    for name, why in skipped.items():
        console.print(f"[yellow]skipped[/] {name}: {why}")
    check_judge(tasks, cfg.judge, grades_from_file=bool(getattr(model, "has_grades", False)) if model is not None
                else recorded_grades_given(cfg))
    if loaded is not None:
        for t in tasks:  # before any model is loaded: one line, nothing sent
            t.check_fewshot(cfg.num_fewshot)
    from glotbench.tasks.names import check_packs_for_mode

    check_packs_for_mode(tasks, lambda t: task_mode(t, RequestSettings.of(cfg)))
    if cfg.gen_kwargs:
        from glotbench.engine.overrides import check_gen_kwargs
        from glotbench.tasks.request_settings import one_value_per_knob

        check_gen_kwargs(cfg.gen_kwargs)
        one_value_per_knob(cfg)
    model = model or load_model_from_config(cfg)
    if cfg.gen_kwargs:  # a knob the backend has no counterpart of: one line before any request
        from glotbench.engine.overrides import backend_knobs

        model.check_knobs(backend_knobs(cfg.gen_kwargs))
    if getattr(model, "notice", None):
        console.print(f"[yellow]note[/]: {model.notice}")
    for note in check_mode(tasks, cfg.mode, model, lambda t: task_mode(t, RequestSettings.of(cfg))) + plain_layout_notes(tasks, model, cfg):
        console.print(f"[yellow]note[/]: {note}")
    judge_model = None
    if cfg.judge and any(t.needs_judge for t in tasks):
        judge_model = load_judge(cfg.judge, cfg.judge_options(), cfg.timeout)
    elif getattr(model, "has_grades", False) and any(t.needs_judge for t in tasks):
        console.print(f"[yellow]note[/]: grades from file: the judged task(s) are scored from column "
                      f"{model.cols['grade']!r} of {model.path.name}, no judge called", markup=True, highlight=False)
    out_dir = Path(cfg.output) if cfg.output else default_output_dir(model.model_id, cfg, model.settings())
    if cfg.output and (out_dir / JOURNAL_NAME).is_file():
        _check_journal_model(out_dir, model.settings(), cfg)
    lock = RunLock(out_dir).acquire(
        wait=wait_lock, on_wait=lambda pid: console.print(f"waiting: PID {pid} holds {out_dir}"))
    try:
        return _run_locked(cfg, out_dir, tasks, skipped, model, judge_model, console=console,
                           show_progress=show_progress, loaded=loaded)
    except sqlite3.DatabaseError as err:
        raise JournalCorrupt(corrupt_message(out_dir / JOURNAL_NAME, err)) from None
    finally:
        lock.release()


def _run_locked(cfg: RunConfig, out_dir: Path, tasks: list, skipped: dict, model: Model, judge_model: Model | None,
                *, console: Console, show_progress: bool, loaded: dict | None = None) -> tuple[dict, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    journal = Journal(out_dir / JOURNAL_NAME)
    settings = cfg
    try:
        previous = journal.get_meta("config") or {}
        if previous.get("judge") and cfg.judge and previous["judge"] != cfg.judge:
            console.print(f"[yellow]note[/]: {out_dir} was judged by {previous['judge']}; items already graded keep "
                          f"that grade. To add {cfg.judge} as a second judge run: glotbench judge {out_dir} --judge {cfg.judge}")
        journal.set_meta("config", cfg.model_dump())
        journal.set_meta("model_settings", model.settings())
        from glotbench.engine.shards.driver import merge_run

        if not journal.read_only:
            merge_run(out_dir, journal)  # shard journals of this run (a killed or earlier sharded session) first
        reused = stored_task_results(journal, out_dir, cfg.model_dump(), tasks, settings, model.settings())
        if reused is not None:  # a finished run, nothing changed: re-report without re-rendering or re-scoring
            return _rereport(cfg, out_dir, journal, model, judge_model, skipped, *reused, console=console)
        return _execute_and_report(cfg, out_dir, journal, tasks, settings, model, judge_model, skipped,
                                   console=console, show_progress=show_progress, loaded=loaded)
    finally:
        journal.close()


def _execute_and_report(cfg: RunConfig, out_dir: Path, journal: Journal, tasks: list, settings: RunConfig, model: Model,
                        judge_model: Model | None, skipped: dict, *, console: Console, show_progress: bool,
                        loaded: dict | None = None) -> tuple[dict, Path]:
    """Plan, send what is still to do, summarise and write a run's results (inside its lock and journal)."""
    from glotbench.engine.shards.driver import run_sharded

    runs = plan(tasks, settings, model.settings(), journal, loaded=loaded)
    for tr in runs:
        _warn(console, tr.task.name, list(dict.fromkeys(getattr(tr.task, "load_warnings", []))))
    todo = sum(len(r.todo) for r in runs)
    if todo and journal.read_only:
        from glotbench.errors import GlotbenchError

        raise GlotbenchError(f"{out_dir}: the journal is on storage this process cannot write (an archived run) and "
                             f"{todo} item(s) are still to run; copy the run directory somewhere writable and rerun there "
                             f"(export, report and compare read it where it is)")
    done = sum(len(r.samples) for r in runs) - todo
    concurrency = cfg.concurrency or model.max_parallel or 8
    policy = RetryPolicy(max_attempts=max(1, cfg.max_retries + 1), base_delay=cfg.retry_base_delay, timeout=cfg.timeout,
                         max_retry_after=cfg.max_retry_after, item_budget_s=cfg.retry_budget_item,
                         run_budget_s=cfg.retry_budget_run, breaker_failures=cfg.breaker_failures)
    t0, started = time.perf_counter(), time.time()
    caller = None
    if todo and cfg.shards:
        console.print(f"[bold]glotbench[/] {model.model_id} · {len(runs)} task(s) · {todo} item(s) to run · output {out_dir}")
        for m in (model, judge_model):  # the shards load their own: free an in-process model's memory now
            if m is not None:
                asyncio.run(m.aclose())
        caller = run_sharded(cfg, out_dir, runs, journal, console.print, started)
    elif todo:
        already = f"{done} already done, " if done else ""
        console.print(f"[bold]glotbench[/] {model.model_id} · {len(runs)} task(s) · {already}{todo} item(s) to run · output {out_dir}")
        progress = None
        if show_progress:
            progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                TextColumn("{task.fields[rate]}"), TextColumn("answers {task.fields[answers]}"),
                                TextColumn("errors {task.fields[errors]}"),
                                TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(), console=console,
                                transient=False)
            progress.start()
        pid = progress.add_task("items", total=todo, rate="", errors=0, answers=0) if progress else None
        counter = _ProgressCounter(progress, pid, t0)
        try:
            caller = asyncio.run(execute(runs, model, journal, settings, concurrency=concurrency, policy=policy,
                                         on_progress=counter, judge_model=judge_model,
                                         say=lambda line: console.print(line, soft_wrap=True)))
        except KeyboardInterrupt:
            record_session(journal, out_dir, session_entry(started, time.perf_counter() - t0, interrupted=True,
                                                           journal=journal))
            raise
        finally:
            if progress:
                progress.stop()
    else:
        console.print(f"all {sum(len(r.samples) for r in runs)} item(s) already in the journal {out_dir / JOURNAL_NAME}; no model calls")
    entry = session_entry(started, time.perf_counter() - t0, caller)
    if getattr(caller, "cache_report", None):
        entry["shared_cache"] = caller.cache_report  # keyed on what, hits, damaged rows read as misses
    if getattr(caller, "served", None):
        journal.set_meta("served_model", caller.served)  # what the server said it serves (docs/cache.md)
    if getattr(caller, "shards", None):
        entry["shards"] = caller.shards  # per-shard counters, host and failures
    sessions = record_session(journal, out_dir, entry)
    stopped = caller.guard.stopped if caller is not None else None
    if journal.pending and not _flush_held_writes(journal, console, cfg.journal_flush_wait):
        n = journal.held_answers
        raise RunStopped(f"cannot write the journal {journal.path} ({journal.write_error}): "
                         f"{journal.pending} write(s) held in memory were lost, {n} of them model answers; free disk "
                         f"space and rerun: {n} request(s) are sent again, the other rows are rebuilt from the journal")
    model_notes = caller.model_notes if hasattr(caller, "model_notes") else model.run_notes()  # sharded: the shards'
    for line in model_notes:
        console.print(f"[yellow]note[/] {line}")
    for tr in runs:
        tr.release_samples()
    task_results = summarise(runs, journal, n_boot=cfg.bootstrap, seed=cfg.seed, out_dir=None if journal.read_only else out_dir)
    results = _write_results(cfg, out_dir, journal, model, judge_model, sessions, model_notes, task_results,
                             skipped, console)
    if journal.read_only:
        _read_only_note(console, out_dir)
        return results, out_dir
    export_samples(journal, out_dir / "samples.jsonl", {n: t["fingerprint"]["id"] for n, t in task_results.items()})
    write_stamp(journal, out_dir, cfg.model_dump(), runs, task_results)
    if stopped:
        raise RunStopped(f"run stopped early: {stopped}. Everything answered is in {out_dir / JOURNAL_NAME}; "
                         f"rerun the same command to resume")
    return results, out_dir


def _warn(console: Console, task: str, warns: list[str]) -> None:
    if warns:
        more = f" (and {len(warns) - 1} more)" if len(warns) > 1 else ""
        console.print(f"[yellow]warning[/] {task}: {warns[0]}{more}")


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


def _write_results(cfg: RunConfig, out_dir: Path, journal: Journal, model: Model, judge_model: Model | None,
                   sessions: list[dict], model_notes: list[str], task_results: dict, skipped: dict,
                   console: Console | None = None) -> dict:
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
    absent = not_recorded_counts(errors)  # items a recorded-answers file lacks: not failures after retries
    if absent:
        results["not_recorded"] = {t: min(n, task_results[t].get("n_errors", n)) if t in task_results else n
                                   for t, n in absent.items()}
    # typed and versioned (stored task results of an older version migrated): results.json is RunResult.to_json()
    results = RunResult(results["fingerprint"], results["model"],
                        {n: TaskResult.from_json(n, migrate_task(t)) for n, t in task_results.items()}, raw=results).to_json()
    if not journal.read_only:
        kept = keep_earlier_results(out_dir, results["fingerprint"])
        if kept and console is not None:
            console.print(f"[yellow]note[/]: {escape(kept)}", highlight=False)
        write_json(out_dir / "results.json", results)
    return results


def _read_only_note(console: Console, out_dir: Path) -> None:
    console.print(f"[yellow]note[/]: {out_dir} is on storage this process cannot write (an archived run): its journal "
                  f"was read, nothing was written (results.json and samples.jsonl are as they were)", soft_wrap=True)


def _rereport(cfg: RunConfig, out_dir: Path, journal: Journal, model: Model, judge_model: Model | None, skipped: dict,
              task_results: dict, counts: list, *, console: Console) -> tuple[dict, Path]:
    """A finished run whose inputs are unchanged: its stored per-task results, this session added."""
    for name, _, warns in counts:
        _warn(console, name, warns)
    t0, started = time.perf_counter(), time.time()
    console.print(f"all {sum(n for _, n, _ in counts)} item(s) already in the journal {out_dir / JOURNAL_NAME}; "
                  f"no model calls (nothing changed since the run finished: results re-read, not recomputed)")
    sessions = record_session(journal, out_dir, session_entry(started, time.perf_counter() - t0, None))
    model_notes = model.run_notes()
    for line in model_notes:
        console.print(f"[yellow]note[/] {line}")
    results = _write_results(cfg, out_dir, journal, model, judge_model, sessions, model_notes, task_results, skipped,
                             console)
    if journal.read_only:
        _read_only_note(console, out_dir)
        return results, out_dir
    restamp_results(journal, out_dir)
    return results, out_dir
