"""A run's plan: every check that can be made before a request, and what the run will do.

:func:`plan` resolves the selected tasks, sets aside those without data (a suite goes on), checks
every file against its source, reads every task's items, resolves each task's language pack and
mode, checks the judge, the few-shot pools, ``--gen-kwargs`` and ``--mode`` against the model,
and builds, once per task, the :class:`RequestSettings` the task and the runner see. A mistake
the user can fix is one line naming the file, record and field, before any model call. The
result, a :class:`RunPlan`, is what :func:`glotbench.engine.session.run_evaluation` executes and
what a shard worker receives (:meth:`RunPlan.shard_job`)."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from glotbench.engine.fingerprint import fingerprint_once
from glotbench.engine.journal import JOURNAL_NAME, Journal
from glotbench.engine.observer import RunObserver
from glotbench.engine.run_checks import check_mode, check_prefill, check_same_model, check_same_overrides, model_identity, plain_layout_notes
from glotbench.engine.retry import RetryPolicy
from glotbench.engine.runner import CacheSettings, TaskRun
from glotbench.engine.shards.checks import check_settings
from glotbench.errors import DataError, GlotbenchError
from glotbench.models.base import Model, canonical_json, sha256_hex
from glotbench.output.model_meta import model_meta
from glotbench.models.loading import light_model, load_judge, load_model_from_config, recorded_grades_given
from glotbench.settings import RunSettings
from glotbench.tasks.modes import task_mode
from glotbench.tasks.names import DEFAULT_SUITE
from glotbench.tasks.registry import resolve
from glotbench.tasks.request_settings import RequestSettings, one_value_per_knob
from glotbench.tasks.task import Task
from glotbench.tasks.variants import expand

DIFFERS = "data differs from its source"


@dataclass
class TaskPlan:
    """One task of a run: its request settings (the only settings it sees), mode, language pack
    (None: its scoring reads none), metrics, fingerprint and items (None on a re-report)."""

    task: Task
    request: RequestSettings
    mode: str
    pack: Any
    metrics: tuple[str, ...]
    fingerprint: dict = field(default_factory=dict)
    samples: list | None = None

    def task_run(self, journal: Journal) -> TaskRun:
        """The run of this task against ``journal``: the items not scored there yet are to do.
        The items move into the run (``TaskRun.release_samples`` then frees them)."""
        samples = self.samples if self.samples is not None else self.task.run_samples(self.request)
        self.samples = None
        done = journal.scored_ids(self.fingerprint["id"], self.task.name)
        return TaskRun(task=self.task, mode=self.mode, fingerprint=self.fingerprint, samples=samples,
                       todo=[s for s in samples if s.id not in done], settings=self.request)


@dataclass
class RunPlan:
    """What a run does: its settings, each task's plan, the tasks set aside and why, the model and
    judge (built) and the output directory."""

    settings: RunSettings
    tasks: list[TaskPlan]
    skipped: dict[str, str]
    model: Model
    judge: Model | None
    out_dir: Path

    def shard_job(self, index: int, items: dict[str, list[str]]) -> dict:
        """A shard's job (plain JSON): the plan's settings and, per task with items in the shard, its
        request settings, mode and fingerprint, so the worker re-derives none of them."""
        by_name = {tp.task.name: tp for tp in self.tasks}
        return {"index": index, "run_dir": str(self.out_dir.resolve()), "config": self.settings.model_dump(mode="json"),
                "items": items, "tasks": {name: {"request": asdict(by_name[name].request), "mode": by_name[name].mode,
                                                 "fingerprint": by_name[name].fingerprint} for name in items}}


def retry_policy(cfg: RunSettings) -> RetryPolicy:
    return RetryPolicy(max_attempts=max(1, cfg.max_retries + 1), base_delay=cfg.retry_base_delay, timeout=cfg.timeout,
                       max_retry_after=cfg.max_retry_after, item_budget_s=cfg.retry_budget_item,
                       run_budget_s=cfg.retry_budget_run, breaker_failures=cfg.breaker_failures)


def cache_settings(cfg: RunSettings) -> CacheSettings:
    return CacheSettings(folder=cfg.cache, off=cfg.no_cache, trust_name=cfg.cache_trust_name)


def shard_plan(job: dict) -> tuple[RunSettings, list[TaskPlan]]:
    """A shard job's settings and task plans (the driver's request settings, modes and fingerprints)."""
    cfg = RunSettings.model_validate(job["config"])
    plans = []
    for task in expand(resolve(cfg.tasks or [DEFAULT_SUITE]), cfg.prompt_variants):
        entry = job["tasks"].get(task.name)
        if entry is None:
            continue
        req = dict(entry["request"])
        req["gen_kwargs"] = tuple(tuple(kv) for kv in req.get("gen_kwargs") or ())
        req["perturb"] = tuple(req.get("perturb") or ())
        plans.append(TaskPlan(task=task, request=RequestSettings(**req), mode=entry["mode"], pack=None,
                              metrics=tuple(task.metric_names(entry["mode"])), fingerprint=entry["fingerprint"]))
    return cfg, plans


def plan(cfg: RunSettings, observer: RunObserver, model: Model | None = None) -> RunPlan:
    """Every check that can be made before a request, in the order a user fixes them; the plan."""
    check_settings(cfg)  # a missing extra (ray, submitit) or a sharding option that would be ignored
    model_meta(cfg.model_meta, cfg.model_meta_file)  # a bad --model-meta: one line, before anything else
    req = RequestSettings.from_values(cfg.model_dump())
    if cfg.gen_kwargs:
        from glotbench.engine.overrides import check_gen_kwargs

        check_gen_kwargs(cfg.gen_kwargs)
        one_value_per_knob(req)
    selected = resolve(cfg.tasks or [DEFAULT_SUITE])
    expand(selected, cfg.prompt_variants)  # a bad --prompt-variants, a variant's prompt file or template: one line, now
    if cfg.perturb:  # an unknown name, or one the task's language pack does not declare: one line, now
        check_perturbations(selected, cfg)
    if cfg.circular:
        check_circular(selected)
    fetch_missing_data(selected, cfg, observer)
    tasks, skipped = drop_tasks_without_data(selected, cfg)
    tasks = check_data_unchanged(tasks, cfg, skipped, observer)
    tasks = expand(tasks, cfg.prompt_variants)  # each prompt variant a task of its own (tasks/variants.py)
    for t in tasks:  # a language pack the task's scoring needs and that does not exist: one line, now
        t.language_pack(task_mode(t, req))
        t.check_run_mode(task_mode(t, req))  # a mode the task cannot be scored in: one line, now
    model = model or light_model(cfg)
    reuse = model is not None and finished_unchanged(cfg, tasks, model)
    loaded: dict[str, list] = {}
    if not reuse:  # a re-report reads no item (the run checks the stamp again under its lock)
        tasks, loaded = load_or_set_aside(tasks, cfg, req, skipped)
    for name, why in skipped.items():
        observer.say(f"[yellow]skipped[/] {name}: {why}")
    check_judge(tasks, cfg.judge, grades_from_file=bool(getattr(model, "has_grades", False)) if model is not None
                else recorded_grades_given(cfg))
    if not reuse:
        for t in tasks:
            t.check_fewshot(cfg.num_fewshot)
    model = model or load_model_from_config(cfg)
    judge = _model_checks(cfg, tasks, model, req, observer)
    out_dir = Path(cfg.output) if cfg.output else default_output_dir(model.model_id, cfg, model.settings())
    if cfg.output and (out_dir / JOURNAL_NAME).is_file():
        check_journal_model(out_dir, model.settings(), cfg)
    plans = task_plans(tasks, cfg, model.settings(), req, loaded)
    return RunPlan(settings=cfg, tasks=plans, skipped=skipped, model=model, judge=judge, out_dir=out_dir)


def task_plans(tasks: list[Task], cfg: RunSettings, model_settings: dict, req: RequestSettings | None = None,
               loaded: dict[str, list] | None = None) -> list[TaskPlan]:
    """Each task's plan: ``req`` (built from ``cfg`` when not given) is the one RequestSettings every
    task of the run sees; ``loaded``: items already read per task name."""
    req = req or RequestSettings.from_values(cfg.model_dump())
    plans = []
    for t in tasks:
        mode = task_mode(t, req)
        pack = t.language_pack(mode)
        plans.append(TaskPlan(task=t, request=req, mode=mode, pack=pack, metrics=tuple(t.metric_names(mode)),
                              samples=(loaded or {}).get(t.name), fingerprint=fingerprint_once(t, cfg, model_settings, pack)))
    return plans


def _model_checks(cfg: RunSettings, tasks: list[Task], model: Model, req: RequestSettings,
                  observer: RunObserver) -> Model | None:
    """What the model can do, checked against the run (knobs, --mode); the judge, built. Returns it."""
    if cfg.gen_kwargs:  # a knob the backend has no counterpart of: one line before any request
        from glotbench.engine.overrides import backend_knobs

        model.check_knobs(backend_knobs(cfg.gen_kwargs))
    if getattr(model, "notice", None):
        observer.say(f"[yellow]note[/]: {model.notice}")
    dialogues = [t.name for t in tasks if t.n_turns > 1 and task_mode(t, req) == "generate"]
    if dialogues and getattr(model, "answers_items", False):  # one recorded answer per item, not per turn
        raise GlotbenchError(f"{', '.join(dialogues)}: a multi-turn task needs a model that answers each turn; "
                             f"{model.model_id} holds one recorded answer per item (docs/multi-turn.md)")
    check_prefill(tasks, model, lambda t: task_mode(t, req))
    for note in check_mode(tasks, cfg.mode, model, lambda t: task_mode(t, req)) + plain_layout_notes(tasks, model, req):
        observer.say(f"[yellow]note[/]: {note}")
    if cfg.judge and any(t.needs_judge for t in tasks):
        return load_judge(cfg.judge, cfg.judge_options(), cfg.timeout)
    if getattr(model, "has_grades", False) and any(t.needs_judge for t in tasks):
        observer.say(f"[yellow]note[/]: grades from file: the judged task(s) are scored from column "
                     f"{model.cols['grade']!r} of {model.path.name}, no judge called", markup=True)
    return None


def default_output_dir(model_id: str, cfg: RunSettings, model_settings: dict | None = None) -> Path:
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


def check_journal_model(out_dir: Path, current: dict, cfg: RunSettings) -> None:
    journal = Journal(out_dir / JOURNAL_NAME)
    try:
        check_same_model(journal.get_meta("model_settings"), current, out_dir)
        check_same_overrides(journal.get_meta("config"), cfg.model_dump(), out_dir)
    finally:
        journal.close()


def _named(cfg: RunSettings) -> set[str]:
    return {n.strip() for raw in (cfg.tasks or []) for n in raw.split(",")}


def drop_tasks_without_data(tasks, cfg: RunSettings) -> tuple[list, dict[str, str]]:
    """Tasks that came in through a suite or glob and whose data file is absent are set aside
    (name -> the DataError's message) so the rest of the suite still runs. A task named on its
    own, or a selection where no task has its data, fails with the DataError as before."""
    named = _named(cfg)
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


def _may_set_aside(task, tasks: list, cfg: RunSettings) -> bool:
    """A task that came in through a suite or glob (or any task of a --skip-missing-data run, as a
    Czech-Bench config is) may be set aside; one named on its own, or alone, fails the run."""
    return len(tasks) > 1 and (task.name not in _named(cfg) or cfg.skip_missing_data)


def load_or_set_aside(tasks, cfg: RunSettings, req: RequestSettings,
                      skipped: dict[str, str]) -> tuple[list, dict[str, list]]:
    """Check every task's prompt files and read its items before the model is loaded. A task whose
    data is there but cannot be read (a file in another layout, a record the task cannot take) is
    set aside like a task without data: ``skipped[name]`` = its one-line reason, prefixed
    ``cannot load: ``; the others run (the Czech-Bench framework goes on when one benchmark fails).
    Returns the tasks kept and their items."""
    keep, loaded = [], {}
    for t in tasks:
        try:
            t.check_ready()
            loaded[t.name] = t.run_samples(req)
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


def finished_unchanged(cfg: RunSettings, tasks: list, model: Model) -> bool:
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


def fetch_missing_data(tasks, cfg: RunSettings, observer: RunObserver) -> None:
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

    failed = pull_tasks(lacking, Lock.load(), say=lambda line: observer.say(line, markup=False),
                        bar=observer.transfers())
    for t in lacking:
        if t.name in failed:
            t.data_problem = failed[t.name]


def check_data_unchanged(tasks, cfg: RunSettings, skipped: dict[str, str], observer: RunObserver) -> list:
    """Every file a task declares, checked against its declared (or locked, or pulled) size and
    sha256 before the model is loaded. A file in the cache that differs refuses the task in one line
    naming the file and ``glotbench data pull --force`` (a task from a suite is set aside with that
    line); ``--allow-modified-data`` runs it, and ``task.data_differs`` lists the files, which every
    output marks. A local root's copy (GLOTBENCH_DATA, shared/data: hand-made or edited on purpose,
    which a pull would not replace) runs, marked the same way. Returns the tasks kept."""
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
            observer.say(f"[yellow]{DIFFERS}[/] {t.name}: {files} ({why}; every result marked)")
            keep.append(t)
            continue
        line = (f"task {t.name}: {bad[0].path} in the cache differs from its source ({bad[0].detail}"
                f"{f'; {len(bad) - 1} more file(s)' if len(bad) > 1 else ''}): fetch it again with: glotbench data "
                f"pull {t.name} --force (or run it as it is with --set allow_modified_data=true; results marked)")
        if _may_set_aside(t, tasks, cfg):
            skipped[t.name] = line
        else:
            raise DataError(line)
    if not keep:
        raise DataError(f"no selected task has its data: {next(iter(skipped.values()))}")
    return keep


def check_perturbations(tasks, cfg: RunSettings) -> None:
    """Every ``--perturb`` name is known, applies to each task's language (its language pack's
    ``perturbations``) and has what it needs (OpenCC for zh_t2s / zh_s2t)."""
    from glotbench.languages import get_pack
    from glotbench.prompts.perturb import Perturber, parse

    steps = parse(cfg.perturb)
    for t in tasks:
        try:
            pack = get_pack(t.spec.language)
        except GlotbenchError:
            raise GlotbenchError(f"--perturb: task {t.name}: language {t.spec.language!r} has no language pack, so no "
                                 "perturbation is declared for it (docs/perturbations.md)") from None
        for name, _ in steps:
            if name not in pack.perturbations:
                raise GlotbenchError(f"--perturb {name}: does not apply to task {t.name} (language {pack.code}); its "
                                     f"language pack declares: {', '.join(pack.perturbations) or 'none'}")
        Perturber(cfg.perturb, pack.code, cfg.seed)  # a missing converter (OpenCC), a language without a standard


def check_circular(tasks) -> None:
    """``--circular`` needs multiple-choice tasks whose prompt prints the options: one line naming
    the first task that is not (tasks/circular.py); the options' gold is checked as the items load."""
    from glotbench.tasks.circular import refusal

    for t in tasks:
        why = refusal(t)
        if why:
            raise GlotbenchError(why)


def check_judge(tasks, judge_spec: str | None, grades_from_file: bool = False) -> None:
    """A judged task needs ``--judge``, unless the answers come with their grades (``recorded:FILE -M
    grade=COL``): those grades are then the score (docs/recorded-answers.md)."""
    need = [t.name for t in tasks if t.needs_judge]
    if need and not judge_spec and not grades_from_file:
        raise GlotbenchError(f"task(s) {', '.join(need)} are graded by an LLM judge: pass --judge MODEL "
                             "(e.g. --judge openai:gpt-4o or --judge llamacpp:/path/model.gguf), or score "
                             "released grades: --model recorded:FILE -M grade=COLUMN")
