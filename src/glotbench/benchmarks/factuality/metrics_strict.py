"""CO / NA / IN / CGA / F under glotbench's strict judge-reply parse, beside the headline numbers
(which follow the benchmark's own rule; :mod:`glotbench.judges.reference_parse`).

Each scored item carries ``strict_correct`` / ``strict_incorrect`` / ``strict_not_attempted``
(1.0/0.0, or None for a reply the strict parse could not read: a judge error, out of every
denominator). Registered as ``factuality_co_strict`` and friends.
"""

from __future__ import annotations

import numpy as np

from glotbench.benchmarks.factuality.metrics import memo, rate_of_counts, scores_from_counts
from glotbench.scoring.metrics import Metric, ScoredItem, register_metric
from glotbench.scoring.resample import count_stats, per_list, read_only

_KEYS = ("CO", "NA", "IN", "CGA", "F")
NAMES = tuple(f"factuality_{k.lower()}_strict" for k in _KEYS)


def _counts(items: list[ScoredItem]) -> tuple[float, float, float]:
    c = i = n = 0.0
    for it in items:
        v = it.values
        if v.get("strict_correct") is None:
            continue
        c += v["strict_correct"]
        i += v.get("strict_incorrect") or 0.0
        n += v.get("strict_not_attempted") or 0.0
    return c, i, n


def factuality_strict_metric(items: list[ScoredItem], key: str) -> float:
    """CO / NA / IN / CGA / F over the items the strict parse could read."""
    return per_list(items, "strict factuality scores", lambda its: scores_from_counts(*_counts(its)))[key]


def _strict_code(item: ScoredItem) -> int | None:
    """The strict one-hot values as a grade code (3: left out); None when they are not one-hot 0/1."""
    v = item.values
    if v.get("strict_correct") is None:
        return 3
    trio = (v["strict_correct"], v.get("strict_incorrect") or 0.0, v.get("strict_not_attempted") or 0.0)
    if any(x not in (0, 1) for x in trio) or sum(trio) > 1:
        return None
    return trio.index(1) if 1 in trio else 3


def _strict_codes(items: list[ScoredItem]) -> np.ndarray | None:
    codes = np.empty(len(items), dtype=np.intp)
    for k, it in enumerate(items):
        code = memo(it, "strict", _strict_code)
        if code is None:
            return None
        codes[k] = code
    return read_only(codes)


def factuality_strict_fast(items: list[ScoredItem], n_resamples: int, seed: int, key: str) -> np.ndarray | None:
    """:func:`factuality_strict_metric` on every resample (per-resample grade counts); declines
    values that are not one-hot 0/1."""
    codes = per_list(items, "strict codes", _strict_codes)
    return None if codes is None else count_stats(codes, 4, rate_of_counts(key), n_resamples, seed)


_DIRECTION = {"CO": "higher", "NA": "lower", "IN": "lower", "CGA": "higher", "F": "higher"}
for _k in _KEYS:
    register_metric(Metric(f"factuality_{_k.lower()}_strict", fn=factuality_strict_metric, params={"key": _k},
                           fast=factuality_strict_fast, direction=_DIRECTION[_k], role="secondary",
                           measure=f"factuality_{_k.lower()}",
                           description=f"SimpleQA {_k} under glotbench's strict judge-reply parse"))
