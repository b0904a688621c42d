"""Vectorised, memory-bounded bootstrap engine: pure functions over numpy arrays.

A percentile bootstrap draws ``n_resamples`` index vectors of length n. Holding them all at once
costs ``8 * n_resamples * n`` bytes (800 MB at 100k items), so :func:`index_chunks` yields them a
few rows at a time, at most ``max_cells`` indices per chunk. The chunks come from one generator
in order, so they are exactly the rows of ``rng.integers(0, n, size=(n_resamples, n))``: a fixed
seed gives the same intervals as drawing the whole matrix at once, or one row per resample.

Each statistic is computed per chunk from small sufficient statistics: per-resample sums for
means and ratios, per-resample category counts (``bincount``) for count metrics, and one
confusion matrix per resample for label metrics (macro/weighted F1, MCC). The formulas
follow scikit-learn's operations step by step (integer counts, one division per value, the same
averaging), so the numbers equal what ``sklearn.metrics`` returns on each resample.
"""

from __future__ import annotations

import hashlib
import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import numpy as np

MAX_CELLS = 1 << 20  # indices held at once (8 MiB of int64; a chunk's temporaries are a few times that)
FEW_CODES = 8  # count_stats counts up to this many codes one by one (the rest: one bincount)
PAIR_CODES = 256  # label_sum_stats counts (gold, pred) pairs up to this many codes, else three sums


_SAME: ContextVar[dict | None] = ContextVar("glotbench_same_items", default=None)


@contextmanager
def same_items() -> Iterator[None]:
    """A block in which the item lists given to fast forms and metric functions do not change (a
    task's metrics over one slice: ``metrics.bootstrap_cis``, ``aggregate._metrics``): what
    :func:`per_list` computes from a list is kept for the block, by the list's identity (the list is
    held meanwhile, so no other list can take its identity). Nested blocks share the outer one."""
    if _SAME.get() is not None:
        yield
        return
    token = _SAME.set({})
    try:
        yield
    finally:
        _SAME.reset(token)


def per_list(items: Any, name: Any, compute: Callable[[Any], Any]) -> Any:
    """``compute(items)``, once per list (or other object that does not change in the block, such as
    a kept counts array) inside a :func:`same_items` block; every call outside one."""
    memo = _SAME.get()
    if memo is None:
        return compute(items)
    key = (id(items), name)
    hit = memo.get(key)
    if hit is None or hit[0] is not items:
        hit = memo[key] = (items, compute(items))
    return hit[1]


def read_only(a: np.ndarray) -> np.ndarray:
    """``a``, no longer writeable: codes shared by the metrics of a :func:`same_items` block."""
    a.flags.writeable = False
    return a


