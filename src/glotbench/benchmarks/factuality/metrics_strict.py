"""CO / NA / IN / CGA / F under glotbench's strict judge-reply parse, beside the headline numbers
(which follow the benchmark's own rule; :mod:`glotbench.tasks.judging.reference_parse`).

Each scored item carries ``strict_correct`` / ``strict_incorrect`` / ``strict_not_attempted``
(1.0/0.0, or None for a reply the strict parse could not read: a judge error, out of every
denominator). Registered as ``factuality_co_strict`` and friends.
"""

from __future__ import annotations

from types import SimpleNamespace

from glotbench.scoring.metrics import Metric

_KEYS = ("CO", "NA", "IN", "CGA", "F")
NAMES = tuple(f"factuality_{k.lower()}_strict" for k in _KEYS)


_DIRECTION = {"CO": "higher", "NA": "lower", "IN": "lower", "CGA": "higher", "F": "higher"}
# registered lazily by reference (``...metrics_strict:FS.factuality_co_strict``), as in .metrics
FS = SimpleNamespace(**{
    f"factuality_{_k.lower()}_strict": Metric(f"factuality_{_k.lower()}_strict", kind="grade_rate",
                                              params={"rate": _k, "prefix": "strict_"},
                                              direction=_DIRECTION[_k], role="secondary",
                                              measure=f"factuality_{_k.lower()}",
                                              description=f"SimpleQA {_k} under glotbench's strict judge-reply parse")
    for _k in _KEYS})
