"""Calibration of ``--mode loglikelihood`` option probabilities (docs/calibration-and-perplexity.md).

Each multiple-choice item's options get the softmax of their raw log-likelihoods, stored per item as
``values["ll_p:<label>"]`` by :func:`glotbench.tasks.task.score_loglikelihood`. From them ``ll_ece``
(Guo et al. 2017, 10 equal-width bins, :mod:`glotbench.scoring.calibration`'s arithmetic),
``ll_brier`` (multi-class, Brier 1950) and ``ll_auroc:<label>`` / ``ll_auroc_macro`` (one-vs-rest,
ties one half), each defined in the doc's table. Items without option probabilities are left out.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from glotbench.scoring.calibration import _ece, _table
from glotbench.scoring.metric_kinds import by_stat, register_kind
from glotbench.scoring.metrics import Metric, ScoredItem, bootstrap_ci, register_metric

PROB_PREFIX = "ll_p:"
N_BINS = 10
BINNING = ("10 equal-width bins over the top option's probability: [0, 0.1), [0.1, 0.2), ..., [0.9, 1.0] "
           "(1.0 in the last bin); ECE = sum over bins of count/N * |accuracy - mean confidence|")
BRIER = "multi-class Brier: mean over items of sum over the item's options of (p_k - y_k)^2 (0 best, 2 worst)"


def softmax(logprobs: list[float]) -> list[float]:
    """Option probabilities from their log-likelihoods (shifted by the max, so never overflows)."""
    a = np.asarray(logprobs, dtype=float)
    e = np.exp(a - a.max())
    return [float(x) for x in e / e.sum()]


def option_probs(item: ScoredItem) -> dict[str, float]:
    """``{label: probability}`` of one item (empty when the record has none)."""
    return {k[len(PROB_PREFIX):]: float(v) for k, v in item.values.items()
            if k.startswith(PROB_PREFIX) and v is not None}


def _with_probs(items: list[ScoredItem]) -> list[tuple[dict[str, float], ScoredItem]]:
    out = []
    for it in items:
        p = option_probs(it)
        if p:
            out.append((p, it))
    return out


def _top_and_hit(items: list[ScoredItem]) -> tuple[np.ndarray, np.ndarray]:
    conf, hit = [], []
    for p, it in _with_probs(items):
        c = it.values.get("correct")
        if c is None:
            continue
        conf.append(max(p.values()))
        hit.append(float(c))
    return np.array(conf, dtype=float), np.array(hit, dtype=float)


def reliability(items: list[ScoredItem], n_bins: int = N_BINS) -> list[dict[str, Any]]:
    """The reliability table: one row per bin (``lo``, ``hi``, ``count``, ``mean_confidence``, ``accuracy``)."""
    conf, hit = _top_and_hit(items)
    return _table(conf * 100.0, hit, n_bins)


def ll_ece(items: list[ScoredItem], n_bins: int = N_BINS) -> float:
    conf, hit = _top_and_hit(items)
    return _ece(_table(conf * 100.0, hit, n_bins), conf.size)


def brier_item(item: ScoredItem) -> float | None:
    """One item's multi-class Brier term (None without option probabilities)."""
    p = option_probs(item)
    if not p:
        return None
    gold = str(item.gold)
    return sum((q - (1.0 if label == gold else 0.0)) ** 2 for label, q in p.items())


def ll_brier(items: list[ScoredItem]) -> float:
    per_item = [b for it in items if (b := brier_item(it)) is not None]
    return float(np.mean(per_item)) if per_item else float("nan")


def classes(items: list[ScoredItem]) -> list[str]:
    """Every option label the items offer, sorted."""
    return sorted({label for p, _ in _with_probs(items) for label in p})


def auroc(y: np.ndarray, score: np.ndarray) -> float:
    """Mann-Whitney AUROC with average ranks for ties (NaN without both classes)."""
    n_pos = int(y.sum())
    n_neg = int(y.size - n_pos)
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    uniq, inv, counts = np.unique(score, return_inverse=True, return_counts=True)
    ends = np.cumsum(counts)
    avg_rank = ends - (counts - 1) / 2.0  # 1-based average rank of each distinct score
    ranks = avg_rank[inv]
    return float((ranks[y.astype(bool)].sum() - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg))


