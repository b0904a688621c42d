"""The built-ins and every installed benchmark package, registered once per process.

A benchmark package is one folder (``glotbench/benchmarks/<name>/`` for the built-in ones, any
installed Python package for a user's own) with one function ``register(bench: Benchmark)``,
published as an entry point in the ``glotbench.benchmarks`` group of its ``pyproject.toml``::

    [project.entry-points."glotbench.benchmarks"]
    my_bench = "my_bench:register"

:func:`load` registers the generic built-ins (:mod:`glotbench.builtins`: extractors, scorers,
generic metrics, model backends), then calls each entry point's function. Every registry calls it
before its first lookup (``glotbench/__init__.py`` wires that), so what a name means never depends
on which module a caller imported first. A ``register`` function only registers: it must not look
names up (the registries are still filling while it runs).

A package whose import or ``register`` raises, or runs past ``GLOTBENCH_PLUGIN_TIMEOUT_S``, is set
aside with one line naming it (docs/untrusted-files.md); the others load.

A built-in benchmark folder whose entry point is missing from the installed metadata (a source
checkout whose ``pyproject.toml`` gained a package after ``pip install -e .``) is loaded from its
folder all the same, so the metadata never hides a built-in.
"""

from __future__ import annotations

import importlib
import pkgutil
from importlib import metadata
from pathlib import Path
from typing import Callable

GROUP = "glotbench.benchmarks"
BUILTIN_PACKAGE = "glotbench.benchmarks"

_state = {"loaded": False, "loading": False}
LOADED: dict[str, str] = {}  # benchmark name -> the module its register function lives in


def _attr(module: str, name: str):
    """``module.name``, imported by name: this composition root has no static import of the layers it
    fills, so the layering contracts (.importlinter) see no edge from here into them."""
    return getattr(importlib.import_module(module), name)


class Benchmark:
    """What a benchmark package's ``register`` function is handed: one method per kind of hook.

    ``ref`` arguments are ``"module:attr"`` strings, imported on first use, so listing tasks imports
    no benchmark code."""

    def __init__(self, name: str):
        self.name = name

    def tasks(self, folder: str | Path) -> None:
        """A folder of task YAML files (searched recursively)."""
        _attr("glotbench.tasks.registry", "add_task_dir")(Path(folder))

    def files(self, folder: str | Path) -> None:
        """Files shipped with the package under the relative paths they have in a data root
        (prompt files no upstream source serves as files); ``paths.benchmark_file`` finds them first."""
        _attr("glotbench.paths", "add_packaged_root")(Path(folder))

    def task_alias(self, old: str, new: str) -> None:
        """A task's former name: ``--tasks OLD`` selects ``NEW`` (a run's results carry the name it
        ran under)."""
        _attr("glotbench.tasks.registry", "ALIASES")[old] = new

    def task_class(self, name: str, ref: str) -> None:
        _attr("glotbench.tasks.classes", "TASK_CLASSES").register_lazy(name, ref)

    def metric_module(self, module: str) -> None:
        """Import a module whose metrics register themselves (``@metric`` / ``METRICS.register``)."""
        importlib.import_module(module)

    def metric(self, name: str, ref: str) -> None:
        _attr("glotbench.scoring.metrics", "METRICS").register_lazy(name, ref)

    def metric_kind(self, name: str, ref: str) -> None:
        """A way of computing a metric that is this benchmark's knowledge, named ``<package>.<kind>``:
        results.json names it, a later reader finds it here (docs/scorers-and-metrics.md)."""
        _attr("glotbench.scoring.metric_kinds", "METRIC_KINDS").register_lazy(name, ref)

    def result_tables(self, name: str, ref: str) -> None:
        """``fn(results) -> list[rich renderable]`` printed below the results table."""
        _attr("glotbench.output.hooks", "RESULT_TABLES").register_lazy(name, ref)

    def config_reader(self, name: str, ref: str) -> None:
        """``(is_mine(raw: dict) -> bool, read(raw, path) -> dict)`` as one object with those two
        functions: a run config file in another framework's layout, turned into glotbench's."""
        _attr("glotbench.engine.config_readers", "CONFIG_READERS").register_lazy(name, ref)

    def submission_writer(self, suite: str, ref: str) -> None:
        """``build(run_dir, out_dir, ...) -> list[Path]``: leaderboard submission files for the
        tasks of ``suite`` a run scored (``glotbench submission``, ``run --predictions-out``)."""
        _attr("glotbench.output.submission_writers", "SUBMISSION_WRITERS").register_lazy(suite, ref)

    def task_template(self, name: str, ref: str) -> None:
        """``fn(language=..., grader=...) -> dict``: the task fields a ``glotbench build`` step writes
        into the task YAML it ends with (``judged_short_answer``: ``build qa``, the difficulty filter)."""
        _attr("glotbench.build.templates", "TASK_TEMPLATES").register_lazy(name, ref)

    def command(self, group: str, ref: str) -> None:
        """A module holding ``register(app)`` that adds sub-commands to the CLI group ``group``
        (e.g. ``analyze``), imported only when that group runs."""
        _attr("glotbench.cli.plugin_commands", "add_group_module")(group, ref)


