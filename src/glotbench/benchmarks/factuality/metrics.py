"""Short-answer factuality metrics (SimpleQA, Chinese SimpleQA, HuSimpleQA): CO / NA / IN / CGA / F
from the judge grades (the kind ``grade_rate``: :mod:`glotbench.scoring.grade_metrics`)."""

from __future__ import annotations

from types import SimpleNamespace

from glotbench.scoring.grades import DIRECTION as _DIRECTION
from glotbench.scoring.metrics import Metric

# NA and IN are the breakdown of the answers that are not correct: secondary, never a headline
ROLE = {"CO": "headline", "NA": "secondary", "IN": "secondary", "CGA": "headline", "F": "headline"}
# the metrics as attributes: the package registers them lazily by reference (``...metrics:FA.factuality_co``),
# so listing or reading runs imports this module only when one is looked up
FA = SimpleNamespace(**{
    f"factuality_{_k.lower()}": Metric(f"factuality_{_k.lower()}", kind="grade_rate", params={"rate": _k},
                                       direction=_dir, role=ROLE[_k], description=f"SimpleQA {_k} from the judge grades")
    for _k, _dir in _DIRECTION.items()})