def ll_auroc_class(items: list[ScoredItem], label: str) -> float:
    pairs = _with_probs(items)
    if not any(label in p for p, _ in pairs):
        return float("nan")  # no item offers the label
    y = np.array([str(it.gold) == label for _, it in pairs], dtype=float)
    s = np.array([p.get(label, 0.0) for p, _ in pairs], dtype=float)
    return auroc(y, s)


def ll_auroc_macro(items: list[ScoredItem]) -> float:
    vals = [v for c in classes(items) if not np.isnan(v := ll_auroc_class(items, c))]
    return float(np.mean(vals)) if vals else float("nan")


def _metric(name: str, stat: str, **kw) -> Metric:
    return Metric(name, kind="calibration", params={"stat": stat, **kw.pop("params", {})}, role="secondary", **kw)


for _m in (
    _metric("ll_ece", "ece", direction="lower",
            description="--mode loglikelihood: expected calibration error of the softmax over the options' "
            "log-likelihoods (top option's probability vs accuracy; " + BINNING + ")"),
    _metric("ll_brier", "brier", direction="lower",
            description="--mode loglikelihood: " + BRIER + ", probabilities = softmax over the options' log-likelihoods"),
    _metric("ll_auroc_macro", "auroc_macro",
            description="--mode loglikelihood: one-vs-rest AUROC of each option label's softmax probability, "
            "unweighted mean over the labels with both positive and negative items"),
):
    register_metric(_m)


# ---------------------------------------------------------------- vectorised bootstrap forms
# The same numbers as calling the metric on each resample (tests/test_metric_values.py), computed per
# chunk of resample index rows from per-item arrays: 2,000 items x 1,000 resamples took 20-80 s per
# metric through the per-resample loop.


def _ece_form(items, n_resamples: int, seed: int):
    from glotbench.scoring import resample as rs
    from glotbench.scoring.calibration import _bin_index

    n = len(items)
    conf = np.zeros(n)
    hit = np.zeros(n)
    code = np.full(n, N_BINS, dtype=np.intp)  # N_BINS: not counted (no probabilities or no correctness)
    for k, it in enumerate(items):
        p = option_probs(it)
        c = it.values.get("correct")
        if p and c is not None:
            conf[k] = max(p.values())
            hit[k] = float(c)
            code[k] = _bin_index(np.array([conf[k] * 100.0]), N_BINS)[0]
    width = N_BINS + 1

    def per_chunk(idx):
        rows = idx.shape[0]
        flat = (code[idx] + (np.arange(rows, dtype=np.intp) * width)[:, None]).ravel()
        cnt = np.bincount(flat, minlength=rows * width).reshape(rows, width)[:, :N_BINS].astype(float)
        sc = np.bincount(flat, weights=conf[idx].ravel(), minlength=rows * width).reshape(rows, width)[:, :N_BINS]
        sh = np.bincount(flat, weights=hit[idx].ravel(), minlength=rows * width).reshape(rows, width)[:, :N_BINS]
        total = cnt.sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            gap = np.where(cnt > 0, np.abs(sh / cnt - sc / cnt), 0.0)
            return np.where(total > 0, (cnt / total[:, None] * gap).sum(axis=1), np.nan)

    return rs._collect(n, n_resamples, seed, per_chunk, rs.MAX_CELLS, cells_per_row=3 * width)


def _auroc_arrays(items, label: str):
    """Per item: the rank code of its probability of ``label`` among the distinct values, whether it
    counts as positive / negative (items without probabilities: neither), whether it offers ``label``."""
    n = len(items)
    score = np.zeros(n)
    pos = np.zeros(n)
    neg = np.zeros(n)
    offers = np.zeros(n)
    for k, it in enumerate(items):
        p = option_probs(it)
        if not p:
            continue
        score[k] = p.get(label, 0.0)
        offers[k] = float(label in p)
        if str(it.gold) == label:
            pos[k] = 1.0
        else:
            neg[k] = 1.0
    uniq, rank = np.unique(score, return_inverse=True)
    return rank.astype(np.intp), uniq.size, pos, neg, offers


