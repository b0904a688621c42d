"""Paired comparison of two models scored on the same items.

* :func:`paired_bootstrap`: resample item indices (the same indices for both models, which
  keeps the pairing) and take the percentile interval of ``metric(a) - metric(b)``.
* :func:`mcnemar`: McNemar's test on per-item correctness. Only the discordant items count:
  ``b`` = A right and B wrong, ``c`` = A wrong and B right. With ``b + c < 25`` (the usual rule,
  e.g. statsmodels' documentation) the exact test is used: a two-sided binomial test of
  ``b`` successes in ``b + c`` trials with p = 0.5 (``scipy.stats.binomtest``), statistic =
  ``min(b, c)`` as statsmodels reports it. Otherwise the chi-square test with Edwards'
  continuity correction: ``(|b - c| - 1)^2 / (b + c)`` on 1 degree of freedom. Pass
  ``exact=True/False`` to force either.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass

import warnings

import numpy as np
from scipy.stats import binomtest, chi2

from glotbench.errors import DataError
from glotbench.scoring.resample import percentile_interval, resampled_stats

EXACT_BELOW = 25  # discordant pairs; below this McNemar uses the exact binomial test
_CHUNK_CELLS = 4_000_000  # resampled indices held in memory at once


@dataclass(frozen=True)
class PairedBootstrap:
    difference: float  # metric(a) - metric(b) on the full sample
    low: float
    high: float
    n_items: int
    n_resamples: int
    alpha: float

    def to_dict(self) -> dict:
        return asdict(self)


def _paired_arrays(values_a: Sequence, values_b: Sequence, what: str) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(values_a, dtype=float)
    b = np.asarray(values_b, dtype=float)
    if a.ndim != 1 or b.ndim != 1:
        raise DataError(f"{what}: expected two flat lists of per-item values")
    if a.shape != b.shape:
        raise DataError(f"{what}: model A has {a.size} items but model B has {b.size}; pair them on the same items")
    return a, b


def paired_bootstrap(
    values_a: Sequence[float],
    values_b: Sequence[float],
    metric_fn: Callable[[np.ndarray], float] = np.mean,
    n: int = 10_000,
    seed: int = 0,
    alpha: float = 0.05,
) -> PairedBootstrap:
    """Difference ``metric_fn(a) - metric_fn(b)`` and its (1 - alpha) percentile interval.

    ``values_a[i]`` and ``values_b[i]`` must be the two models' values on the same item i
    (1/0 correctness, F1, a judge score...). ``metric_fn`` maps an array of per-item values to
    one number; ``np.mean`` (the default) and ``np.nanmean`` are vectorised.
    """
    a, b = _paired_arrays(values_a, values_b, "paired_bootstrap")
    k = a.size
    if k == 0:
        raise DataError("paired_bootstrap: no items")
    with warnings.catch_warnings():
        # a resample with no value on one side (np.nanmean of all-NaN) is NaN and dropped below:
        # numpy's "Mean of empty slice" warning about it is noise to the user
        warnings.simplefilter("ignore", RuntimeWarning)
        return _paired_bootstrap(a, b, metric_fn, n, seed, alpha)


def _paired_bootstrap(a, b, metric_fn, n: int, seed: int, alpha: float) -> PairedBootstrap:
    k = a.size
    diff = float(metric_fn(a) - metric_fn(b))
    vectorised = metric_fn is np.mean or metric_fn is np.nanmean

    def per_chunk(idx: np.ndarray) -> np.ndarray:
        if vectorised:
            return metric_fn(a[idx], axis=1) - metric_fn(b[idx], axis=1)
        return np.array([metric_fn(a[row]) - metric_fn(b[row]) for row in idx], dtype=float)

    low, high = percentile_interval(resampled_stats(k, n, seed, per_chunk, _CHUNK_CELLS), alpha)
    return PairedBootstrap(diff, low, high, k, n, alpha)


@dataclass(frozen=True)
class McNemarResult:
    b: int  # A correct, B wrong
    c: int  # A wrong, B correct
    statistic: float
    p_value: float
    method: str  # "exact-binomial" or "chi2-continuity-corrected"

    def to_dict(self) -> dict:
        return asdict(self)


def _as_bool(values: Sequence, name: str) -> np.ndarray:
    arr = np.asarray(values)
    if arr.dtype != bool:
        flat = arr.astype(float)
        if not np.isin(flat, (0.0, 1.0)).all():
            raise DataError(f"mcnemar: {name} must hold only booleans or 0/1 values")
        arr = flat.astype(bool)
    return arr


def mcnemar(correct_a: Sequence, correct_b: Sequence, exact: bool | None = None) -> McNemarResult:
    """McNemar's test: do A and B have the same accuracy on these paired items?

    ``exact=None`` picks the exact binomial test when ``b + c < 25`` and the continuity-
    corrected chi-square test otherwise (see the module docstring).
    """
    if len(correct_a) != len(correct_b):
        raise DataError(f"mcnemar: model A has {len(correct_a)} items but model B has {len(correct_b)}")
    a = _as_bool(correct_a, "correct_a")
    b_ = _as_bool(correct_b, "correct_b")
    b = int(np.sum(a & ~b_))
    c = int(np.sum(~a & b_))
    use_exact = (b + c) < EXACT_BELOW if exact is None else exact
    if b + c == 0:
        return McNemarResult(b, c, 0.0, 1.0, "exact-binomial" if use_exact else "chi2-continuity-corrected")
    if use_exact:
        p = binomtest(b, b + c, 0.5, alternative="two-sided").pvalue
        return McNemarResult(b, c, float(min(b, c)), float(min(1.0, p)), "exact-binomial")
    stat = (abs(b - c) - 1) ** 2 / (b + c)
    return McNemarResult(b, c, float(stat), float(chi2.sf(stat, 1)), "chi2-continuity-corrected")
