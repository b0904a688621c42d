"""How much a score moves: under a perturbation of the input (the performance drop rate) and across
the prompt variants a task declares (the spread). Both resample the items with replacement, the same
items on every side, so the interval keeps the pairing.

* :func:`drop_rate`: PDR = 1 - metric(perturbed) / metric(clean) (PromptBench's performance drop
  rate), with a percentile interval over item resamples; undefined (NaN) when the clean score is 0.
* :func:`variant_spread`: per-variant scores, their mean, min, max, standard deviation (n - 1) and
  the best variant, each with a percentile interval over item resamples (all variants on one
  resample of items). The best's interval is that of the per-resample maximum (it is biased upwards:
  picking the best prompt on the test items is optimistic, which is why the headline stays the
  task's declared prompt).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass

import numpy as np

from glotbench.errors import DataError
from glotbench.scoring.resample import index_chunks, percentile_interval, resampled_stats

_CHUNK_CELLS = 4_000_000


@dataclass(frozen=True)
class DropRate:
    clean: float
    perturbed: float
    drop_rate: float  # 1 - perturbed / clean
    low: float
    high: float
    n_items: int
    n_resamples: int

    def to_dict(self) -> dict:
        return asdict(self)


def _ratio(clean: float, perturbed: float) -> float:
    return float("nan") if clean == 0 or np.isnan(clean) else 1.0 - perturbed / clean


def _resamples(k: int, n: int, seed: int):
    """The item resamples of :func:`glotbench.scoring.resample.index_chunks` (every interval's draws)."""
    return index_chunks(k, n, seed, _CHUNK_CELLS)


def drop_rate(clean: Sequence[float], perturbed: Sequence[float], metric_fn: Callable = np.nanmean, n: int = 10_000,
              seed: int = 0, alpha: float = 0.05) -> DropRate:
    """``clean[i]`` and ``perturbed[i]``: the values of item i in the clean and the perturbed run."""
    a, b = np.asarray(clean, dtype=float), np.asarray(perturbed, dtype=float)
    if a.shape != b.shape or a.ndim != 1 or a.size == 0:
        raise DataError(f"drop_rate: the clean and perturbed runs must have the same items (got {a.size} and {b.size})")
    ca, cb = float(metric_fn(a)), float(metric_fn(b))
    vectorised = metric_fn is np.mean or metric_fn is np.nanmean

    def per_chunk(idx: np.ndarray) -> np.ndarray:
        if vectorised:
            ra, rb = metric_fn(a[idx], axis=1), metric_fn(b[idx], axis=1)
        else:
            ra = np.array([metric_fn(a[row]) for row in idx], dtype=float)
            rb = np.array([metric_fn(b[row]) for row in idx], dtype=float)
        return np.where(ra == 0, np.nan, 1.0 - rb / ra)

    low, high = percentile_interval(resampled_stats(a.size, n, seed, per_chunk, _CHUNK_CELLS), alpha)
    return DropRate(ca, cb, _ratio(ca, cb), low, high, int(a.size), n)


@dataclass(frozen=True)
class Spread:
    variants: list[str]
    scores: list[float]
    score_ci: list[list[float]]
    mean: float
    mean_ci: list[float]
    min: float
    min_ci: list[float]
    max: float
    max_ci: list[float]
    std: float
    std_ci: list[float]
    best: str
    best_score: float
    best_ci: list[float]
    n_items: int
    n_resamples: int

    def to_dict(self) -> dict:
        return asdict(self)


def _summary(scores: np.ndarray) -> tuple[float, float, float, float]:
    """mean, min, max, sample std (n - 1; 0 for one variant) of each row of ``scores`` (resamples x variants)."""
    std = scores.std(axis=-1, ddof=1) if scores.shape[-1] > 1 else np.zeros(scores.shape[:-1])
    return scores.mean(axis=-1), scores.min(axis=-1), scores.max(axis=-1), std


def _spread(full: np.ndarray, boots: np.ndarray, names: Sequence[str], k: int, n: int, alpha: float,
            higher_is_better: bool) -> Spread:
    """``full``: each variant's score on all items; ``boots``: resamples x variants (rows with a NaN dropped)."""
    boots = boots[~np.isnan(boots).any(axis=1)] if boots.size else boots
    mean, lo, hi, std = (float(x[0]) for x in _summary(full[None, :]))
    def ci(x: np.ndarray) -> list[float]:
        return list(percentile_interval(x, alpha))

    bm, bmin, bmax, bstd = _summary(boots) if boots.size else (np.array([]),) * 4
    best = int(np.argmax(full) if higher_is_better else np.argmin(full))
    return Spread(variants=list(names), scores=[float(x) for x in full],
                  score_ci=[ci(boots[:, v]) if boots.size else ci(boots) for v in range(len(names))],
                  mean=mean, mean_ci=ci(bm), min=lo, min_ci=ci(bmin), max=hi, max_ci=ci(bmax), std=std, std_ci=ci(bstd),
                  best=str(names[best]), best_score=float(full[best]), best_ci=ci(bmax if higher_is_better else bmin),
                  n_items=k, n_resamples=n)


def variant_spread(values: np.ndarray | Sequence[Sequence[float]], names: Sequence[str], n: int = 1000, seed: int = 0,
                   alpha: float = 0.05, higher_is_better: bool = True) -> Spread:
    """``values[i][v]``: item i's value under prompt variant v (the same items in every variant), a
    variant's score the mean; the best is the highest score (the lowest for a metric where lower is
    better), first on ties."""
    m = np.asarray(values, dtype=float)
    if m.ndim != 2 or m.shape[0] == 0 or m.shape[1] != len(names):
        raise DataError(f"variant_spread: expected items x {len(names)} variants, got shape {m.shape}")
    boots = [m[idx].mean(axis=1) for idx in _resamples(m.shape[0], n, seed)]  # resamples x variants
    b = np.concatenate(boots) if boots else np.empty((0, m.shape[1]))
    return _spread(m.mean(axis=0), b, names, int(m.shape[0]), n, alpha, higher_is_better)


def corpus_variant_spread(score: Callable[[int, np.ndarray], float], k: int, names: Sequence[str], n: int = 1000,
                          seed: int = 0, alpha: float = 0.05, higher_is_better: bool = True) -> Spread:
    """The spread of a corpus metric (macro-F1, MCC): ``score(v, idx)`` is variant v's metric on the items
    ``idx`` (of ``k``, the same items in every variant); the same resamples as :func:`variant_spread`. A
    resample where a variant's metric is undefined (NaN) is dropped."""
    if k == 0:
        raise DataError("corpus_variant_spread: no items")
    every = np.arange(k)
    full = np.array([score(v, every) for v in range(len(names))], dtype=float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        rows = [[score(v, row) for v in range(len(names))] for idx in _resamples(k, n, seed) for row in idx]
    return _spread(full, np.array(rows, dtype=float).reshape(-1, len(names)), names, k, n, alpha, higher_is_better)
