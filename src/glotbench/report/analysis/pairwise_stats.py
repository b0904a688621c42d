"""Win / tie / loss rates of one pair of runs, with percentile bootstrap intervals over items.

``outcomes`` holds one of ``win``, ``tie``, ``loss`` per item (from run A's side). The rates are
counts over the items that count; ``score`` is (wins + ties / 2) / n, the share of comparisons A
wins when a tie is half a win. Each resample draws n items with replacement
(:func:`glotbench.scoring.resample.count_stats`, the project's bootstrap engine), and the interval
is the alpha/2 and 1 - alpha/2 quantiles of the resampled rates.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from glotbench.errors import GlotbenchError
from glotbench.scoring.resample import count_stats, percentile_interval

CODES = {"win": 0, "tie": 1, "loss": 2}


def _rates(counts: np.ndarray) -> np.ndarray:
    """(rows, 3) counts -> (rows, 4): win, tie, loss rates and the score (win + tie / 2)."""
    n = counts.sum(axis=1, keepdims=True).astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = counts / n
    return np.concatenate([r, r[:, :1] + r[:, 1:2] / 2], axis=1)


def win_tie_loss(outcomes: Sequence[str], n_boot: int = 1000, seed: int = 0, alpha: float = 0.05) -> dict:
    """``{"n", "counts": {win, tie, loss}, "win"/"tie"/"loss"/"score": {"value", "low", "high"}}``."""
    bad = sorted({o for o in outcomes if o not in CODES})
    if bad:
        raise GlotbenchError(f"win_tie_loss: outcomes must be win, tie or loss (got {', '.join(bad)})")
    codes = np.array([CODES[o] for o in outcomes], dtype=np.intp)
    counts = np.bincount(codes, minlength=3)
    out: dict = {"n": int(codes.size), "counts": {k: int(counts[v]) for k, v in CODES.items()}}
    names = ("win", "tie", "loss", "score")
    if codes.size == 0:
        out.update({k: {"value": None, "low": None, "high": None} for k in names})
        return out
    point = _rates(counts[None, :])[0]
    boot = count_stats(codes, 3, _rates, n_boot, seed) if n_boot > 0 else np.empty((0, 4))
    for k, name in enumerate(names):
        low, high = percentile_interval(boot[:, k], alpha) if n_boot > 0 else (float("nan"), float("nan"))
        out[name] = {"value": float(point[k]), "low": low, "high": high}
    return out
