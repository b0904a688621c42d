"""Scoring a validated submission against a task's hidden gold labels. The only reader of gold."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from glotbench.leaderboard.schema import GoldLabel, Task
from glotbench.scoring.metrics import ScoredItem, get_metric

TASK_METRICS = ("accuracy", "mcc", "weighted_f1", "macro_f1")


def gold_for(db: Session, task: Task) -> dict[str, str]:
    return dict(db.execute(select(GoldLabel.item_id, GoldLabel.label).where(GoldLabel.task_id == task.id)).all())


def task_ids(db: Session, task: Task) -> set[str]:
    return set(db.scalars(select(GoldLabel.item_id).where(GoldLabel.task_id == task.id)))


def score_predictions(gold: dict[str, str], predictions: dict[str, str], metric: str) -> float:
    """``metric`` over the items of ``gold`` (ids must match; the validator checks that first)."""
    items = [ScoredItem(gold=g, pred=predictions.get(i)) for i, g in sorted(gold.items())]
    return float(get_metric(metric)(items))


def score_interval(gold: dict[str, str], predictions: dict[str, str], metric: str,
                   n_resamples: int = 1000, seed: int = 0) -> tuple[float | None, float | None]:
    """Percentile bootstrap 95% interval of ``metric`` over the items of ``gold`` (glotbench's
    :func:`~glotbench.scoring.metrics.bootstrap_ci`, fixed seed so it is reproducible)."""
    import math

    from glotbench.scoring.metrics import bootstrap_ci

    items = [ScoredItem(gold=g, pred=predictions.get(i)) for i, g in sorted(gold.items())]
    lo, hi = bootstrap_ci(items, get_metric(metric), n_resamples=n_resamples, seed=seed)
    return (None, None) if math.isnan(lo) or math.isnan(hi) else (lo, hi)


def higher_is_better(metric: str) -> bool:
    """The metric's declared direction (glotbench.scoring.metrics.Metric)."""
    return get_metric(metric).higher_is_better


def better(metric: str, a: float, b: float) -> bool:
    """Is score ``a`` better than ``b`` under ``metric``'s direction?"""
    return a > b if higher_is_better(metric) else a < b
