"""The Python API: ``glotbench.evaluate(...)`` runs the same engine call as ``glotbench run`` and
returns a typed :class:`EvalResult` (see docs/python-api.md)."""

from __future__ import annotations

import asyncio
import ctypes
import threading
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from glotbench.output.run_result import MetricResult, RunResult
from glotbench.output.run_result import TaskResult as _TaskResult
from glotbench.sample_record import SampleRecord

__all__ = ["EvalResult", "MetricValue", "RunResult", "SampleRecord", "TaskResult", "UnknownName", "evaluate", "evaluate_async",
           "evaluate_settings", "load_result"]


# the typed results.json (glotbench.output.run_result) under the API's names
MetricValue = MetricResult
TaskResult = _TaskResult


class UnknownName(KeyError):
    """A task or metric name a result does not have; the message names the ones it has."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


@dataclass(frozen=True)
class EvalResult:
    """What :func:`evaluate` returns: the run's typed :class:`RunResult` (``run``) and where it is.
    ``results`` is results.json as written (this version's layout: an older file is read through
    :func:`~glotbench.output.run_result.migrate`); ``samples`` (the typed records) are read from
    samples.jsonl on first use, so a caller that wants only the numbers (``glotbench run`` itself)
    never holds 100k records in memory."""

    run: RunResult = field(repr=False)
    output_dir: Path

    @property
    def fingerprint(self) -> str:
        return self.run.fingerprint

    @property
    def model(self) -> dict[str, Any]:
        return self.run.model

    @property
    def tasks(self) -> dict[str, TaskResult]:
        return self.run.tasks

    @cached_property
    def results(self) -> dict[str, Any]:
        return self.run.to_json()

    @cached_property
    def samples(self) -> list[SampleRecord]:
        return read_samples(self.output_dir)

    def metric(self, task: str, name: str | None = None) -> MetricValue:
        """A task's metric (its headline, else its first one, when ``name`` is None). An unknown task
        or metric raises :class:`UnknownName` (a ``KeyError``) naming the ones there are."""
        if task not in self.tasks:
            raise UnknownName(f"no task {task!r} in this result (tasks: {', '.join(self.tasks) or 'none'})")
        t = self.tasks[task]
        if name is None:
            if t.headline in t.metrics:
                return t.metrics[t.headline]
            if not t.metrics:
                raise UnknownName(f"task {task!r} has no metrics")
            return next(iter(t.metrics.values()))
        if name not in t.metrics:
            raise UnknownName(f"task {task!r} has no metric {name!r} (metrics: {', '.join(t.metrics) or 'none'})")
        return t.metrics[name]


def read_samples(run_dir: Path) -> list[SampleRecord]:
    """The typed sample records of a run directory, from its samples.jsonl (``rec.id``,
    ``rec.pred``, ``rec.values``, ...; ``rec.raw`` is the line as written)."""
    from glotbench.output.run_records import iter_run_samples

    if not (Path(run_dir) / "samples.jsonl").exists():
        return []
    return list(iter_run_samples(Path(run_dir), None))


def result_from(results: dict[str, Any], out_dir: Path) -> EvalResult:
    return EvalResult(RunResult.from_json(results, f"{out_dir}/results.json"), Path(out_dir))


def load_result(run_dir: str | Path) -> EvalResult:
    """The typed result of a finished run directory (its results.json and samples.jsonl)."""
    from glotbench.output.run_records import read_results

    run_dir = Path(run_dir)
    return result_from(read_results(run_dir), run_dir)


def evaluate_settings(cfg: Any, *, console: Any = None, show_progress: bool = False,
                      wait_lock: bool = False, model: Any = None) -> EvalResult:
    """The one call behind :func:`evaluate` and ``glotbench run``: run (or resume) the evaluation
    ``cfg`` (a :class:`glotbench.settings.RunSettings`), then log it to the ``--log-to`` trackers.
    A tracker whose package is missing is an error before the model loads."""
    from rich.console import Console

    from glotbench.catalog import build
    from glotbench.engine.session import run_evaluation

    build()
    console = console or Console(stderr=True, soft_wrap=True)
    if cfg.log_to:
        from glotbench.report.trackers import check_trackers

        check_trackers(cfg.log_to)
    results, out_dir = run_evaluation(cfg, console=console, show_progress=show_progress, wait_lock=wait_lock,
                                      model=model)
    if cfg.log_to:
        from glotbench.report.trackers import log_all

        for line in log_all(cfg.log_to, results, out_dir):
            console.print(f"logged to {line}", markup=False)
    return result_from(results, out_dir)


def _settings(model: Any, tasks: list[str] | str | None, limit: int | float | None, settings: dict[str, Any]):
    from glotbench.catalog import build
    from glotbench.errors import GlotbenchError
    from glotbench.settings import RunSettings

    build()  # this API is a composition root
    model_obj = None if isinstance(model, str) else model  # a Model object runs as given, named by its model_id
    if isinstance(tasks, str):
        tasks = [tasks]
    cfg = RunSettings.model_validate({"model": getattr(model_obj, "model_id", model), "tasks": list(tasks or []),
                                      "limit": limit, **settings})
    if model_obj is not None and (cfg.shards or 1) > 1:
        raise GlotbenchError("evaluate(model=<Model object>): shards run in processes of their own, which a Model "
                             "object cannot reach; give a model spec string (a registered backend) to shard")
    return cfg, model_obj


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _interrupt(thread: threading.Thread) -> None:
    """Raise KeyboardInterrupt inside ``thread`` (the run then stops as Ctrl-C stops ``glotbench run``:
    its session is recorded as interrupted and the run directory's lock is released)."""
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread.ident), ctypes.py_object(KeyboardInterrupt))


