"""Per-class precision, recall and F1 of a label task, with bootstrap intervals (Czech-Bench §4.3.4).

The classes are the gold labels the items hold (sorted). A prediction that is no gold class (an
unparseable answer, or a label no item has as gold) is a miss for the item's gold class and a false
positive for no class, as scikit-learn's ``precision_recall_fscore_support(labels=classes,
zero_division=0)`` counts it: precision = tp / (tp + fp), recall = tp / (tp + fn), F1 = 2tp / (2tp +
fp + fn), 0 where a denominator is 0.

The 95% intervals are percentile bootstrap intervals over items. A resample of the items is a
multinomial draw of the gold x prediction table (each cell drawn with its share of the items), so
``n_boot`` resamples cost ``n_boot`` table draws, not ``n_boot`` x items, whatever the task's size:
``default_rng(seed).multinomial(n, cells / n, size=n_boot)``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from glotbench.scoring.metrics import ScoredItem


def _clean(x: float) -> float | None:
    return None if x is None or math.isnan(x) or math.isinf(x) else round(float(x), 6)


def confusion(items: list[ScoredItem]) -> tuple[list[str], np.ndarray]:
    """The gold classes and the table ``[gold, prediction]`` (last column: a prediction that is no class)."""
    classes = sorted({str(it.gold) for it in items if it.gold is not None})
    index = {c: k for k, c in enumerate(classes)}
    table = np.zeros((len(classes), len(classes) + 1), dtype=np.int64)
    for it in items:
        if it.gold is None:
            continue
        table[index[str(it.gold)], index.get(None if it.pred is None else str(it.pred), len(classes))] += 1
    return classes, table


def _rates(tables: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Precision, recall, F1 and support per class of tables shaped (..., K, K + 1)."""
    k = tables.shape[-2]
    tp = np.diagonal(tables[..., :k], axis1=-2, axis2=-1).astype(float)
    predicted = tables[..., :k].sum(axis=-2).astype(float)  # column sums: items predicted as the class
    support = tables.sum(axis=-1).astype(float)  # row sums: items whose gold is the class
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = np.where(predicted > 0, tp / predicted, 0.0)
        recall = np.where(support > 0, tp / support, 0.0)
        den = predicted + support  # 2tp + fp + fn
        f1 = np.where(den > 0, 2 * tp / den, 0.0)
    return precision, recall, f1, support


def class_rates(gold: np.ndarray, pred: np.ndarray, n_classes: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Precision, recall and F1 of each class from item codes: ``gold`` a class index (-1: the item has no
    gold class and is left out), ``pred`` a class index or ``n_classes`` (no class)."""
    keep = gold >= 0
    table = np.bincount(gold[keep] * (n_classes + 1) + pred[keep], minlength=n_classes * (n_classes + 1))
    return _rates(table.reshape(n_classes, n_classes + 1))[:3]


def per_class(items: list[ScoredItem], n_boot: int = 1000, seed: int = 0, alpha: float = 0.05) -> dict[str, Any]:
    """``{class: {"support": n, "precision" | "recall" | "f1": {"value", "ci95"}}}`` in class order."""
    classes, table = confusion(items)
    if not classes:
        return {}
    precision, recall, f1, support = _rates(table)
    cis = None
    n = int(table.sum())
    if n_boot > 0 and n > 0:
        draws = np.random.default_rng(seed).multinomial(n, table.ravel() / n, size=n_boot).reshape((n_boot, *table.shape))
        stats = _rates(draws)[:3]
        q = [100 * alpha / 2, 100 * (1 - alpha / 2)]
        cis = [np.percentile(s, q, axis=0) for s in stats]  # each (2, K)
    out: dict[str, Any] = {}
    for k, c in enumerate(classes):
        row: dict[str, Any] = {"support": int(support[k])}
        for j, (name, values) in enumerate((("precision", precision), ("recall", recall), ("f1", f1))):
            ci = [_clean(cis[j][0][k]), _clean(cis[j][1][k])] if cis is not None else [None, None]
            row[name] = {"value": _clean(values[k]), "ci95": ci}
        out[c] = row
    return out
