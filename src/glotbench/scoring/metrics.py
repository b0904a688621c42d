"""Corpus-level metrics over (gold, prediction) pairs or per-item values.

Every metric is a function ``fn(items) -> float`` where ``items`` is a list of
:class:`ScoredItem`; that shape lets one bootstrap routine put an interval on any of them.
Classification metrics use scikit-learn's definitions and arithmetic (checked against
``sklearn.metrics`` in tests/test_resample.py), computed from confusion matrices so that
neither a run nor its bootstrap needs to import scikit-learn.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from glotbench.scoring import resample_forms
from glotbench.scoring.resample import (
    macro_f1_from_confusion,
    mcc_from_confusion,
    percentile_interval,
    weighted_f1_from_confusion,
)

UNPARSEABLE = "<unparseable>"


@dataclass
class ScoredItem:
    gold: Any
    pred: Any  # None when the answer could not be extracted
    values: dict[str, float] = field(default_factory=dict)  # per-item scores, e.g. {"exact_match": 1.0}
    metadata: dict[str, Any] = field(default_factory=dict)


def _labels(items: list[ScoredItem]) -> tuple[list[str], list[str]]:
    golds = [str(i.gold) for i in items]
    preds = [UNPARSEABLE if i.pred is None else str(i.pred) for i in items]
    return golds, preds


def accuracy(golds: list, preds: list) -> float:
    if not golds:
        return float("nan")
    return float(np.mean([str(g) == str(p) for g, p in zip(golds, preds)]))


# Macro/weighted F1 and MCC are computed from the confusion matrix with scikit-learn's arithmetic
# (glotbench.scoring.resample); tests/test_resample.py checks them against sklearn.metrics.
def macro_f1(golds: list, preds: list) -> float:
    return resample_forms.label_point(macro_f1_from_confusion, golds, preds)


def weighted_f1(golds: list, preds: list) -> float:
    return resample_forms.label_point(weighted_f1_from_confusion, golds, preds)


def mcc(golds: list, preds: list) -> float:
    return resample_forms.label_point(mcc_from_confusion, golds, preds)


def _pairwise(fn: Callable[[list, list], float]) -> Callable[[list[ScoredItem]], float]:
    def metric(items: list[ScoredItem]) -> float:
        golds, preds = _labels(items)
        return fn(golds, preds)

    metric.__name__ = fn.__name__
    metric.resample = resample_forms.LABEL_FORMS.get(fn.__name__)  # type: ignore[attr-defined]
    return metric


def mean_of(value_name: str) -> Callable[[list[ScoredItem]], float]:
    """The mean of a per-item value (exact match, numeric match, judge score...)."""

    def metric(items: list[ScoredItem]) -> float:
        vals = [i.values[value_name] for i in items if value_name in i.values and i.values[value_name] is not None]
        return float(np.mean(vals)) if vals else float("nan")

    metric.__name__ = f"mean_{value_name}"
    metric.resample = resample_forms.mean_form(value_name)  # type: ignore[attr-defined]
    return metric


# name -> (function over items, is_per_item_mean)
METRICS: dict[str, Callable[[list[ScoredItem]], float]] = {
    "accuracy": _pairwise(accuracy),
    "macro_f1": _pairwise(macro_f1),
    "weighted_f1": _pairwise(weighted_f1),
    "mcc": _pairwise(mcc),
    "exact_match": mean_of("exact_match"),
    "numeric_match": mean_of("numeric_match"),
    "abs_error": mean_of("abs_error"),
    "rel_error": mean_of("rel_error"),
    "accuracy_norm": mean_of("correct_norm"),
}


def register_metric(name: str, fn: Callable[[list[ScoredItem]], float]) -> None:
    METRICS[name] = fn


def get_metric(name: str) -> Callable[[list[ScoredItem]], float]:
    if name in METRICS:
        return METRICS[name]
    if name.startswith("mean:"):
        return mean_of(name.split(":", 1)[1])
    raise KeyError(f"unknown metric {name!r}; known: {', '.join(sorted(METRICS))}")


def bootstrap_ci(
    items: list[ScoredItem],
    metric: Callable[[list[ScoredItem]], float],
    n_resamples: int = 1000,
    alpha: float = 0.05,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap interval (resampling items with replacement).

    A metric with a ``resample`` form (see :mod:`glotbench.scoring.resample_forms`) is computed
    for all resamples at once in bounded memory; any other metric is called once per resample.
    Both draw the same indices, so a given seed gives the same interval either way.
    """
    n = len(items)
    if n < 2:
        return (float("nan"), float("nan"))
    form = getattr(metric, "resample", None)
    stats = form(items, n_resamples, seed) if form is not None else None
    if stats is None:
        rng = np.random.default_rng(seed)
        stats = np.array([metric([items[j] for j in rng.integers(0, n, size=n)]) for _ in range(n_resamples)])
    return percentile_interval(stats, alpha)
