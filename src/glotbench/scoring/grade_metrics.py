"""The metric kind ``grade_rate``: the three-way judge grades' CO / NA / IN / CGA / F (``rate``) and
their every-resample forms, from the judge grade in ``pred`` (:func:`factuality_metric`) or, with
``prefix``, from per-item one-hot values (:func:`factuality_strict_metric`: glotbench's strict
judge-reply parse writes ``strict_*``, a YAML judge ``judge_*``). The grades are the judge layer's
vocabulary, so the kind is generic; the metrics that use it are declared where they are reported (the
factuality package, scoring.judge_metrics)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from glotbench.scoring.grades import CORRECT, INCORRECT, JUDGE_ERROR, NOT_ATTEMPTED, _CODE, _rates, scores_from_counts, to_grade
from glotbench.scoring.metric_kinds import MetricKind, register_kind
from glotbench.scoring.metrics import ScoredItem
from glotbench.scoring.resample import count_stats, per_list, read_only


def factuality_metric(items: list[ScoredItem], key: str) -> float:
    """CO / NA / IN / CGA / F over items whose ``pred`` is the judge grade."""
    # Count raw preds first and normalise each distinct value once: the bootstrap calls this
    # a thousand times per metric, so per-item to_grade() calls would dominate a run's summary.
    return per_list(items, "factuality scores", _item_scores)[key]


def _item_scores(items: Sequence[ScoredItem]) -> dict[str, float]:
    raw = Counter(JUDGE_ERROR if it.pred is None else it.pred for it in items)
    counts: Counter = Counter()
    for value, k in raw.items():
        counts[to_grade(value)] += k
    return scores_from_counts(counts[CORRECT], counts[INCORRECT], counts[NOT_ATTEMPTED])


def memo(item: ScoredItem, name: str, compute: Callable[[ScoredItem], Any]) -> Any:
    """``compute(item)`` once per item: a task's five factuality rates, their strict twins and every
    slice read the same items (960 bootstrap calls for 2,000 judged items), so each item's code is
    kept on it (outside its fields: equality and JSON are unchanged)."""
    kept = item.__dict__.setdefault("_resample_codes", {})
    if name not in kept:
        kept[name] = compute(item)
    return kept[name]


def _grade_code(item: ScoredItem) -> int:
    """0 correct, 1 incorrect, 2 not attempted, 3 judge error (left out of every rate)."""
    return _CODE.get(JUDGE_ERROR if item.pred is None else to_grade(item.pred), 3)


def _grade_codes(items: Sequence[ScoredItem]) -> np.ndarray:
    return read_only(np.fromiter((memo(i, "grade", _grade_code) for i in items), np.intp, len(items)))


def rate_of_counts(key: str) -> Callable[[np.ndarray], np.ndarray]:
    """CO / NA / IN / CGA / F of per-resample grade counts ``(rows, 4)``."""

    def stat(k: np.ndarray) -> np.ndarray:
        # The five rates of one counts array are computed together: the counts of a code array are
        # kept and shared (resample.count_stats), so inside a slice's same_items block the other
        # four rates (and the strict twins, when their codes are the same) reuse them.
        return per_list(k, "factuality rates", lambda c: _rates(c[:, 0], c[:, 1], c[:, 2]))[key]

    return stat


def factuality_fast(items: list[ScoredItem], n_resamples: int, seed: int, key: str) -> np.ndarray:
    """:func:`factuality_metric` on every resample: per-resample grade counts."""
    return count_stats(per_list(items, "grade codes", _grade_codes), 4, rate_of_counts(key), n_resamples, seed)


# ---------------------------------------------------------------- one-hot grade values (strict parse, YAML judges)
# ``prefix + "correct"``, ``"incorrect"``, ``"not_attempted"``: glotbench's strict judge-reply parse writes
# them as ``strict_*``; a YAML judge whose grades map to the three writes them as ``judge_*``.

def _counts(items: list[ScoredItem], prefix: str = "strict_") -> tuple[float, float, float]:
    c = i = n = 0.0
    kc, ki, kn = prefix + "correct", prefix + "incorrect", prefix + "not_attempted"
    for it in items:
        v = it.values
        if v.get(kc) is None:
            continue
        c += v[kc]
        i += v.get(ki) or 0.0
        n += v.get(kn) or 0.0
    return c, i, n


def factuality_strict_metric(items: list[ScoredItem], key: str, prefix: str = "strict_") -> float:
    """CO / NA / IN / CGA / F over the items the strict parse (or a YAML judge, ``prefix="judge_"``)
    could read."""
    return per_list(items, f"{prefix}factuality scores", lambda its: scores_from_counts(*_counts(its, prefix)))[key]


def _strict_code(item: ScoredItem, prefix: str = "strict_") -> int | None:
    """The one-hot values as a grade code (3: left out); None when they are not one-hot 0/1."""
    v = item.values
    if v.get(prefix + "correct") is None:
        return 3
    trio = (v[prefix + "correct"], v.get(prefix + "incorrect") or 0.0, v.get(prefix + "not_attempted") or 0.0)
    if any(x not in (0, 1) for x in trio) or sum(trio) > 1:
        return None
    return trio.index(1) if 1 in trio else 3


def _strict_codes(items: list[ScoredItem], prefix: str = "strict_") -> np.ndarray | None:
    codes = np.empty(len(items), dtype=np.intp)
    name = "strict" if prefix == "strict_" else prefix
    for k, it in enumerate(items):
        code = memo(it, name, lambda x: _strict_code(x, prefix))
        if code is None:
            return None
        codes[k] = code
    return read_only(codes)


def factuality_strict_fast(items: list[ScoredItem], n_resamples: int, seed: int, key: str,
                           prefix: str = "strict_") -> np.ndarray | None:
    """:func:`factuality_strict_metric` on every resample (per-resample grade counts); declines
    values that are not one-hot 0/1."""
    codes = per_list(items, f"{prefix}codes", lambda its: _strict_codes(its, prefix))
    return None if codes is None else count_stats(codes, 4, rate_of_counts(key), n_resamples, seed)


# rate: CO / NA / IN / CGA / F; prefix: one-hot per-item values (else the grade in pred)
register_kind(MetricKind(
    "grade_rate", fn=lambda items, rate, prefix=None: factuality_metric(items, rate) if prefix is None
    else factuality_strict_metric(items, rate, prefix),
    fast=lambda items, n, seed, rate, prefix=None: factuality_fast(items, n, seed, rate) if prefix is None
    else factuality_strict_fast(items, n, seed, rate, prefix)))
