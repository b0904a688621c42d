"""Read finished run directories (results.json + samples.jsonl) for reports and comparisons.

Nothing here calls a model: a report or a comparison is built from what a run wrote. Each run
directory is one model's results; runs of the same model (same ``model_id``) are merged by
:func:`scores_by_model`. A model's display name is its ``model_id`` without the ``@...`` suffix
(``openai:gpt-4o``, ``llamacpp:SmolLM2-135M-Instruct.Q4_1.gguf``); two different models that would
show the same name (two servers both called ``stub``) get the name of the first run directory of
each appended. Runs of one model that hold the same task (two prompt variants, generate vs
loglikelihood) are not merged: each of those is labelled with its own directory name.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path

from glotbench.data.loaders import iter_jsonl
from glotbench.errors import DataError, GlotbenchError
from glotbench.output.run_result import migrate
from glotbench.sample_record import SampleRecord
from glotbench.scoring.metrics import Metric


@dataclass
class RunData:
    path: Path
    results: dict
    samples: list[SampleRecord] = field(default_factory=list)
    label: str = ""

    @property
    def model_id(self) -> str:
        return str((self.results.get("model") or {}).get("model_id", "?"))

    @property
    def tasks(self) -> dict[str, dict]:
        return self.results.get("tasks") or {}

    def samples_of(self, task: str) -> list[SampleRecord]:
        return [s for s in self.samples if s.task == task]


def headline_metrics(task_result: dict) -> list[str]:
    """The task's headline metrics (one per measure; see :mod:`glotbench.scoring.roles`): as the run
    wrote them (results.json ``headline_metrics``), else derived from its metrics' roles."""
    from glotbench.scoring.roles import headline_metrics as derive

    metrics = list(task_result.get("metrics") or {})
    written = task_result.get("headline_metrics")
    if isinstance(written, list) and written:
        return [m for m in written if m in metrics] or written
    return derive(m for m in (metric_of(task_result, n) for n in metrics) if m is not None)


def primary_metric(task_result: dict) -> str | None:
    """The task's headline number: its first headline metric (a parse rate or an error size never
    is), else its first metric."""
    written = task_result.get("headline")
    if isinstance(written, str) and written in (task_result.get("metrics") or {}):
        return written
    heads = headline_metrics(task_result)
    return heads[0] if heads else next(iter(task_result.get("metrics") or {}), None)


def metric_of(task_result: dict, name: str | None) -> Metric | None:
    """The metric's definition as the run wrote it (results.json ``metric_definitions``).

    Runs written before definitions were stored fall back to the registered built-in of that
    name, then to "the mean of the per-item value of that name, higher is better". A definition
    written before metrics declared a role takes the role, measure and parse key of the
    registered metric of that name.
    """
    if name is None:
        return None
    from glotbench.scoring.metrics import get_metric

    d = (task_result.get("metric_definitions") or {}).get(name)
    if isinstance(d, dict):
        m = Metric.from_dict({"name": name, **d})
        if "role" not in d:
            try:
                reg = get_metric(name)
            except GlotbenchError:
                return m
            m = dataclasses.replace(m, role=reg.role, measure=reg.measure, parsed_key=reg.parsed_key)
        return m
    try:
        return get_metric(name)
    except GlotbenchError:
        return Metric(name=name, key=name)


def unavailable(task: str, metric: Metric) -> str:
    """The one line a comparison prints for a metric this process cannot recompute."""
    return (f"{task} {metric.name}: its kind {metric.kind!r} is not installed here (a plugin package's); the stored "
            "value and interval are shown, no paired test is computed")


def higher_is_better(task_result: dict, name: str | None) -> bool:
    m = metric_of(task_result, name)
    return True if m is None else m.higher_is_better


def metric_value(task_result: dict, metric: str | None = None) -> float | None:
    metric = metric or primary_metric(task_result)
    if metric is None:
        return None
    return ((task_result.get("metrics") or {}).get(metric) or {}).get("value")


def _read_samples(path: Path) -> list[SampleRecord]:
    out = []
    if not path.is_file():
        return out
    for n, rec in iter_jsonl(path, encoding="utf-8"):
        if "task" not in rec or "sample_id" not in rec:
            raise DataError(f"{path}: line {n}: a sample record needs fields 'task' and 'sample_id'")
        out.append(SampleRecord.from_json(rec))
    return out


def load_run(path: str | Path, with_samples: bool = True) -> RunData:
    """One run directory; a one-line DataError naming the directory/file when it is not one."""
    p = Path(path)
    res_path = p / "results.json" if p.is_dir() else p
    if p.is_file() and p.name == "results.json":
        p = p.parent
    if not res_path.is_file():
        raise DataError(f"{p}: no results.json here; is it a glotbench run directory (glotbench run -o DIR)?")
    try:
        results = json.loads(res_path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise DataError(f"{res_path}: not valid JSON (line {err.lineno})") from None
    if not isinstance(results, dict) or not isinstance(results.get("tasks"), dict):
        raise DataError(f"{res_path}: field 'tasks': missing; not a glotbench results file")
    results = migrate(results, str(res_path))  # any version's layout as this one writes it
    samples = _read_samples(p / "samples.jsonl") if with_samples else []
    return RunData(path=p, results=results, samples=samples)


def short_model_name(model_id: str) -> str:
    return model_id.split("@", 1)[0]


def load_runs(paths: list[str | Path], with_samples: bool = True) -> list[RunData]:
    """Load several run directories and give each a display label (see the module docstring)."""
    if not paths:
        raise DataError("no run directories given")
    runs = [load_run(p, with_samples) for p in paths]
    by_name: dict[str, set[str]] = {}
    first_dir: dict[str, str] = {}
    for r in runs:
        by_name.setdefault(short_model_name(r.model_id), set()).add(r.model_id)
        first_dir.setdefault(r.model_id, r.path.name)
    # Runs of one model that share a task are different variants (prompt, mode): keep them apart.
    clash = {id(x) for i, r in enumerate(runs) for q in runs[i + 1:]
             if q.model_id == r.model_id and set(q.tasks) & set(r.tasks) for x in (r, q)}
    for r in runs:
        name = short_model_name(r.model_id)
        if id(r) in clash:
            r.label = f"{name} ({r.path.name})"
        else:
            # runs of one model share a label; two models with one name get their first run's folder name
            r.label = name if len(by_name[name]) == 1 else f"{name} ({first_dir[r.model_id]})"
    return runs


def scores_by_model(runs: list[RunData]) -> dict[str, dict[str, dict]]:
    """``{label: {task: task_result}}``, runs of the same model merged (a later run's task wins)."""
    out: dict[str, dict[str, dict]] = {}
    for r in runs:
        out.setdefault(r.label, {}).update(r.tasks)
    return out


def task_names(runs: list[RunData]) -> list[str]:
    seen: list[str] = []
    for r in runs:
        for t in r.tasks:
            if t not in seen:
                seen.append(t)
    return seen


def model_labels(runs: list[RunData]) -> list[str]:
    seen: list[str] = []
    for r in runs:
        if r.label not in seen:
            seen.append(r.label)
    return seen
