"""Short-answer factuality metrics (SimpleQA, Chinese SimpleQA, HuSimpleQA): CO / NA / IN / CGA / F
from the judge grades (the grades and their rates: :mod:`glotbench.scoring.grades`)."""

from __future__ import annotations

from types import SimpleNamespace

from glotbench.scoring.grade_metrics import factuality_fast, factuality_metric  # noqa: F401
from glotbench.scoring.grades import *  # noqa: F401,F403  (the grades, kept importable from here)
from glotbench.scoring.grades import DIRECTION as _DIRECTION
from glotbench.scoring.metrics import Metric

# NA and IN are the breakdown of the answers that are not correct: secondary, never a headline
ROLE = {"CO": "headline", "NA": "secondary", "IN": "secondary", "CGA": "headline", "F": "headline"}
# the metrics as attributes: the package registers them lazily by reference (``...metrics:FA.factuality_co``),
# so listing or reading runs imports this module only when one is looked up
FA = SimpleNamespace(**{
    f"factuality_{_k.lower()}": Metric(f"factuality_{_k.lower()}", fn=factuality_metric, params={"key": _k},
                                       fast=factuality_fast, direction=_dir, role=ROLE[_k],
                                       description=f"SimpleQA {_k} from the judge grades")
    for _k, _dir in _DIRECTION.items()})
