"""The catalog: every name a run can use, built once per process by the composition roots (the CLI
before it runs a command, ``glotbench.evaluate``, a shard worker) with :func:`build`.

It calls :func:`glotbench.builtins.register`, then the ``register(bench)`` function each entry point
of the groups in :data:`GROUPS` names (``[project.entry-points."glotbench.backends"]`` ...; the
built-in benchmark folders are found by scanning too, so stale installed metadata never hides
one). ``register`` only declares, on the :class:`Benchmark` it is handed; the catalog then applies
the declarations to the registries and hands them :func:`load_module` (a lookup before that is
:class:`glotbench.registry.CatalogNotBuilt`). A package whose import, ``register`` or declarations
fail, or that runs past ``GLOTBENCH_PLUGIN_TIMEOUT_S``, is set aside with one line naming it
(docs/untrusted-files.md). This is the one module that imports modules by name.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import threading
from importlib import metadata
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

GROUPS = ("glotbench.benchmarks", "glotbench.backends", "glotbench.languages")
BUILTIN_PACKAGE = "glotbench.benchmarks"
DEFAULT_TIMEOUT_S = 30.0


def load_module(name: str) -> ModuleType:
    """The module ``name``, imported (the one module loader every registry's lazy reference goes through)."""
    return importlib.import_module(name)


class Benchmark:
    """What a ``register`` function is handed: each call records one declaration, which the catalog
    applies once ``register`` has returned. ``ref`` arguments are ``"module:attr"`` strings, loaded on
    first use. The table in docs/adding-a-benchmark.md says what each declares."""

    def __init__(self, name: str):
        self.name = name
        self.declared: list[tuple[str, tuple]] = []

    def _add(self, kind: str, *args: Any) -> None:
        self.declared.append((kind, args))

    def tasks(self, folder: str | Path) -> None:
        self._add("tasks", Path(folder))

    def files(self, folder: str | Path) -> None:
        self._add("files", Path(folder))

    def language_pack(self, path: str | Path) -> None:
        self._add("language_pack", Path(path))

    def backend(self, *prefixes: str, factory: str, needs_name: bool = True, renders_prompts: bool = False,
                light: bool = False) -> None:
        self._add("backend", prefixes, factory, needs_name, renders_prompts, light)

    def task_alias(self, old: str, new: str) -> None:
        self._add("task_alias", old, new)

    def task_class(self, name: str, ref: str) -> None:
        self._add("task_class", name, ref)

    def metric(self, name: str, ref: str) -> None:
        self._add("metric", name, ref)

    def metric_kind(self, name: str, ref: str) -> None:
        """A way of computing a metric that is this benchmark's knowledge, named ``<package>.<kind>``:
        results.json names it, a later reader finds it here (docs/scorers-and-metrics.md)."""
        self._add("metric_kind", name, ref)

    def scorer(self, name: str, ref: str) -> None:
        self._add("scorer", name, ref)

    def result_tables(self, name: str, ref: str) -> None:
        self._add("result_tables", name, ref)

    def config_reader(self, name: str, ref: str) -> None:
        self._add("config_reader", name, ref)

    def submission_writer(self, suite: str, ref: str) -> None:
        self._add("submission_writer", suite, ref)

    def task_template(self, name: str, ref: str) -> None:
        self._add("task_template", name, ref)

    def command(self, group: str, module: str) -> None:
        self._add("command", group, module)


def _apply_backend(prefixes: tuple[str, ...], factory: str, needs_name: bool, renders_prompts: bool,
                   light: bool) -> None:
    from glotbench.models.backends import BACKENDS, Backend

    for prefix in prefixes:
        BACKENDS.register(prefix.lower(), Backend(factory, needs_name, renders_prompts, light))


def _appliers() -> dict[str, Callable[..., None]]:
    """What each kind of declaration does to the registries of the layers below."""
    from glotbench.tasks.templates import TASK_TEMPLATES
    from glotbench.config_readers import CONFIG_READERS
    from glotbench.languages import add_pack_file
    from glotbench.output.hooks import RESULT_TABLES
    from glotbench.output.submission_writers import SUBMISSION_WRITERS
    from glotbench.paths import add_packaged_root
    from glotbench.scoring.metric_kinds import METRIC_KINDS
    from glotbench.scoring.metrics import METRICS
    from glotbench.scoring.scorers import SCORERS
    from glotbench.tasks.classes import TASK_CLASSES
    from glotbench.tasks.registry import ALIASES
    from glotbench.tasks.task_dirs import add_task_dir

    lazy = {"task_class": TASK_CLASSES, "metric": METRICS, "metric_kind": METRIC_KINDS, "scorer": SCORERS, "result_tables": RESULT_TABLES,
            "config_reader": CONFIG_READERS, "submission_writer": SUBMISSION_WRITERS, "task_template": TASK_TEMPLATES}
    return {"tasks": add_task_dir, "files": add_packaged_root, "language_pack": add_pack_file,
            "backend": _apply_backend, "task_alias": ALIASES.__setitem__,
            **{kind: registry.register_lazy for kind, registry in lazy.items()}}


class Catalog:
    """The built catalog: which packages registered (``loaded``: name -> module, per group) and the
    command modules they add (``commands``: CLI group -> modules)."""

    def __init__(self) -> None:
        self.loaded: dict[str, dict[str, str]] = {g: {} for g in GROUPS}
        self.commands: dict[str, list[str]] = {}
        self._apply = _appliers()

    def apply(self, bench: Benchmark) -> None:
        """What may fail (a taken name, a broken pack) first: a package set aside adds no task."""
        for kind, args in sorted(bench.declared, key=lambda d: d[0] in ("tasks", "files", "task_alias", "command")):
            if kind == "command":
                mods = self.commands.setdefault(args[0], [])
                if args[1] not in mods:
                    mods.append(args[1])
            else:
                self._apply[kind](*args)

    def load_command(self, group: str, modules: tuple[str, ...] = ()) -> None:
        """Import the CLI modules that register ``group`` (``modules``) and those packages add to it."""
        for mod in (*modules, *self.commands.get(group, ())):
            load_module(mod)


_BUILT: list[Catalog] = []
_LOCK = threading.RLock()


def build() -> Catalog:
    """The catalog, built on the first call (later calls return it)."""
    with _LOCK:
        if _BUILT:
            return _BUILT[0]
        from glotbench import builtins
        from glotbench.registry import catalog_built

        catalog = Catalog()
        bench = Benchmark("builtins")
        builtins.register(bench)
        catalog.apply(bench)
        seen: set[str] = set()
        for group, name, module, get in [*_entry_points(), *_builtin_packages()]:
            if (group, module) not in seen:
                seen.add((group, module))
                _register(catalog, group, name, module, get)
        catalog_built(load_module)
        _BUILT.append(catalog)
        return catalog


def _entry_points() -> list[tuple[str, str, str, Callable[[], Callable]]]:
    return [(group, ep.name, ep.value.partition(":")[0], ep.load)
            for group in GROUPS for ep in metadata.entry_points(group=group)]


def _builtin_packages() -> list[tuple[str, str, str, Callable[[], Callable]]]:
    pkg = load_module(BUILTIN_PACKAGE)
    return [(GROUPS[0], info.name, f"{BUILTIN_PACKAGE}.{info.name}",
             lambda m=f"{BUILTIN_PACKAGE}.{info.name}": load_module(m).register)
            for info in pkgutil.iter_modules(pkg.__path__) if info.ispkg]


def _timeout_s() -> float:
    """How long one package's import and ``register`` may take (``GLOTBENCH_PLUGIN_TIMEOUT_S``)."""
    try:
        value = float(os.environ.get("GLOTBENCH_PLUGIN_TIMEOUT_S", DEFAULT_TIMEOUT_S))
    except ValueError:
        return DEFAULT_TIMEOUT_S
    return value if value > 0 else DEFAULT_TIMEOUT_S


def _register(catalog: Catalog, group: str, name: str, module: str, get: Callable[[], Callable]) -> None:
    """Import one package and call its ``register`` in a thread bounded in time, then apply what it
    declared; set it aside with one line when any of that fails (a package past the bound keeps its
    daemon thread, and what it declares later is never applied)."""
    from glotbench.errors import set_aside

    bench = Benchmark(name)
    outcome: list[BaseException | None] = []

    def call() -> None:
        try:
            get()(bench)
            outcome.append(None)
        except BaseException as err:  # noqa: BLE001  a broken third-party package: one line naming it
            outcome.append(err)

    worker = threading.Thread(target=call, name=f"glotbench-register-{name}", daemon=True)
    worker.start()
    limit = _timeout_s()
    worker.join(limit)
    where = f"{group.rpartition('.')[2].rstrip('s')} package {name!r} ({module}, entry point group {group})"
    if not outcome:
        set_aside(f"{where} did not finish registering within {limit:g} s (GLOTBENCH_PLUGIN_TIMEOUT_S)")
        return
    err = outcome[0]
    if err is None:
        try:
            catalog.apply(bench)
        except Exception as exc:  # noqa: BLE001  e.g. a name another package took
            err = exc
    if err is not None:
        if isinstance(err, KeyboardInterrupt):
            raise err
        set_aside(f"{where} failed to register: {type(err).__name__}: {err}")
        return
    catalog.loaded[group][name] = module