def _entry_points() -> list[tuple[str, str, Callable[[], Callable]]]:
    out = []
    for ep in metadata.entry_points(group=GROUP):
        out.append((ep.name, ep.value.partition(":")[0], ep.load))
    return out


def _builtin_packages() -> list[tuple[str, str, Callable[[], Callable]]]:
    pkg = importlib.import_module(BUILTIN_PACKAGE)
    out = []
    for info in pkgutil.iter_modules(pkg.__path__):
        if info.ispkg:
            mod = f"{BUILTIN_PACKAGE}.{info.name}"
            out.append((info.name, mod, lambda m=mod: importlib.import_module(m).register))
    return out


def load() -> None:
    """Register the built-ins and every benchmark package, once (re-entrant calls return at once)."""
    if _state["loaded"] or _state["loading"]:
        return
    _state["loading"] = True
    try:
        importlib.import_module("glotbench.builtins")
        seen: set[str] = set()
        for name, module, get in [*_entry_points(), *_builtin_packages()]:
            if module in seen:
                continue
            seen.add(module)
            _register(name, module, get)
        _state["loaded"] = True
    finally:
        _state["loading"] = False


DEFAULT_TIMEOUT_S = 30.0


def _timeout_s() -> float:
    """How long one package's import and ``register`` may take (``GLOTBENCH_PLUGIN_TIMEOUT_S``)."""
    import os

    try:
        value = float(os.environ.get("GLOTBENCH_PLUGIN_TIMEOUT_S", DEFAULT_TIMEOUT_S))
    except ValueError:
        return DEFAULT_TIMEOUT_S
    return value if value > 0 else DEFAULT_TIMEOUT_S


def _register(name: str, module: str, get: Callable[[], Callable]) -> None:
    """Import one package and call its ``register``, in a thread bounded in time. A package that
    raises, names a module that is not there or runs past the bound is set aside with one line
    naming it (``errors.set_aside``), and every other package, command and task works
    (docs/untrusted-files.md). A package past the bound keeps its daemon thread; what it registers
    later is not looked at."""
    import threading

    set_aside = _attr("glotbench.errors", "set_aside")
    outcome: list[BaseException | None] = []

    def call() -> None:
        try:
            get()(Benchmark(name))
            outcome.append(None)
        except BaseException as err:  # noqa: BLE001  a broken third-party package: one line naming it
            outcome.append(err)

    worker = threading.Thread(target=call, name=f"glotbench-register-{name}", daemon=True)
    worker.start()
    limit = _timeout_s()
    worker.join(limit)
    where = f"benchmark package {name!r} ({module}, entry point group {GROUP})"
    if not outcome:
        set_aside(f"{where} did not finish registering within {limit:g} s (GLOTBENCH_PLUGIN_TIMEOUT_S)")
        return
    err = outcome[0]
    if err is not None:
        if isinstance(err, KeyboardInterrupt):
            raise err
        set_aside(f"{where} failed to register: {type(err).__name__}: {err}")
        return
    LOADED[name] = module