def _in_own_thread(fn, *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` in a thread of its own, waited for: the engine's ``asyncio.run`` cannot
    run in a thread whose event loop is already running (a Jupyter kernel's). The caller's
    KeyboardInterrupt (a kernel interrupt) is passed on to that thread, then waited for."""
    box: dict[str, Any] = {}
    done = threading.Event()

    def target() -> None:
        try:
            box["value"] = fn(*args, **kwargs)
        except BaseException as err:  # noqa: BLE001 - re-raised in the caller's thread
            box["error"] = err
        finally:
            done.set()

    thread = threading.Thread(target=target, name="glotbench-evaluate", daemon=True)
    thread.start()
    # waited on an Event, not Thread.join: a KeyboardInterrupt inside join() leaves CPython 3.11's
    # thread marked finished while it still runs (threading._wait_for_tstate_lock releases its lock)
    try:
        while not done.wait(0.2):
            pass
    except KeyboardInterrupt:
        _interrupt(thread)
        while not done.wait(0.2):  # the run records its interrupted session and unlocks its directory
            pass
        raise
    if "error" in box:
        raise box["error"]
    return box["value"]


def evaluate(model: Any = "embedded", tasks: list[str] | str | None = None, limit: int | float | None = None, *,
             show_progress: bool = False, wait_lock: bool = False, **settings: Any) -> EvalResult:
    """Run (or resume) an evaluation, exactly as ``glotbench run`` does (the same call:
    :func:`evaluate_settings`).

    ``settings`` are any :class:`glotbench.settings.RunSettings` fields (``base_url=``, ``max_tokens=``,
    ``output=``, ``mode=``, ``model_args={...}``, ``system_prompt=``, ``gen_kwargs={...}``,
    ``log_to=["mlflow:file:/tmp/store"]`` ...); an unknown name is an error before anything runs.

    ``model`` is a spec string (``"openai:NAME"``, a backend prefix a package registered ...) or a
    :class:`glotbench.models.base.Model` object, which runs as given (its ``model_id`` names it).

    Called where an event loop is already running (a Jupyter notebook, an async web handler), the
    run goes to a thread of its own and this call waits for it (blocking that loop meanwhile; in
    async code ``await glotbench.evaluate_async(...)`` instead).
    """
    cfg, model_obj = _settings(model, tasks, limit, settings)
    if _loop_running():
        return _in_own_thread(evaluate_settings, cfg, show_progress=show_progress, wait_lock=wait_lock, model=model_obj)
    return evaluate_settings(cfg, show_progress=show_progress, wait_lock=wait_lock, model=model_obj)


async def evaluate_async(model: Any = "embedded", tasks: list[str] | str | None = None,
                         limit: int | float | None = None, *, show_progress: bool = False, wait_lock: bool = False,
                         **settings: Any) -> EvalResult:
    """:func:`evaluate` as a coroutine (Inspect's ``eval_async`` counterpart): the run works in a
    thread of its own, so the caller's event loop keeps serving while it runs. Settings are checked
    before the thread starts. Cancelling the awaiting task does not stop the run (it finishes, or is
    resumed by the next call with the same ``output``)."""
    cfg, model_obj = _settings(model, tasks, limit, settings)
    return await asyncio.to_thread(evaluate_settings, cfg, show_progress=show_progress, wait_lock=wait_lock,
                                   model=model_obj)
