"""The catalog: every name a run can use, built once per process by the composition roots (the CLI
when it runs a command, ``glotbench.evaluate``, a shard worker) with :func:`build`.

It is filled from three entry-point groups, each naming a ``register(bench)`` function:

    [project.entry-points."glotbench.benchmarks"]   # tasks, task classes, metrics, tables, ...
    my_bench = "my_bench:register"
    [project.entry-points."glotbench.backends"]     # model backends (bench.backend)
    my_backend = "my_backend:register"
    [project.entry-points."glotbench.languages"]    # standalone language packs (bench.language_pack)
    sk_pack = "sk_pack:register"

plus the generic built-ins (:func:`glotbench.builtins.register`) and the built-in benchmark folders
(``glotbench/benchmarks/<name>/``, loaded from their folder even when a source checkout's installed
metadata lacks their entry point). A ``register`` function only *declares*, on the
:class:`Benchmark` it is handed; the catalog then applies the declarations to the registries
(:mod:`glotbench.registry`) and hands them its module loader, :func:`load_module`. A lookup before
that is :class:`glotbench.registry.CatalogNotBuilt`. Declarations name code as lazy
``"module:attr"`` references, so listing tasks imports no benchmark code.

A package whose import, ``register`` or declarations fail, or that runs past
``GLOTBENCH_PLUGIN_TIMEOUT_S``, is set aside with one line naming it (docs/untrusted-files.md); the
others load. This module and :func:`glotbench.registry.import_ref` (through :func:`load_module`) are
the only places glotbench imports a module by name.
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
    """What a ``register`` function is handed: one method per kind of declaration, recorded here
    and applied by the catalog once ``register`` returns (nothing is registered while it runs).

    ``ref`` arguments are ``"module:attr"`` strings, loaded on first use."""

    def __init__(self, name: str):
        self.name = name
        self.declared: list[tuple[str, tuple]] = []

    def _add(self, kind: str, *args: Any) -> None:
        self.declared.append((kind, args))

    def tasks(self, folder: str | Path) -> None:
        """A folder of task YAML files (searched recursively)."""
        self._add("tasks", Path(folder))

    def files(self, folder: str | Path) -> None:
        """Files shipped with the package under the relative paths they have in a data root
        (prompt files no upstream source serves as files); ``paths.benchmark_file`` finds them first."""
        self._add("files", Path(folder))

    def language_pack(self, path: str | Path) -> None:
        """A language pack YAML file (``<code>.yaml``, the format of glotbench/languages/*.yaml) the
        package ships, for a language glotbench has no pack for (docs/adding-a-language-pack.md)."""
        self._add("language_pack", Path(path))

    def backend(self, *prefixes: str, factory: str, needs_name: bool = True, renders_prompts: bool = False,
                light: bool = False) -> None:
        """A model backend under each spec prefix: ``factory`` is ``"module:attr"`` of
        ``from_spec(spec, rest, *, base_url, api_key_env, timeout, **kw) -> Model``
        (glotbench.models.backends; docs/adding-a-model-backend.md)."""
        self._add("backend", prefixes, factory, needs_name, renders_prompts, light)

    def task_alias(self, old: str, new: str) -> None:
        """A task's former name: ``--tasks OLD`` selects ``NEW`` (a run's results carry the name it
        ran under)."""
        self._add("task_alias", old, new)

    def task_class(self, name: str, ref: str) -> None:
        self._add("task_class", name, ref)

    def metric(self, name: str, ref: str) -> None:
        self._add("metric", name, ref)

    def scorer(self, name: str, ref: str) -> None:
        self._add("scorer", name, ref)

    def result_tables(self, name: str, ref: str) -> None:
        """``fn(results) -> list[rich renderable]`` printed below the results table."""
        self._add("result_tables", name, ref)

    def config_reader(self, name: str, ref: str) -> None:
        """``(is_mine(raw: dict) -> bool, read(raw, path) -> dict)`` as one object with those two
        functions: a run config file in another framework's layout, turned into glotbench's."""
        self._add("config_reader", name, ref)

    def submission_writer(self, suite: str, ref: str) -> None:
        """``build(run_dir, out_dir, ...) -> list[Path]``: leaderboard submission files for the
        tasks of ``suite`` a run scored (``glotbench submission``, ``run --predictions-out``)."""
        self._add("submission_writer", suite, ref)

    def task_template(self, name: str, ref: str) -> None:
        """``fn(language=..., grader=...) -> dict``: the task fields a ``glotbench build`` step writes
        into the task YAML it ends with (``judged_short_answer``: ``build qa``, the difficulty filter)."""
        self._add("task_template", name, ref)

    def command(self, group: str, module: str) -> None:
        """A module that adds sub-commands to the CLI group ``group`` (e.g. ``analyze``) when
        imported, imported only when that group runs."""
        self._add("command", group, module)


def _registry(module: str, name: str):
    return getattr(load_module(module), name)


def _apply_language_pack(path: Path) -> None:
    from glotbench.languages import LanguagePackError, add_pack_file, available_languages, load_pack

    pack = load_pack(path)  # a broken file sets its package aside here, not every later lookup
    if pack.code != path.stem:
        raise LanguagePackError(f"{path}: field 'code': {pack.code!r} does not match the file name {path.stem!r}")
    if pack.code in available_languages():
        raise LanguagePackError(f"{path}: language {pack.code!r} already has a pack")
    add_pack_file(path)


def _apply_backend(prefixes: tuple[str, ...], factory: str, needs_name: bool, renders_prompts: bool,
                   light: bool) -> None:
    from glotbench.models.backends import BACKENDS, Backend

    for prefix in prefixes:
        BACKENDS.register(prefix.lower(), Backend(factory, needs_name, renders_prompts, light))


def _lazy(module: str, name: str) -> Callable[[str, str], None]:
    return lambda key, ref: _registry(module, name).register_lazy(key, ref)


# what each kind of declaration does to the registries of the layers below
APPLY: dict[str, Callable[..., None]] = {
    "tasks": lambda folder: _registry("glotbench.tasks.registry", "add_task_dir")(folder),
    "files": lambda folder: _registry("glotbench.paths", "add_packaged_root")(folder),
    "language_pack": _apply_language_pack,
    "backend": _apply_backend,
    "task_alias": lambda old, new: _registry("glotbench.tasks.registry", "ALIASES").__setitem__(old, new),
    "task_class": _lazy("glotbench.tasks.classes", "TASK_CLASSES"),
    "metric": _lazy("glotbench.scoring.metrics", "METRICS"),
    "scorer": _lazy("glotbench.scoring.scorers", "SCORERS"),
    "result_tables": _lazy("glotbench.output.hooks", "RESULT_TABLES"),
    "config_reader": _lazy("glotbench.engine.config_readers", "CONFIG_READERS"),
    "submission_writer": _lazy("glotbench.output.submission_writers", "SUBMISSION_WRITERS"),
    "task_template": _lazy("glotbench.build.templates", "TASK_TEMPLATES"),
}


class Catalog:
    """The built catalog: which packages registered (``loaded``: name -> module, per group) and the
    command modules they add (``commands``: CLI group -> modules)."""

    def __init__(self) -> None:
        self.loaded: dict[str, dict[str, str]] = {g: {} for g in GROUPS}
        self.commands: dict[str, list[str]] = {}

    def apply(self, bench: Benchmark) -> None:
        for kind, args in bench.declared:
            if kind == "command":
                mods = self.commands.setdefault(args[0], [])
                if args[1] not in mods:
                    mods.append(args[1])
            else:
                APPLY[kind](*args)

    def load_command(self, group: str, modules: tuple[str, ...] = ()) -> None:
        """Import the CLI modules that register ``group`` (``modules``) and those packages add to it."""
        for mod in (*modules, *self.commands.get(group, ())):
            load_module(mod)


_BUILT: list[Catalog] = []
_LOCK = threading.RLock()


def built() -> Catalog | None:
    return _BUILT[0] if _BUILT else None


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
    """Import one package and call its ``register`` in a thread bounded in time, then apply what
    it declared. A package that raises, names a module that is not there, runs past the bound or
    declares what cannot be applied (a taken name, a broken language pack) is set aside with one
    line naming it (``errors.set_aside``), and every other package, command and task works. A
    package past the bound keeps its daemon thread; what it declares later is never applied."""
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
