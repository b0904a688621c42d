"""Label metrics a benchmark's reference rule defines, as generic corpus functions with their
every-resample forms: macro-F1 over the labels seen (scikit-learn's ``f1_score(..., average="macro")``
on the items carrying both values) and the mean of per-topic accuracies (MMLU's score). The metrics
are declared by the benchmarks that report them (Czech-Bench's ``cb_*``); a finished run's
results.json names these functions, so reading it imports no benchmark code."""

from __future__ import annotations

import math

import numpy as np

from glotbench.scoring import resample as rs
from glotbench.scoring.metrics import ScoredItem


def macro_f1_of(items: list[ScoredItem], gold_key: str, pred_key: str) -> float:
    """Macro-F1 over the items that carry both values, labels = those seen in either list
    (what ``evaluate``'s ``f1`` with ``average="macro"`` computes through scikit-learn)."""
    pairs = [(i.values[gold_key], i.values[pred_key]) for i in items if gold_key in i.values and pred_key in i.values]
    if not pairs:
        return float("nan")
    g, p = zip(*pairs)
    from sklearn.metrics import f1_score  # the reference's own call; imported when a Czech-Bench F1 is computed

    return float(f1_score(list(g), list(p), average="macro"))


def _sklearn_plain_labels(values: list) -> bool:
    """Labels whose ``sorted(set(...))`` is scikit-learn's label order and that scikit-learn takes
    as classes: all strings, or all whole finite numbers (no bools). Anything else: no fast form."""
    if all(type(v) is str for v in values):
        return True
    return all(isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))
               and math.isfinite(v) and v == int(v) and abs(v) < 2**53 for v in values)


def macro_f1_of_fast(items: list[ScoredItem], n_resamples: int, seed: int, gold_key: str,
                     pred_key: str) -> np.ndarray | None:
    """:func:`macro_f1_of` on every resample: per-label sums over the items carrying both values,
    averaged over the labels in that resample's gold or predictions (NaN when no item is left)."""
    keep = np.fromiter((gold_key in i.values and pred_key in i.values for i in items), bool, len(items))
    golds = [i.values[gold_key] for i, k in zip(items, keep) if k]
    preds = [i.values[pred_key] for i, k in zip(items, keep) if k]
    if not _sklearn_plain_labels(golds + preds):
        return None
    code = {lab: c for c, lab in enumerate(sorted(set(golds) | set(preds)))}
    gold = np.zeros(len(items), np.intp)
    pred = np.zeros(len(items), np.intp)
    gold[keep] = [code[g] for g in golds]
    pred[keep] = [code[p] for p in preds]
    return rs.label_sum_stats(gold, pred, max(len(code), 1), rs.macro_f1_from_sums("seen"), n_resamples, seed, keep=keep)


def topic_macro_accuracy(items: list[ScoredItem]) -> float:
    """MMLU: the mean of per-topic accuracies (parsed items only; topics with none left out)."""
    by_topic: dict[str, list[float]] = {}
    for i in items:
        if "cb_correct" in i.values:
            by_topic.setdefault(str(i.metadata.get("subject")), []).append(i.values["cb_correct"])
    return float(np.mean([np.mean(v) for v in by_topic.values()])) if by_topic else float("nan")


def topic_macro_accuracy_fast(items: list[ScoredItem], n_resamples: int, seed: int) -> np.ndarray | None:
    """:func:`topic_macro_accuracy` on every resample, the topics averaged in the order they first
    appear in the resample (as the dict fills); declines ``cb_correct`` values other than 0 and 1."""
    topics: dict[str, int] = {}
    group = np.empty(len(items), np.intp)
    hits = np.zeros(len(items), np.intp)
    for k, it in enumerate(items):
        if "cb_correct" not in it.values:
            group[k] = -1
            continue
        v = it.values["cb_correct"]
        if isinstance(v, (bool, np.bool_)) or v not in (0, 1):
            return None
        group[k] = topics.setdefault(str(it.metadata.get("subject")), len(topics))
        hits[k] = int(v == 1)
    group[group < 0] = len(topics)
    return rs.group_mean_of_means_stats(group, hits, len(topics), n_resamples, seed)
