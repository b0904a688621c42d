"""Bradley-Terry strengths of several runs from pairwise win/tie/loss outcomes, with bootstrap
intervals over items.

Model: P(i's answer is preferred to j's) = 1 / (1 + exp(-(s_i - s_j))); a strength s is in
logits (natural log-odds), so s_i - s_j = 1 means i is preferred about 73% of the time. A tie
counts as half a win for each side (the usual treatment, as in Chatbot Arena's Bradley-Terry
fit). The fit is scikit-learn's logistic regression without intercept on one row per
(pair, outcome), x = e_i - e_j, weighted by the counts (the Chatbot Arena formulation), with an
L2 penalty that is a Gaussian prior N(0, ``prior_var``) on each strength (sklearn's ``C`` is that
variance). The prior keeps the strengths finite when a run wins (or loses) every comparison,
which a plain maximum-likelihood fit cannot (and which small bootstrap resamples often show);
with hundreds of items per pair it barely moves them. The strengths sum to zero.

Intervals: each resample draws the items (task, item id) with replacement from every item that
some pair judged, keeping all of an item's pair outcomes together, refits, and takes the
alpha/2 and 1 - alpha/2 quantiles of each strength (:func:`glotbench.scoring.resample.index_chunks`).
"""

from __future__ import annotations

import warnings
from collections.abc import Hashable, Sequence

import numpy as np

from glotbench.errors import GlotbenchError
from glotbench.scoring.resample import index_chunks, percentile_interval

DEFAULT_PRIOR_VAR = 10.0
_OUTCOME = {"win": 0, "tie": 1, "loss": 2}


def design(n_runs: int, pairs: Sequence[tuple[int, int]], counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Logistic-regression rows for ``counts[k] = (wins of i, ties, wins of j)`` of pair k = (i, j).

    Each observation is written twice, as (x, 1) and (-x, 0) for i's half-wins and as (x, 0) and
    (-x, 1) for j's, so both classes are always present; the doubled weights are undone in
    :func:`fit_strengths` by halving ``C``."""
    X, y, w = [], [], []
    for (i, j), (wi, t, wj) in zip(pairs, counts):
        x = np.zeros(n_runs)
        x[i], x[j] = 1.0, -1.0
        for sign, label_i_wins in ((1.0, 1), (-1.0, 0)):
            X += [sign * x, sign * x]
            y += [label_i_wins, 1 - label_i_wins]
            w += [wi + t / 2, wj + t / 2]
    X, y, w = np.array(X), np.array(y), np.array(w, dtype=float)
    keep = w > 0
    return X[keep], y[keep], w[keep]


def fit_strengths(n_runs: int, pairs: Sequence[tuple[int, int]], counts: np.ndarray,
                  prior_var: float = DEFAULT_PRIOR_VAR) -> np.ndarray:
    """Posterior-mode strengths (see the module docstring); zeros when nothing was compared."""
    from sklearn.linear_model import LogisticRegression

    if prior_var <= 0:
        raise GlotbenchError(f"Bradley-Terry prior variance must be > 0 (got {prior_var})")
    X, y, w = design(n_runs, pairs, np.asarray(counts, dtype=float))
    if w.size == 0:
        return np.zeros(n_runs)
    # newton-cholesky: a few runs make a tiny Hessian; 8x faster than lbfgs here, the same optimum
    model = LogisticRegression(fit_intercept=False, C=prior_var / 2, solver="newton-cholesky", tol=1e-10, max_iter=1000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a resample's convergence notes are no news to the user
        model.fit(X, y, sample_weight=w)
    s = model.coef_[0]
    return s - s.mean()


def bradley_terry(labels: Sequence[str], pairs: Sequence[tuple[int, int]],
                  item_outcomes: Sequence[dict[Hashable, str]], n_boot: int = 1000, seed: int = 0,
                  alpha: float = 0.05, prior_var: float = DEFAULT_PRIOR_VAR) -> dict:
    """Strengths with intervals and ranks.

    ``pairs[k] = (i, j)``: indices into ``labels``; ``item_outcomes[k]``: item key -> outcome
    (win/tie/loss, from i's side) for the items pair k judged. Returns ``{"runs": [{label,
    strength, low, high, rank}], "n_items", "n_resamples", "prior_var", "ties": "half win"}``,
    best first."""
    n = len(labels)
    items = sorted({key for oc in item_outcomes for key in oc}, key=repr)
    index = {key: k for k, key in enumerate(items)}
    # per item, per pair: one-hot win/tie/loss (an item a pair did not judge adds nothing)
    M = np.zeros((len(items), len(pairs), 3))
    for p, oc in enumerate(item_outcomes):
        for key, outcome in oc.items():
            M[index[key], p, _OUTCOME[outcome]] += 1
    strengths = fit_strengths(n, pairs, M.sum(axis=0), prior_var)
    boot = []
    if n_boot > 0 and items:
        for idx in index_chunks(len(items), n_boot, seed):
            for row in idx:
                weights = np.bincount(row, minlength=len(items)).astype(float)
                boot.append(fit_strengths(n, pairs, np.tensordot(weights, M, axes=1), prior_var))
    boot_arr = np.array(boot) if boot else np.empty((0, n))
    order = sorted(range(n), key=lambda k: -strengths[k])
    # competition ranks: runs whose strengths agree to 1e-9 share a rank (1, 1, 3)
    rank = {k: 1 + sum(strengths[m] > strengths[k] + 1e-9 for m in range(n)) for k in range(n)}
    runs = []
    for k in order:
        low, high = percentile_interval(boot_arr[:, k], alpha) if boot else (float("nan"), float("nan"))
        runs.append({"label": labels[k], "strength": float(strengths[k]), "low": low, "high": high, "rank": rank[k]})
    return {"runs": runs, "n_items": len(items), "n_resamples": len(boot), "alpha": alpha, "prior_var": prior_var,
            "ties": "half a win for each side", "scale": "logit (natural log-odds); strengths sum to 0"}
