"""``compare --by size|open|reasoning RUN...``: the models' scores grouped by their description
(``run --model-meta``; output/model_meta.py), per task and over the tasks every model scored.

Per task, a group's value is the mean of its models' scores on the task's headline metric (or
``--metric``); its 95% interval is a percentile bootstrap over the group's models (models drawn with
replacement, ``n_boot`` resamples, seeded; none for a group of one model). An invalid or failed
score never enters a mean: it is counted in ``n_invalid``. The ``(all tasks)`` row averages each
model over the tasks every grouped model has a valid score on, then groups those averages the same
way. A run without the key is left out and named in a note."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import numpy as np

from glotbench.output.model_meta import ModelMeta
from glotbench.report.comparisons import rankable
from glotbench.report.runs import RunData, primary_metric
from glotbench.scoring.resample import percentile_interval, resampled_stats

ALL_TASKS = "(all tasks)"


@dataclass
class GroupRow:
    task: str
    metric: str
    group: str
    models: list[str]
    n_invalid: int
    mean: float | None
    ci95: list[float] | None


@dataclass
class GroupResult:
    key: str
    rows: list[GroupRow]
    points: list[dict] = field(default_factory=list)  # per model and task: group, size_b, score (the plot)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"by": self.key, "rows": [asdict(r) for r in self.rows], "points": self.points, "notes": self.notes}


def group_mean(scores: list[float], n_boot: int, seed: int) -> tuple[float | None, list[float] | None]:
    """Mean and percentile-bootstrap 95% interval over ``scores`` (one per model): resample indices
    ``default_rng(seed).integers(0, n, (n_boot, n))``, the 2.5th and 97.5th percentiles of the means."""
    if not scores:
        return None, None
    arr = np.asarray(scores, dtype=float)
    mean = float(arr.mean())
    if len(arr) < 2 or n_boot < 1:
        return mean, None
    lo, hi = percentile_interval(resampled_stats(len(arr), n_boot, seed, lambda idx: arr[idx].mean(axis=1)))
    return mean, [lo, hi]


def _meta(run: RunData) -> ModelMeta:
    return ModelMeta.from_json(run.results.get("model_meta"))


def groups_from_runs(runs: list[RunData], key: str, metric: str | None = None, n_boot: int = 1000,
                     seed: int = 0) -> GroupResult:
    notes: list[str] = []
    model_group: dict[str, str] = {}
    model_size: dict[str, float | None] = {}
    tasks_of: dict[str, dict[str, dict]] = {}
    for r in runs:
        meta = _meta(r)
        g = meta.group(key)
        if g is None:
            notes.append(f"{r.label} ({r.path}): no {key} in its model_meta (run --model-meta {key}=...): left out")
            continue
        model_group.setdefault(r.label, g)
        model_size.setdefault(r.label, meta.size_b)
        tasks_of.setdefault(r.label, {}).update(r.tasks)
    rows: list[GroupRow] = []
    points: list[dict] = []
    task_list: list[str] = []
    for tasks in tasks_of.values():
        task_list += [t for t in tasks if t not in task_list]
    valid: dict[str, dict[str, float]] = {m: {} for m in tasks_of}
    metric_of: dict[str, str] = {}
    for task in task_list:
        first = next(tasks[task] for tasks in tasks_of.values() if task in tasks)
        m = metric or primary_metric(first)
        if m is None:
            continue
        metric_of[task] = m
        by_group: dict[str, list[tuple[str, float | None]]] = {}
        for model, tasks in tasks_of.items():
            if task not in tasks:
                continue
            score = rankable(tasks[task], m)
            score = None if score is None or (isinstance(score, float) and math.isnan(score)) else float(score)
            by_group.setdefault(model_group[model], []).append((model, score))
            if score is not None:
                valid[model][task] = score
                points.append({"model": model, "task": task, "group": model_group[model], "size_b": model_size[model],
                               "score": score})
        for g in sorted(by_group, key=_order(key)):
            scored = [(mo, s) for mo, s in by_group[g] if s is not None]
            mean, ci = group_mean([s for _, s in scored], n_boot, seed)
            rows.append(GroupRow(task, m, g, [mo for mo, _ in scored], len(by_group[g]) - len(scored), mean, ci))
    common = [t for t in task_list if t in metric_of and all(t in v for v in valid.values())]
    if common and len(common) < len([t for t in task_list if t in metric_of]):
        notes.append(f"{ALL_TASKS}: the {len(common)} task(s) every model has a valid score on: {', '.join(common)}")
    if common:
        by_group_all: dict[str, list[tuple[str, float]]] = {}
        for model, v in valid.items():
            avg = sum(v[t] for t in common) / len(common)
            by_group_all.setdefault(model_group[model], []).append((model, avg))
            points.append({"model": model, "task": ALL_TASKS, "group": model_group[model], "size_b": model_size[model],
                           "score": avg})
        for g in sorted(by_group_all, key=_order(key)):
            mean, ci = group_mean([s for _, s in by_group_all[g]], n_boot, seed)
            rows.append(GroupRow(ALL_TASKS, "mean of headline scores" if metric is None else metric, g,
                                 [mo for mo, _ in by_group_all[g]], 0, mean, ci))
    elif task_list:
        notes.append(f"{ALL_TASKS}: no task has a valid score from every model; no average over tasks")
    return GroupResult(key, rows, points, notes)


def _order(key: str):
    def order(g: str):
        if key == "size":
            return (float(g[:-1]), g)
        return (0, g)
    return order


def plot_score_vs_size(points: list[dict], path) -> None:
    """Score vs model size (log x), one panel per task, one colour per model, each point labelled
    (Chinese SimpleQA Fig. 4, OpenHuEval Table 4 as a picture); a PNG through plots/_mpl.py (Agg)."""
    from glotbench.plots._mpl import pyplot, save  # one line naming the plots extra when matplotlib is absent
    from glotbench.report.plots import _style, model_color

    plt = pyplot()
    from matplotlib import ticker

    pts = [p for p in points if p.get("size_b") and p.get("score") is not None]
    tasks = list(dict.fromkeys(p["task"] for p in pts)) or ["(no scores)"]
    models = list(dict.fromkeys(p["model"] for p in pts))
    fig, axes = plt.subplots(1, len(tasks), figsize=(4.2 * len(tasks), 3.2), squeeze=False)
    for ax, task in zip(axes[0], tasks):
        for p in (q for q in pts if q["task"] == task):
            ax.scatter([p["size_b"]], [p["score"]], s=28, color=model_color(models.index(p["model"])), zorder=3)
            ax.annotate(p["model"], (p["size_b"], p["score"]), textcoords="offset points", xytext=(4, 3), fontsize=7)
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}B"))
        ax.xaxis.set_minor_formatter(ticker.NullFormatter())
        ax.margins(x=0.15, y=0.12)
        ax.set_title(task, fontsize=9)
        ax.set_xlabel("parameters (log scale)")
        _style(ax)
        ax.grid(axis="y", alpha=0.25)
    axes[0][0].set_ylabel("score")
    fig.tight_layout()
    save(fig, path)