def index_chunks(n: int, n_resamples: int, seed: int, max_cells: int = MAX_CELLS) -> Iterator[np.ndarray]:
    """Resample index rows, ``(rows, n)`` at a time; the same stream as one ``(n_resamples, n)`` draw."""
    rng = np.random.default_rng(seed)
    rows = max(1, max_cells // max(n, 1))
    done = 0
    while done < n_resamples:
        k = min(rows, n_resamples - done)
        yield rng.integers(0, n, size=(k, n))
        done += k


def _collect_list(n: int, n_resamples: int, seed: int, per_chunk: Callable[[np.ndarray], list],
                  max_cells: int, cells_per_row: int = 0) -> list:
    """``per_chunk`` over the index chunks, its lists joined; ``cells_per_row``: what else a chunk
    holds per resample (a row of counts), so that rows * (n + cells_per_row) stays within ``max_cells``."""
    if cells_per_row:
        max_cells = max(1, max_cells // (max(n, 1) + cells_per_row)) * max(n, 1)
    return [part for idx in index_chunks(n, n_resamples, seed, max_cells) for part in per_chunk(idx)]


def _collect(n: int, n_resamples: int, seed: int, per_chunk: Callable[[np.ndarray], np.ndarray],
             max_cells: int, cells_per_row: int = 0) -> np.ndarray:
    """``per_chunk`` over the index chunks, concatenated."""
    parts = _collect_list(n, n_resamples, seed, lambda idx: [per_chunk(idx)], max_cells, cells_per_row)
    return np.concatenate(parts) if parts else np.empty(0)


def resampled_stats(n: int, n_resamples: int, seed: int, per_chunk: Callable[[np.ndarray], np.ndarray],
                    max_cells: int = MAX_CELLS) -> np.ndarray:
    """The one item bootstrap every interval of glotbench draws: ``per_chunk(idx)`` (one statistic per row
    of ``idx``, each row ``n`` item indices drawn with replacement) over ``default_rng(seed).integers(0, n,
    (n_resamples, n))``, drawn a chunk of rows at a time (the same stream: the chunking changes no draw).
    :func:`percentile_interval` of the result is the percentile bootstrap interval."""
    with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        return _collect(n, n_resamples, seed, lambda idx: np.asarray(per_chunk(idx), dtype=float), max_cells)


# Per-resample counts of recent code arrays (bounded in bytes): a judged run's five factuality rates (and their strict
# twins) bootstrap the same grade codes, overall and in every slice, with the same seed, so the
# index draws and bincounts are made once and each rate is computed from the kept counts.
_COUNTS: OrderedDict = OrderedDict()
_COUNTS_BYTES = 32 << 20  # kept at most (least recently used out first); 1000 resamples x 4 codes is 32 KB
_counts_bytes = 0


def _bincount_rows(codes: np.ndarray, idx: np.ndarray, n_codes: int) -> np.ndarray:
    """``counts[r, c]``: how often code c was drawn in row r of ``idx`` (one bincount over all rows)."""
    rows = idx.shape[0]
    flat = codes[idx] + (np.arange(rows, dtype=np.intp) * n_codes)[:, None]
    return np.bincount(flat.ravel(), minlength=rows * n_codes).reshape(rows, n_codes)


def _few_code_counts(small: np.ndarray, idx: np.ndarray, n_codes: int) -> np.ndarray:
    """The same counts for a few codes (``small``: the codes as int8): the drawn codes are gathered
    as bytes and each code counted per row, 2.5x faster than the bincount of 2 M int64 offsets
    (the counts are the same integers)."""
    drawn = small[idx]
    counts = np.empty((idx.shape[0], n_codes), dtype=np.intp)
    for c in range(n_codes - 1):
        counts[:, c] = np.count_nonzero(drawn == c, axis=1)
    counts[:, n_codes - 1] = idx.shape[1] - counts[:, : n_codes - 1].sum(axis=1)
    return counts


def mean_stats(values: np.ndarray, n_resamples: int, seed: int, max_cells: int = MAX_CELLS) -> np.ndarray:
    """Per-resample mean of ``values`` ignoring NaN (``np.nanmean`` of each resample; NaN when empty)."""
    values = np.asarray(values, dtype=float)
    valid = ~np.isnan(values)
    filled = np.where(valid, values, 0.0)
    all_valid = bool(valid.all())

    def per_chunk(idx: np.ndarray) -> np.ndarray:
        tot = filled[idx].sum(axis=1)
        cnt = idx.shape[1] if all_valid else valid[idx].sum(axis=1, dtype=np.intp)
        with np.errstate(divide="ignore", invalid="ignore"):
            return tot / cnt

    return _collect(values.size, n_resamples, seed, per_chunk, max_cells)


def count_stats(codes: np.ndarray, n_codes: int, stat: Callable[[np.ndarray], np.ndarray], n_resamples: int,
                seed: int, max_cells: int = MAX_CELLS) -> np.ndarray:
    """``stat(counts)`` per resample, where ``counts[r, c]`` is how often code c was drawn in resample r.

    ``codes`` holds one small non-negative integer per item (a category, or ``n_codes - 1`` for
    items a metric ignores); ``stat`` maps an ``(rows, n_codes)`` int array to ``(rows, ...)`` values.
    """
    global _counts_bytes
    codes = np.asarray(codes, dtype=np.intp)
    key = (hashlib.blake2b(codes.tobytes(), digest_size=16).digest(), codes.size, n_codes, n_resamples, seed, max_cells)
    chunks = _COUNTS.get(key)
    if chunks is None:
        few = n_codes <= FEW_CODES and (codes.size == 0 or (codes.min() >= 0 and codes.max() < n_codes))
        small = codes.astype(np.int8) if few else None

        def per_chunk(idx: np.ndarray) -> list[np.ndarray]:
            counts = _few_code_counts(small, idx, n_codes) if small is not None else _bincount_rows(codes, idx, n_codes)
            counts.flags.writeable = False  # kept for the next metric: a stat must not change it
            return [counts]

        chunks = _collect_list(codes.size, n_resamples, seed, per_chunk, max_cells, cells_per_row=n_codes)
        size = sum(c.nbytes for c in chunks)
        if size <= _COUNTS_BYTES // 4:  # many labels x many resamples: not kept
            _COUNTS[key] = chunks
            _counts_bytes += size
            while _counts_bytes > _COUNTS_BYTES:
                _, old = _COUNTS.popitem(last=False)
                _counts_bytes -= sum(c.nbytes for c in old)
    else:
        _COUNTS.move_to_end(key)
    parts = [stat(c) for c in chunks]  # per chunk, as before: the same numbers bit for bit
    return np.concatenate(parts) if parts else np.empty(0)


def confusion_stats(gold: np.ndarray, pred: np.ndarray, n_labels: int, stat: Callable[[np.ndarray], np.ndarray],
                    n_resamples: int, seed: int, max_cells: int = MAX_CELLS) -> np.ndarray:
    """``stat(C)`` per resample, ``C[r, g, p]`` the confusion matrix of resample r (gold rows, pred columns)."""
    k = n_labels
    pair = np.asarray(gold, dtype=np.intp) * k + np.asarray(pred, dtype=np.intp)

    def on_counts(counts: np.ndarray) -> np.ndarray:
        return stat(counts.reshape(-1, k, k))

    return count_stats(pair, k * k, on_counts, n_resamples, seed, max_cells)


# ---------------------------------------------------------------- statistics of confusion matrices

def _f1_from_sums(tp: np.ndarray, true: np.ndarray, pred: np.ndarray) -> np.ndarray:
    """F1 per label from its true-positive, gold and predicted counts: scikit-learn's
    ``2tp / (true + pred)``, 0 where both are 0."""
    denom = (true + pred).astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denom > 0, 2.0 * tp.astype(float) / denom, 0.0)


def _per_label_f1(c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """F1 per label and true counts of confusion matrices."""
    true = c.sum(axis=2)
    return _f1_from_sums(np.diagonal(c, axis1=1, axis2=2), true, c.sum(axis=1)), true


def _row_means(f: np.ndarray, present: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """Mean of ``f`` over each row's ``present`` labels (label order kept); NaN where none is present.

    Each row is averaged on its own, as a 1-D array of the present labels' values: numpy sums a
    1-D array in a different order than a row of a 2-D array, and scikit-learn averages 1-D arrays,
    so this keeps every value equal to scikit-learn's to the last bit (a few ms per 1,000 resamples).
    """
    out = np.full(f.shape[0], np.nan)
    for r in range(f.shape[0]):
        mask = present[r]
        if not mask.any():
            continue
        if weights is not None:
            out[r] = np.average(f[r][mask], weights=weights[r][mask])
        else:
            out[r] = f[r][mask].mean()
    return out


def _average_over_gold_labels(f: np.ndarray, true: np.ndarray, weighted: bool) -> np.ndarray:
    """Mean of ``f`` over the labels present in each resample's gold (``labels=sorted(set(gold))``)."""
    return _row_means(f, true > 0, true if weighted else None)


def macro_f1_from_confusion(c: np.ndarray) -> np.ndarray:
    f, true = _per_label_f1(c)
    return _average_over_gold_labels(f, true, weighted=False)


def weighted_f1_from_confusion(c: np.ndarray) -> np.ndarray:
    f, true = _per_label_f1(c)
    return _average_over_gold_labels(f, true, weighted=True)


def mcc_from_confusion(c: np.ndarray) -> np.ndarray:
    """Matthews correlation as ``sklearn.metrics.matthews_corrcoef`` computes it (0 when undefined)."""
    cf = c.astype(np.float64)
    t_sum = cf.sum(axis=2)
    p_sum = cf.sum(axis=1)
    n_correct = np.trace(cf, axis1=1, axis2=2)
    n_samples = p_sum.sum(axis=1)
    cov_ytyp = n_correct * n_samples - (t_sum * p_sum).sum(axis=1)
    cov_ypyp = n_samples**2 - (p_sum * p_sum).sum(axis=1)
    cov_ytyt = n_samples**2 - (t_sum * t_sum).sum(axis=1)
    prod = cov_ypyp * cov_ytyt
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(prod == 0, 0.0, cov_ytyp / np.sqrt(prod))


def label_sum_stats(gold: np.ndarray, pred: np.ndarray, n_labels: int,
                    stat: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray], n_resamples: int, seed: int,
                    keep: np.ndarray | None = None, max_cells: int = MAX_CELLS) -> np.ndarray:
    """``stat(tp, true, pred)`` per resample: per-label true-positive, gold and predicted counts,
    each ``(rows, n_labels)``, over the resample's kept items (``keep`` False: the item is left out).

    With few labels (``n_labels ** 2 + 1 <= PAIR_CODES``) the sums are read off one bincount of
    (gold, pred) pairs; with more, three bincounts (tp, gold, pred) keep memory O(rows * n_labels)
    however many labels there are (an open-ended answer such as a number can bring hundreds).
    """
    k = n_labels
    gold = np.asarray(gold, dtype=np.intp)
    pred = np.asarray(pred, dtype=np.intp)
    keep = np.ones(gold.size, bool) if keep is None else np.asarray(keep, bool)
    g = np.where(keep, gold, k)  # code k: left out
    p = np.where(keep, pred, k)
    t = np.where(keep & (gold == pred), gold, k)

    def counts(codes: np.ndarray, n_codes: int, idx: np.ndarray) -> np.ndarray:
        rows = idx.shape[0]
        flat = codes[idx]
        flat += (np.arange(rows, dtype=np.intp) * n_codes)[:, None]
        return np.bincount(flat.ravel(), minlength=rows * n_codes).reshape(rows, n_codes)

    if k * k + 1 <= PAIR_CODES:  # few labels: one bincount of (gold, pred) pairs, the sums read off it
        pair = np.where(keep, gold * k + pred, k * k)

        def per_chunk(idx: np.ndarray) -> np.ndarray:
            c = counts(pair, k * k + 1, idx)[:, : k * k].reshape(-1, k, k)
            return stat(np.diagonal(c, axis1=1, axis2=2), c.sum(axis=2), c.sum(axis=1))
    else:
        def per_chunk(idx: np.ndarray) -> np.ndarray:
            return stat(*(counts(x, k + 1, idx)[:, :k] for x in (t, g, p)))

    per_row = k * k + 1 if k * k + 1 <= PAIR_CODES else 3 * (k + 1)
    return _collect(gold.size, n_resamples, seed, per_chunk, max_cells, cells_per_row=per_row)


def macro_f1_from_sums(over: str) -> Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]:
    """Macro-F1 from per-label sums, averaged over the labels in each resample's gold (``"gold"``:
    glotbench's macro_f1) or in its gold or predictions (``"seen"``: scikit-learn with no ``labels=``)."""
    if over not in ("gold", "seen"):
        raise ValueError(f"over must be 'gold' or 'seen', not {over!r}")

    def stat(tp: np.ndarray, true: np.ndarray, pred: np.ndarray) -> np.ndarray:
        present = true > 0 if over == "gold" else (true + pred) > 0
        return _row_means(_f1_from_sums(tp, true, pred), present)

    return stat


def group_mean_of_means_stats(groups: np.ndarray, hits: np.ndarray, n_groups: int, n_resamples: int, seed: int,
                              max_cells: int = MAX_CELLS) -> np.ndarray:
    """Per resample: the mean, over the groups drawn, of each group's share of hits, as
    ``np.mean([np.mean(v) for v in by_group.values()])`` computes it with ``by_group`` filled in
    the order items are drawn (the groups' order of first appearance fixes the float sum).

    ``groups`` holds a code per item in ``0 .. n_groups - 1`` or ``n_groups`` (left out); ``hits`` is 0 or 1.
    NaN where a resample draws no kept item.
    """
    groups = np.asarray(groups, dtype=np.intp)
    g2 = 2 * n_groups  # one code per item: 2 * group + hit, or 2 * n_groups when left out
    codes = np.where(groups < n_groups, 2 * groups + (np.asarray(hits) == 1), g2)

    def per_chunk(idx: np.ndarray) -> np.ndarray:
        rows, n = idx.shape
        flat = codes[idx]
        flat += (np.arange(rows, dtype=np.intp) * (g2 + 1))[:, None]
        flat = flat.ravel()
        counts = np.bincount(flat, minlength=rows * (g2 + 1)).reshape(rows, g2 + 1)[:, :g2]
        won = counts[:, 1::2]
        size = counts[:, 0::2] + won
        first = np.full(rows * (g2 + 1), n, dtype=np.intp)
        np.minimum.at(first, flat, np.tile(np.arange(n, dtype=np.intp), rows))
        first = first.reshape(rows, g2 + 1)[:, :g2]
        first = np.minimum(first[:, 0::2], first[:, 1::2])  # a group's first item, hit or not
        with np.errstate(divide="ignore", invalid="ignore"):
            share = won / size
        out = np.full(rows, np.nan)
        for r in range(rows):
            seen = np.flatnonzero(size[r])
            if seen.size:
                out[r] = np.mean(share[r][seen[np.argsort(first[r][seen], kind="stable")]])
        return out

    return _collect(groups.size, n_resamples, seed, per_chunk, max_cells, cells_per_row=2 * (g2 + 1))


def ratio_stats(num: np.ndarray, den: np.ndarray, n_resamples: int, seed: int,
                max_cells: int = MAX_CELLS) -> np.ndarray:
    """Per-resample ``sum(num) / sum(den)`` (NaN where the denominator sums to 0)."""
    num = np.asarray(num, dtype=float)
    den = np.asarray(den, dtype=float)

    def per_chunk(idx: np.ndarray) -> np.ndarray:
        d = den[idx].sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(d != 0, num[idx].sum(axis=1) / d, np.nan)

    return _collect(num.size, n_resamples, seed, per_chunk, max_cells)


def percentile_intervals(stats: list[np.ndarray | None], alpha: float = 0.05) -> list[tuple[float, float]]:
    """:func:`percentile_interval` of each array (None: no interval, NaN, NaN), with one quantile call
    for all the arrays of one length without NaN: numpy computes each row of a 2-D quantile as the
    1-D call does, so the numbers are the same (tests/test_resample.py); a task's ten factuality
    metrics in one slice were ten calls of 0.12 ms each."""
    out: list[tuple[float, float] | None] = [None] * len(stats)
    arrays: dict[int, np.ndarray] = {}
    rows: dict[int, list[int]] = {}
    for k, s in enumerate(stats):
        if s is None:
            out[k] = (float("nan"), float("nan"))
            continue
        a = np.asarray(s, dtype=float)
        if a.ndim == 1 and a.size and not np.isnan(a).any():
            arrays[k] = a
            rows.setdefault(a.size, []).append(k)
        else:
            out[k] = percentile_interval(a, alpha)
    for ks in rows.values():
        if len(ks) == 1:
            out[ks[0]] = percentile_interval(arrays[ks[0]], alpha)
            continue
        q = np.quantile(np.stack([arrays[k] for k in ks]), [alpha / 2, 1 - alpha / 2], axis=1)
        for j, k in enumerate(ks):
            out[k] = (float(q[0, j]), float(q[1, j]))
    return out  # type: ignore[return-value]


def percentile_interval(stats: np.ndarray, alpha: float = 0.05) -> tuple[float, float]:
    """The ``alpha/2`` and ``1 - alpha/2`` quantiles of the non-NaN statistics (NaN, NaN if none)."""
    stats = np.asarray(stats, dtype=float)
    stats = stats[~np.isnan(stats)]
    if stats.size == 0:
        return (float("nan"), float("nan"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        lo, hi = np.quantile(stats, [alpha / 2, 1 - alpha / 2])  # one sort; each value as a lone call gives it
        return (float(lo), float(hi))
