"""Best-of-N accuracy (Chinese SimpleQA §4.5, "test-time compute"): each item is answered N
times independently; accuracy@k is the share of items with a CORRECT answer among the first k.

``method="first_k"`` follows the paper (the answers' order as sampled). ``method="unbiased"``
averages over all orders with the pass@k estimator 1 - C(N-c, k) / C(N, k) (Chen et al. 2021),
which gives a smoother curve from the same samples. A JUDGE_ERROR answer counts as not correct.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import comb
from typing import Any

import numpy as np

from glotbench.errors import DataError
from glotbench.scoring.grades import CORRECT, to_grade


def _correct_matrix(grades_per_item: Sequence[Sequence[Any]]) -> np.ndarray:
    if not grades_per_item:
        return np.zeros((0, 0), dtype=bool)
    n = len(grades_per_item[0])
    rows = []
    for k, item in enumerate(grades_per_item):
        if len(item) != n:
            raise DataError(f"best-of-N: item #{k} has {len(item)} answers, item #0 has {n}; all items need the same N")
        rows.append([to_grade(g, f"item #{k} answer #{j}") is CORRECT for j, g in enumerate(item)])
    return np.array(rows, dtype=bool)


def accuracy_at_k(grades_per_item: Sequence[Sequence[Any]], method: str = "first_k") -> list[float]:
    """``[acc@1, acc@2, ..., acc@N]`` as fractions."""
    m = _correct_matrix(grades_per_item)
    if m.size == 0:
        return []
    n = m.shape[1]
    if method == "first_k":
        return [float(v) for v in np.logical_or.accumulate(m, axis=1).mean(axis=0)]
    if method == "unbiased":
        c = m.sum(axis=1)
        return [float(np.mean([1.0 - comb(n - ci, k) / comb(n, k) for ci in c])) for k in range(1, n + 1)]
    raise ValueError(f"best-of-N: unknown method {method!r}; use 'first_k' or 'unbiased'")