def _auroc_rows(idx, rank, n_codes, pos, neg, offers):
    """Mann-Whitney AUROC of each resample row: sum over positives of (negatives below + half the tied)
    / (positives x negatives); NaN without both, or when no drawn item offers the label."""
    rows = idx.shape[0]
    flat = (rank[idx] + (np.arange(rows, dtype=np.intp) * n_codes)[:, None]).ravel()
    pc = np.bincount(flat, weights=pos[idx].ravel(), minlength=rows * n_codes).reshape(rows, n_codes)
    nc = np.bincount(flat, weights=neg[idx].ravel(), minlength=rows * n_codes).reshape(rows, n_codes)
    n_pos, n_neg = pc.sum(axis=1), nc.sum(axis=1)
    below = np.cumsum(nc, axis=1) - nc
    num = (pc * (below + 0.5 * nc)).sum(axis=1)
    ok = (n_pos > 0) & (n_neg > 0) & (offers[idx].sum(axis=1) > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(ok, num / (n_pos * n_neg), np.nan)


def _auroc_class_form(label: str):
    def form(items, n_resamples: int, seed: int):
        from glotbench.scoring import resample as rs

        rank, n_codes, pos, neg, offers = _auroc_arrays(items, label)
        return rs._collect(len(items), n_resamples, seed, lambda idx: _auroc_rows(idx, rank, n_codes, pos, neg, offers),
                           rs.MAX_CELLS, cells_per_row=2 * n_codes)

    return form


def _auroc_macro_form(items, n_resamples: int, seed: int):
    from glotbench.scoring import resample as rs

    per = [_auroc_arrays(items, c) for c in classes(items)]
    if not per:
        return np.full(n_resamples, np.nan)
    widest = max(a[1] for a in per)

    def per_chunk(idx):
        vals = np.stack([_auroc_rows(idx, *a) for a in per], axis=1)
        with np.errstate(invalid="ignore"):
            defined = ~np.isnan(vals)
            cnt = defined.sum(axis=1)
            return np.where(cnt > 0, np.where(defined, vals, 0.0).sum(axis=1) / np.maximum(cnt, 1), np.nan)

    return rs._collect(len(items), n_resamples, seed, per_chunk, rs.MAX_CELLS, cells_per_row=2 * widest)


# each statistic with its every-resample-at-once form (the plain loop is its oracle, tests/test_resample.py)
register_kind(by_stat("calibration", {
    "ece": (ll_ece, lambda items, n, seed, n_bins=None: _ece_form(items, n, seed) if n_bins in (None, N_BINS) else None),
    "brier": (ll_brier, None, brier_item),
    "auroc_macro": (ll_auroc_macro, _auroc_macro_form),
    "auroc": (ll_auroc_class, lambda items, n, seed, label: _auroc_class_form(label)(items, n, seed)),
}))


def class_metric(label: str) -> Metric:
    """The per-class AUROC as a metric (for its bootstrap interval)."""
    return _metric(f"ll_auroc:{label}", "auroc", params={"label": label})


def plot_file_name(task: str) -> str:
    """The reliability diagram's file name beside results.json (file-name-safe task name + hash)."""
    import hashlib
    import re

    readable = re.sub(r"[^A-Za-z0-9._-]+", "_", task).strip("_")[:40]
    return f"{readable}-{hashlib.sha256(task.encode('utf-8')).hexdigest()[:6]}.ll_reliability.png"


def _clean(x: float) -> float | None:
    return None if x is None or np.isnan(x) else round(float(x), 6)


def ll_calibration_summary(items: list[ScoredItem], *, n_boot: int = 1000, seed: int = 0) -> dict[str, Any]:
    """The ``ll_calibration`` block of a loglikelihood task in results.json: the reliability table,
    per-class AUROC with bootstrap intervals (the run's ``n_boot`` and ``seed``) and how each number is defined.
    Empty when no item has option probabilities."""
    used = _with_probs(items)
    if not used:
        return {}
    per_class = {}
    for c in classes(items):
        m = class_metric(c)
        lo, hi = bootstrap_ci(items, m, n_resamples=n_boot, seed=seed)
        per_class[c] = {"value": _clean(m(items)), "ci95": [_clean(lo), _clean(hi)],
                        "n_positive": sum(1 for _, it in used if str(it.gold) == c)}
    conf, hit = _top_and_hit(items)
    return {
        "n_used": len(used),
        "probabilities": "softmax over the options' summed log-likelihoods (raw, as accuracy's argmax)",
        "binning": BINNING,
        "n_bins": N_BINS,
        "brier": BRIER,
        "ece": _clean(ll_ece(items)),
        "brier_score": _clean(ll_brier(items)),
        "auroc_macro": _clean(ll_auroc_macro(items)),
        "auroc_per_class": per_class,
        "mean_confidence": _clean(float(conf.mean())) if conf.size else None,
        "accuracy": _clean(float(hit.mean())) if hit.size else None,
        "table": reliability(items),
    }
