"""Inter-annotator agreement of several annotators: Fleiss' kappa and Krippendorff's alpha (nominal,
ordinal, interval), restated from their definitions with numpy.

tests/test_build_annotations.py checks both against ``statsmodels.stats.inter_rater.fleiss_kappa``
and the ``krippendorff`` package (value oracles registered in tests/value_oracles.py).
An undefined statistic (one category throughout: chance agreement 1) is NaN, never a number.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence

import numpy as np

LEVELS = ("nominal", "ordinal", "interval")


def fleiss_kappa(ratings: Sequence[Sequence[Hashable]]) -> float:
    """Fleiss (1971) kappa of items rated by the same number n >= 2 of raters (any raters):
    ``ratings[i]`` is item i's n category labels. P_i = (sum_j n_ij^2 - n) / (n (n - 1)),
    p_j = sum_i n_ij / (N n), kappa = (mean P_i - sum p_j^2) / (1 - sum p_j^2)."""
    if not ratings:
        return float("nan")
    n = len(ratings[0])
    if n < 2 or any(len(r) != n for r in ratings):
        raise ValueError("Fleiss' kappa needs the same number (>= 2) of ratings per item")
    cats = sorted({c for r in ratings for c in r}, key=str)
    index = {c: k for k, c in enumerate(cats)}
    table = np.zeros((len(ratings), len(cats)))
    for i, r in enumerate(ratings):
        for c in r:
            table[i, index[c]] += 1
    p_i = ((table ** 2).sum(axis=1) - n) / (n * (n - 1))
    p_j = table.sum(axis=0) / (len(ratings) * n)
    p_e = float((p_j ** 2).sum())
    if p_e >= 1.0:
        return float("nan")
    return (float(p_i.mean()) - p_e) / (1.0 - p_e)


def _delta2(values: np.ndarray, counts: np.ndarray, level: str) -> np.ndarray:
    """Krippendorff's squared difference between every two values (``values`` sorted ascending,
    ``counts`` their pairable totals n_c)."""
    k = len(values)
    if level == "nominal":
        return 1.0 - np.eye(k)
    if level == "interval":
        v = values.astype(float)
        return (v[:, None] - v[None, :]) ** 2
    if level == "ordinal":  # (sum_{g=c}^{k} n_g - (n_c + n_k) / 2)^2
        cum = np.concatenate([[0.0], np.cumsum(counts)])
        lo = np.minimum.outer(np.arange(k), np.arange(k))
        hi = np.maximum.outer(np.arange(k), np.arange(k))
        return (cum[hi + 1] - cum[lo] - (counts[:, None] + counts[None, :]) / 2.0) ** 2
    raise ValueError(f"level of measurement {level!r}: expected one of {', '.join(LEVELS)}")


def krippendorff_alpha(units: Sequence[Sequence], level: str = "nominal") -> float:
    """Krippendorff's alpha from the coincidence matrix: ``units[u]`` holds unit u's values (one per
    annotator who rated it; missing ratings are simply absent). Units with fewer than two values are
    not pairable and count for nothing. alpha = 1 - (n - 1) sum_ck o_ck d2_ck / sum_ck n_c n_k d2_ck.
    ordinal / interval values must be numbers (ordinal ranks the values observed)."""
    pairable = [list(u) for u in units if len(u) >= 2]
    if not pairable:
        return float("nan")
    if level == "nominal":
        values = sorted({v for u in pairable for v in u}, key=lambda v: (str(type(v)), v))
    else:
        values = sorted({float(v) for u in pairable for v in u})
        pairable = [[float(v) for v in u] for u in pairable]
    index = {v: k for k, v in enumerate(values)}
    o = np.zeros((len(values), len(values)))
    for u in pairable:
        counts = Counter(index[v] for v in u)
        m = len(u)
        for c, nc in counts.items():
            for k, nk in counts.items():
                o[c, k] += (nc * (nk - (c == k))) / (m - 1)
    n_c = o.sum(axis=1)
    n = n_c.sum()
    d2 = _delta2(np.asarray(values, dtype=object if level == "nominal" else float), n_c, level)
    expected = float((np.outer(n_c, n_c) * d2).sum())
    if expected == 0.0:
        return float("nan")
    return 1.0 - (n - 1.0) * float((o * d2).sum()) / expected
