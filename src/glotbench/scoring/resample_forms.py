"""Resample forms: how a corpus metric turns scored items into arrays for the vectorised bootstrap.

A metric function may carry a ``resample`` attribute: ``form(items, n_resamples, seed)`` returns
one statistic per resample (NaN where undefined), computed by :mod:`glotbench.scoring.resample`,
or ``None`` when the data does not allow an exact vectorised form (then ``bootstrap_ci`` calls
the metric once per resample). A form must give the same numbers as calling the metric on each
resample drawn by ``np.random.default_rng(seed).integers(0, n, size=n)`` in turn;
tests/test_resample.py checks every built-in metric against that plain loop.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from glotbench.scoring import resample as rs

Form = Callable[[Sequence[Any], int, int], "np.ndarray | None"]


def _label_codes(items: Sequence[Any]) -> tuple[np.ndarray, np.ndarray, int]:
    from glotbench.scoring.metrics import UNPARSEABLE

    golds = [str(i.gold) for i in items]
    preds = [UNPARSEABLE if i.pred is None else str(i.pred) for i in items]
    labels = sorted(set(golds) | set(preds))  # sorted, as scikit-learn orders them
    code = {lab: k for k, lab in enumerate(labels)}
    return (np.fromiter((code[g] for g in golds), np.intp, len(golds)),
            np.fromiter((code[p] for p in preds), np.intp, len(preds)), len(labels))


def confusion_form(stat: Callable[[np.ndarray], np.ndarray]) -> Form:
    """A label metric computed from each resample's confusion matrix (gold and pred compared as strings)."""

    def form(items, n_resamples, seed):
        gold, pred, k = _label_codes(items)
        return rs.confusion_stats(gold, pred, k, stat, n_resamples, seed)

    return form


def label_point(stat: Callable[[np.ndarray], np.ndarray], golds: Sequence[Any], preds: Sequence[Any]) -> float:
    """A confusion-matrix metric on the whole set (the same arithmetic as each resample's value)."""
    if not golds:
        return float("nan")
    labels = sorted({str(g) for g in golds} | {str(p) for p in preds})
    code = {lab: k for k, lab in enumerate(labels)}
    k = len(labels)
    pair = np.fromiter((code[str(g)] * k + code[str(p)] for g, p in zip(golds, preds)), np.intp, len(golds))
    return float(stat(np.bincount(pair, minlength=k * k).reshape(1, k, k))[0])


def accuracy_form(items, n_resamples, seed):
    gold, pred, _ = _label_codes(items)
    return rs.mean_stats((gold == pred).astype(float), n_resamples, seed)


LABEL_FORMS: dict[str, Form] = {
    "accuracy": accuracy_form,
    "macro_f1": confusion_form(rs.macro_f1_from_confusion),
    "weighted_f1": confusion_form(rs.weighted_f1_from_confusion),
    "mcc": confusion_form(rs.mcc_from_confusion),
}


def item_values(items: Sequence[Any], key: str) -> np.ndarray:
    """``item.values[key]`` per item as floats, NaN where missing or None."""
    out = np.empty(len(items))
    for k, it in enumerate(items):
        v = it.values.get(key)
        out[k] = np.nan if v is None else v
    return out


def mean_form(key: str) -> Form:
    """The mean of a per-item value over the items that have it."""

    def form(items, n_resamples, seed):
        return rs.mean_stats(item_values(items, key), n_resamples, seed)

    return form


def _exact_sums(x: np.ndarray) -> bool:
    """Whole numbers small enough that any summation order gives the same float sum."""
    return bool(np.all(np.isfinite(x)) and np.all(x == np.round(x)) and np.abs(x).sum() < 2**52)


def ratio_of_sums_form(num_key: str, den_key: str) -> Form:
    """``sum(num) / sum(den)`` over items (missing or None counts 0). Vectorised only for whole-number
    values: the reference sums left to right in Python, which numpy matches only when sums are exact."""

    def form(items, n_resamples, seed):
        num = np.array([float(i.values.get(num_key) or 0.0) for i in items])
        den = np.array([float(i.values.get(den_key) or 0.0) for i in items])
        if not (_exact_sums(num) and _exact_sums(den)):
            return None
        return rs.ratio_stats(num, den, n_resamples, seed)

    return form


def answered_form(items, n_resamples, seed):
    """The fraction of items with a parseable answer (``pred`` not None)."""
    return rs.mean_stats(np.fromiter((i.pred is not None for i in items), float, len(items)), n_resamples, seed)


def category_form(code_of: Callable[[Any], int], n_codes: int, stat: Callable[[np.ndarray], np.ndarray]) -> Form:
    """A metric of per-resample category counts; ``code_of(item)`` gives each item's category."""

    def form(items, n_resamples, seed):
        codes = np.fromiter((code_of(i) for i in items), np.intp, len(items))
        return rs.count_stats(codes, n_codes, stat, n_resamples, seed)

    return form
