"""Short-answer factuality metrics (SimpleQA, Chinese SimpleQA, HuSimpleQA): CO / NA / IN / CGA / F
from the judge grades (the grades and their rates: :mod:`glotbench.scoring.grades`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from glotbench.scoring.grades import *  # noqa: F401,F403  (the grades, kept importable from here)
from glotbench.scoring.grades import (CORRECT, INCORRECT, JUDGE_ERROR, NOT_ATTEMPTED, _CODE, _rates,  # noqa: F401
                                      scores_from_counts, to_grade)
from glotbench.scoring.metrics import Metric, ScoredItem, register_metric
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


_DIRECTION = {"CO": "higher", "NA": "lower", "IN": "lower", "CGA": "higher", "F": "higher"}
# NA and IN are the breakdown of the answers that are not correct: secondary, never a headline
ROLE = {"CO": "headline", "NA": "secondary", "IN": "secondary", "CGA": "headline", "F": "headline"}
for _k, _dir in _DIRECTION.items():
    register_metric(Metric(f"factuality_{_k.lower()}", fn=factuality_metric, params={"key": _k},
                           fast=factuality_fast, direction=_dir, role=ROLE[_k],
                           description=f"SimpleQA {_k} from the judge grades"))
