"""Resolve every name a task file gives (task class, extractor, scorer, metrics) when the task
loads, before any model call. A name that does not resolve is a one-line TaskSpecError naming the
file and the field; the CLI turns it into exit status 2 with nothing sent."""

from __future__ import annotations

from pathlib import Path

from glotbench.errors import TaskSpecError
from glotbench.tasks.spec import TaskSpec

# what `glotbench run` evaluates when no task is named: the tasks whose YAML lists this suite
DEFAULT_SUITE = "default"


def task_class_of(spec: TaskSpec, path: Path | None) -> type:
    from glotbench.tasks.classes import TASK_CLASSES
    from glotbench.tasks.task import Task

    if not spec.task_class:
        if spec.judge is not None:  # a judge declared in YAML grades the answers
            from glotbench.tasks.judged import JudgedTask

            return JudgedTask
        return Task
    where = f"{path or spec.name}: field 'task_class'"
    try:
        return TASK_CLASSES.resolve(spec.task_class, where=where)
    except TaskSpecError as err:
        moved = moved_task_class(spec.task_class)
        if moved is None:
            raise
        new, ref = moved
        also = f" (its registered name; or `task_class: {ref}`)" if ref else ""
        raise TaskSpecError(f"{where}: {spec.task_class!r} has moved: write `task_class: {new}`{also}") from err


def moved_task_class(ref: str) -> tuple[str, str | None] | None:
    """The current spelling of a ``"module:Class"`` task class that no longer imports (its module
    moved, e.g. into a benchmark package): the registered name whose class has that name, or the
    reference under a registered package holding a module of the old module's last name, or None.
    Returns ``(spelling, reference)``: the registered name and its ``module:Class``, or the reference alone."""
    import importlib.util

    from glotbench.registry import import_ref
    from glotbench.tasks.classes import TASK_CLASSES

    mod, sep, attr = ref.partition(":")
    if not sep or not attr:
        return None
    refs = TASK_CLASSES.refs()
    for name, new in sorted(refs.items()):
        if new.partition(":")[2] == attr and new != ref:
            return name, new
    leaf = mod.rsplit(".", 1)[-1]
    packages = sorted({r.partition(":")[0].rsplit(".", 1)[0] for r in refs.values()})
    for pkg in packages:
        cand = f"{pkg}.{leaf}:{attr}"
        if cand == ref or importlib.util.find_spec(pkg) is None:
            continue
        try:
            import_ref(cand)
        except Exception:  # noqa: BLE001 - any failure: not this one
            continue
        return cand, None
    return None


def check_names(spec: TaskSpec, path: Path | None, cls: type) -> None:
    """Raise TaskSpecError for the first name in ``spec`` that does not resolve.

    For a task without ``task_class`` (its scorer writes every per-item value) a metric that
    averages a per-item value must read a value the scorer declares it feeds: ``metrics:
    [exact_match, bow_f1]`` with ``scorer: exact_match`` fails here, not after the run.
    """
    from glotbench.extract import get_extractor
    from glotbench.scoring.metrics import get_metric
    from glotbench.scoring.scorers import get_scorer
    from glotbench.tasks.task import Task

    where = str(path or spec.name)
    get_extractor(spec.extractor.name, where=f"{where}: field 'extractor.name'")
    scorer = get_scorer(spec.scorer, where=f"{where}: field 'scorer'")
    scorer.check_options(spec.scorer_options, where=f"{where}: field 'scorer_options'")
    metrics = [get_metric(m, where=f"{where}: field 'metrics[{i}]'") for i, m in enumerate(spec.metrics)]
    if ((getattr(cls, "score", None) is Task.score or getattr(cls, "generates_with_task_score", False))
            and spec.output_type != "multiple_choice" and getattr(cls, "generation_reads_pack", Task.generation_reads_pack)(spec)):
        check_language_pack(spec.language, where)  # a multiple-choice task: when its mode is known (run)
    if spec.output_type == "multiple_choice" and "target" not in spec.fields and cls is Task:
        raise TaskSpecError(f"{where}: field 'fields.target': a multiple_choice task needs the gold answer mapped "
                            "(fields: {target: PATH}); without it every item failed or only 'answered' was reported")
    if cls is not Task or scorer.metrics is None:
        return  # a task class computes its own values; an undeclared user scorer is trusted
    fed = {m.key for m in (get_metric(n, where=f"scorer {scorer.name!r}") for n in scorer.metrics) if m.key}
    for i, m in enumerate(metrics):
        if m.key is not None and m.key not in fed:
            raise TaskSpecError(
                f"{where}: field 'metrics[{i}]': metric {spec.metrics[i]!r} averages per-item value {m.key!r}, "
                f"which scorer {spec.scorer!r} does not write (it feeds: {', '.join(scorer.metrics)})")


def check_language_pack(language: str, where: str) -> None:
    """TaskSpecError naming the field when generic scoring would need a language pack that does not
    exist (it used to fail every item after every request was sent)."""
    from glotbench.languages import get_pack
    from glotbench.languages.pack import UnknownLanguageError

    try:
        get_pack(language)
    except UnknownLanguageError as err:
        raise TaskSpecError(f"{where}: field 'language': {err}") from None
