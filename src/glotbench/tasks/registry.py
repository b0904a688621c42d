"""Find task YAML files and resolve names (task, suite, glob or file path) to tasks."""

from __future__ import annotations

import fnmatch
import os
from functools import lru_cache
from pathlib import Path

from glotbench.closest import closest
from glotbench.errors import TaskSpecError, UnknownTaskError, set_aside
from glotbench.tasks.judging.declaration import JUDGE_SUFFIX
from glotbench.tasks.spec import TaskSpec, load_spec
from glotbench.tasks.names import check_names, task_class_of
from glotbench.tasks.task import Task
from glotbench.registry import require_catalog
from glotbench.tasks.task_dirs import task_dirs

# task files of the task path set aside when scanned (path -> one line); the other tasks work
SET_ASIDE: dict[Path, str] = {}


@lru_cache(maxsize=8)
def _scan(dirs: tuple[Path, ...]) -> dict[str, tuple[TaskSpec, Path]]:
    from glotbench.sources.schema import destination_clashes

    found: dict[str, tuple[TaskSpec, Path]] = {}
    for d in dirs:
        for path in sorted(d.rglob("*.yaml")):
            if path.name.endswith(JUDGE_SUFFIX):  # a judge declaration, which a task file names
                continue
            try:
                spec = load_spec(path)
            except TaskSpecError as err:  # one broken or hostile file never stops the other tasks
                _set_aside(path, str(err))
                continue
            if spec.name in found:  # a stray copy: the first file (in search order) keeps the name
                _set_aside(path, f"{path}: task name {spec.name!r} is already defined in {found[spec.name][1]} (used instead)")
                continue
            found[spec.name] = (spec, path)
    for name, line in destination_clashes(found).items():  # a fetch that would replace another task's files
        _set_aside(found.pop(name)[1], line)
    return found


def _set_aside(path: Path, line: str) -> None:
    SET_ASIDE[path] = line
    set_aside(line)


# a task's former name -> its name now (resolve() accepts both; results keep the name they were run under)
ALIASES: dict[str, str] = {}


def canonical(name: str) -> str:
    """A task's name now (an alias a benchmark package registered -> the task it names)."""
    require_catalog()
    return ALIASES.get(name, name)


def all_specs(extra: list[Path] | None = None) -> dict[str, tuple[TaskSpec, Path]]:
    return _scan(tuple(task_dirs(extra)))


def make_task(spec: TaskSpec, path: Path | None) -> Task:
    """The task object, with every name in its file resolved (TaskSpecError naming file and field)."""
    cls = task_class_of(spec, path)
    check_names(spec, path, cls)
    return cls(spec, path)


def suites(extra: list[Path] | None = None) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for name, (spec, _) in all_specs(extra).items():
        for s in spec.suites:
            out.setdefault(s, []).append(name)
    specs = all_specs(extra)
    return {k: sorted(v, key=lambda n: (specs[n][0].order, n)) for k, v in out.items()}


def resolve(names: list[str], extra: list[Path] | None = None) -> list[Task]:
    """Resolve task names, suite names, globs (``suite.*``) and YAML paths, keeping order."""
    specs = all_specs(extra)
    suite_map = suites(extra)
    chosen: list[Task] = []
    seen: dict[str, Path | None] = {}
    shadowed: dict[str, Path] = {}

    def add(spec: TaskSpec, path: Path | None) -> None:
        if spec.name in seen:
            if seen[spec.name] != path and spec.name in shadowed:  # the built-in and a file of the same name
                raise TaskSpecError(f"{shadowed[spec.name]}: field 'name': {spec.name!r} is also the built-in task "
                                    f"selected in this run ({specs[spec.name][1]}); give the file's task another name")
            return
        seen[spec.name] = path
        task = make_task(spec, path)
        if spec.name in shadowed and path == shadowed[spec.name]:
            task.load_warnings.append(
                f"{path} defines {spec.name!r}, the name of a built-in task ({specs[spec.name][1].name}): its results "
                f"are reported under that name (its fingerprint tells the two apart); rename it to keep them apart")
        chosen.append(task)

    for raw in names:
        if not str(raw).strip(",; \t\n"):  # -t '' named nothing and fell through to a traceback
            raise UnknownTaskError(f"--tasks {raw!r} names no task (a task, suite, glob or task file; "
                                   "`glotbench tasks` lists them)")
        for name in [n.strip() for n in raw.split(",") if n.strip()]:
            if name.endswith((".yaml", ".yml")) or os.sep in name:
                path = Path(name)
                if not path.exists():
                    raise UnknownTaskError(f"task file {name} does not exist")
                spec = load_spec(path)
                if spec.name in specs and specs[spec.name][1].resolve() != path.resolve():
                    shadowed[spec.name] = path  # an edited copy of a built-in: allowed, and said once (load_warnings)
                add(spec, path)
            elif name in specs:
                add(*specs[name])
            elif name in ALIASES and ALIASES[name] in specs:  # a task's former name (old runs, configs)
                add(*specs[ALIASES[name]])
            elif name in suite_map:
                for t in suite_map[name]:
                    add(*specs[t])
            elif any(ch in name for ch in "*?["):
                matches = fnmatch.filter(sorted(specs), name)
                if not matches:
                    raise UnknownTaskError(f"no task matches {name!r}")
                for t in matches:
                    add(*specs[t])
            else:
                close = closest(name, [*specs, *suite_map])
                hint = f"; did you mean {', '.join(close)}?" if close else "; `glotbench tasks` lists them"
                if SET_ASIDE:
                    hint += f" ({len(SET_ASIDE)} task file(s) set aside: {next(iter(SET_ASIDE.values()))})"
                raise UnknownTaskError(f"unknown task or suite {name!r}{hint}")
    _check_counterparts(chosen, set(specs))
    return chosen


def _check_counterparts(tasks: list[Task], known: set[str]) -> None:
    """A ``counterpart`` naming no task (a typo) is one line at load, with the nearest names,
    instead of a cross-lingual pair that silently never forms."""
    known = known | {t.spec.name for t in tasks}
    for t in tasks:
        cp = t.spec.counterpart
        if cp is None or cp in known:
            continue
        close = closest(cp, known, limit=3)
        hint = f"; did you mean {', '.join(close)}?" if close else "; `glotbench tasks` lists the task names"
        where = t.spec_path or t.spec.name
        raise TaskSpecError(f"{where}: field 'counterpart': no task is named {cp!r}{hint}")
