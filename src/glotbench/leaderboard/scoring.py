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
    """Percentile bootstrap 95% interval of ``metric`` over the items of ``gold``: the same resamples
    (same seed, same draws) and quantiles as :func:`glotbench.scoring.metrics.bootstrap_ci`, with the
    four leaderboard metrics computed from per-resample confusion matrices in NumPy (sklearn's MCC
    a thousand times over 1,000 items took seconds per approval). Other metrics use ``bootstrap_ci``."""
    import math

    from glotbench.scoring.metrics import bootstrap_ci

    items = [ScoredItem(gold=g, pred=predictions.get(i)) for i, g in sorted(gold.items())]
    if metric in CONFUSION_METRICS and len(items) >= 2:
        lo, hi = _confusion_bootstrap(items, metric, n_resamples, seed)
    else:
        lo, hi = bootstrap_ci(items, get_metric(metric), n_resamples=n_resamples, seed=seed)
    return (None, None) if math.isnan(lo) or math.isnan(hi) else (lo, hi)


CONFUSION_METRICS = ("accuracy", "mcc", "weighted_f1", "macro_f1")


def _confusion_bootstrap(items: list[ScoredItem], metric: str, n_resamples: int, seed: int,
                         alpha: float = 0.05) -> tuple[float, float]:
    import numpy as np

    from glotbench.scoring.metrics import UNPARSEABLE

    golds = [str(i.gold) for i in items]
    preds = [UNPARSEABLE if i.pred is None else str(i.pred) for i in items]
    labels = sorted(set(golds) | set(preds))
    k, n = len(labels), len(items)
    index = {lab: j for j, lab in enumerate(labels)}
    codes = np.array([index[g] * k + index[p] for g, p in zip(golds, preds)])
    rng = np.random.default_rng(seed)
    draws = np.stack([rng.integers(0, n, size=n) for _ in range(n_resamples)])  # bootstrap_ci's draws, in order
    flat = (codes[draws] + (np.arange(n_resamples) * k * k)[:, None]).ravel()
    conf = np.bincount(flat, minlength=n_resamples * k * k).reshape(n_resamples, k, k).astype(float)
    true, pred = conf.sum(axis=2), conf.sum(axis=1)  # per class: gold count, predicted count
    tp = np.diagonal(conf, axis1=1, axis2=2)
    with np.errstate(divide="ignore", invalid="ignore"):
        if metric == "accuracy":
            stats = tp.sum(axis=1) / n
        elif metric == "mcc":  # sklearn's multiclass formula; 0 when a marginal is constant
            c, s = tp.sum(axis=1), float(n)
            cov_tp = c * s - (true * pred).sum(axis=1)
            cov_pp = s * s - (pred * pred).sum(axis=1)
            cov_tt = s * s - (true * true).sum(axis=1)
            denom = cov_tt * cov_pp
            stats = np.where(denom == 0, 0.0, cov_tp / np.sqrt(np.where(denom == 0, 1.0, denom)))
        else:  # F1 per gold class (zero_division=0), over the classes present in the resample's gold
            f1 = np.where(true + pred == 0, 0.0, 2 * tp / np.where(true + pred == 0, 1.0, true + pred))
            present = true > 0
            if metric == "weighted_f1":
                stats = (f1 * true).sum(axis=1) / true.sum(axis=1)
            else:
                stats = (f1 * present).sum(axis=1) / present.sum(axis=1)
    stats = stats[~np.isnan(stats)]
    if stats.size == 0:
        return (float("nan"), float("nan"))
    return (float(np.quantile(stats, alpha / 2)), float(np.quantile(stats, 1 - alpha / 2)))


def higher_is_better(metric: str) -> bool:
    """The metric's declared direction (glotbench.scoring.metrics.Metric)."""
    return get_metric(metric).higher_is_better


def better(metric: str, a: float, b: float) -> bool:
    """Is score ``a`` better than ``b`` under ``metric``'s direction?"""
    return a > b if higher_is_better(metric) else a < b
