"""CO / NA / IN / CGA / F under glotbench's strict judge-reply parse, beside the headline numbers
(which follow the benchmark's own rule; :mod:`glotbench.judges.reference_parse`).

Each scored item carries ``strict_correct`` / ``strict_incorrect`` / ``strict_not_attempted``
(1.0/0.0, or None for a reply the strict parse could not read: a judge error, out of every
denominator). Registered as ``factuality_co_strict`` and friends.
"""

from __future__ import annotations

from glotbench.benchmarks.factuality.metrics import scores_from_counts
from glotbench.scoring.metrics import Metric, ScoredItem, register_metric
from glotbench.scoring.resample_forms import per_list, register_corpus_form, strict_factuality_form

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


_DIRECTION = {"CO": "higher", "NA": "lower", "IN": "lower", "CGA": "higher", "F": "higher"}
for _k in _KEYS:
    register_metric(Metric(f"factuality_{_k.lower()}_strict", fn=factuality_strict_metric, params={"key": _k},
                           direction=_DIRECTION[_k], role="secondary", measure=f"factuality_{_k.lower()}",
                           description=f"SimpleQA {_k} under glotbench's strict judge-reply parse"))

register_corpus_form(f"{__name__}:factuality_strict_metric", lambda key: strict_factuality_form(key))
