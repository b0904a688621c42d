"""Duel scoring (BenCzechMark): per task, a significance test between every pair of models; a
model's score is the share of its duels it won, averaged over tasks.

A duel is won by the model whose score is better in the metric's direction when the pair's
Holm-corrected p-value is below ``alpha``; otherwise it is a draw (no one wins). The share of
duels won is comparable across metrics of incomparable scales (accuracy, MCC, an error size).

Which test fits the metric (:func:`duel_test`):

* per-item 0/1 values (accuracy): McNemar's exact test (binomial on the discordant items,
  :func:`glotbench.report.analysis.paired.mcnemar` with ``exact=True``);
* real-valued per-item values (F1 per item, a judge score): a paired permutation test
  (:func:`paired_permutation_test`: random sign flips of the per-item differences);
* corpus metrics (macro-F1, MCC): a paired bootstrap over items (:func:`bootstrap_p_value`).

Holm's step-down correction (:func:`holm`) runs over the pairs of one task.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np

from glotbench.report.analysis.paired import mcnemar
from glotbench.errors import DataError

_CHUNK_CELLS = 4_000_000


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the input order: sort ascending, the i-th (0-based)
    of m gets ``(m - i) * p``, made non-decreasing along the sorted order, capped at 1."""
    p = np.asarray(p_values, dtype=float)
    m = p.size
    if m == 0:
        return []
    order = np.argsort(p, kind="mergesort")
    adj = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    out = np.empty(m)
    out[order] = adj
    return [float(x) for x in out]


def paired_permutation_test(values_a: Sequence[float], values_b: Sequence[float], n: int = 10_000,
                            seed: int = 0) -> float:
    """Two-sided paired permutation (sign-flip) test of mean(a - b) = 0.

    Each of ``n`` permutations swaps A and B on each item with probability 1/2 (the sign of the
    item's difference flips: the draws are numpy's ``default_rng(seed).integers(0, 2, size=(n, k))``,
    1 = flip); p = (1 + #{|mean of permuted differences| >= |observed mean|}) / (n + 1)."""
    a = np.asarray(values_a, dtype=float)
    b = np.asarray(values_b, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise DataError("paired_permutation_test: two flat lists of per-item values of the same length")
    k = a.size
    if k == 0:
        raise DataError("paired_permutation_test: no items")
    d = a - b
    observed = abs(d.mean())
    rng = np.random.default_rng(seed)
    hits = 0
    chunk = max(1, _CHUNK_CELLS // k)
    for start in range(0, n, chunk):
        flips = rng.integers(0, 2, size=(min(chunk, n - start), k))
        stats = np.abs(((1 - 2 * flips) * d).mean(axis=1))
        hits += int(np.sum(stats >= observed - 1e-12))
    return (1 + hits) / (n + 1)


def bootstrap_p_value(metric_fn: Callable[[np.ndarray], float], k: int, n: int = 2000, seed: int = 0) -> float:
    """Two-sided paired bootstrap p-value of a corpus metric's difference.

    ``metric_fn(idx)`` is ``metric(A on items idx) - metric(B on items idx)``; each of ``n``
    resamples draws ``k`` item indices with replacement (numpy's ``default_rng(seed).integers(0, k,
    size=k)`` per resample, the same items on both sides); resamples where the difference is
    undefined (NaN) are dropped; p = min(1, 2 * min(share of differences <= 0, share >= 0))."""
    if k == 0:
        raise DataError("bootstrap_p_value: no items")
    rng = np.random.default_rng(seed)
    return p_from_differences(np.array([metric_fn(rng.integers(0, k, size=k)) for _ in range(n)], dtype=float))


def p_from_differences(diffs: np.ndarray) -> float:
    """The two-sided bootstrap p-value of resampled differences (NaN ones dropped), as :func:`bootstrap_p_value`."""
    diffs = np.asarray(diffs, dtype=float)
    diffs = diffs[~np.isnan(diffs)]
    if diffs.size == 0:
        return float("nan")
    return float(min(1.0, 2 * min(np.mean(diffs <= 0), np.mean(diffs >= 0))))


@dataclass
class Duel:
    task: str
    metric: str
    a: str
    b: str
    score_a: float
    score_b: float
    n_items: int
    test: str
    p_value: float
    p_holm: float = float("nan")
    winner: str | None = None  # a, b, or None (a draw: not significant after Holm)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class DuelResult:
    duels: list[Duel]
    # model -> task -> share of that task's duels the model won (only tasks where it has a valid score)
    shares: dict[str, dict[str, float]]
    # model -> tasks where its score is invalid (left out of the duels, counted)
    invalid: dict[str, list[str]] = field(default_factory=dict)
    alpha: float = 0.05
    metrics: dict[str, str] = field(default_factory=dict)  # task -> the metric its duels are on

    def average(self, model: str) -> float | None:
        """The model's share of duels won, averaged over the tasks where it had a valid score and an opponent."""
        s = self.shares.get(model) or {}
        return sum(s.values()) / len(s) if s else None

    def to_dict(self) -> dict:
        models = sorted(set(self.shares) | set(self.invalid))
        return {"alpha": self.alpha, "metrics": self.metrics, "duels": [d.to_dict() for d in self.duels],
                "models": [{"model": m, "average_share_won": self.average(m), "tasks": self.shares.get(m, {}),
                            "invalid_tasks": self.invalid.get(m, [])} for m in models]}


def decide(duels: list[Duel], higher_is_better: bool, alpha: float) -> None:
    """Holm-correct the p-values of one task's duels (in place) and name each winner."""
    for d, adj in zip(duels, holm([d.p_value for d in duels])):
        d.p_holm = adj
        if adj < alpha and d.score_a != d.score_b:
            a_better = d.score_a > d.score_b if higher_is_better else d.score_a < d.score_b
            d.winner = d.a if a_better else d.b


def task_shares(duels: list[Duel], models: list[str]) -> dict[str, float]:
    """Each model's share of won duels in one task: wins / duels it took part in."""
    out = {}
    for m in models:
        mine = [d for d in duels if m in (d.a, d.b)]
        if mine:
            out[m] = sum(d.winner == m for d in mine) / len(mine)
    return out


def duel_test(values_a: list[float] | None, values_b: list[float] | None, binary: bool,
              corpus_diff: Callable[[np.ndarray], float] | None, k: int, n: int, seed: int,
              resampled_diffs: np.ndarray | None = None) -> tuple[str, float]:
    """(test name, p-value) for one pair: McNemar exact for 0/1 per-item values, permutation for
    real per-item values, paired bootstrap for a corpus metric (``resampled_diffs`` when the metric's
    vectorised resampling gave them, drawn as :func:`bootstrap_p_value` draws; else ``corpus_diff``
    per resample)."""
    if values_a is not None and values_b is not None:
        if binary:
            return "mcnemar-exact", mcnemar(values_a, values_b, exact=True).p_value
        return "permutation", paired_permutation_test(values_a, values_b, n=n, seed=seed)
    if resampled_diffs is not None:
        return "bootstrap", p_from_differences(resampled_diffs)
    if corpus_diff is None:
        raise DataError("duel_test: neither per-item values nor a corpus metric")
    return "bootstrap", bootstrap_p_value(corpus_diff, k, n=n, seed=seed)
