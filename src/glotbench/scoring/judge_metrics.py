"""Metrics fed by a judge declared in YAML (glotbench.tasks.judging.declared writes the per-item values):
the mean score of the judged answers and the share of replies the declaration could not read.
The share of each grade is ``mean:judge_share_<GRADE>``. An unreadable reply the declaration
excludes has no score and no grade (out of those denominators) and counts in the unreadable rate.

A declaration whose grades map to correct / incorrect / not attempted (``three_way``, or grades named
CORRECT / INCORRECT / NOT_ATTEMPTED) also feeds ``judge_co``, ``judge_na``, ``judge_in``, ``judge_cga``
and ``judge_f``: the SimpleQA family's CO / NA / IN / CGA / F (scoring.grades) from the per-item
one-hot values ``judge_correct`` / ``judge_incorrect`` / ``judge_not_attempted``.
"""

from __future__ import annotations

import glotbench.scoring.grade_metrics  # noqa: F401  (the grade_rate kind)
from glotbench.scoring.grades import DIRECTION
from glotbench.scoring.metrics import Metric, mean_of, register_metric

_ROLE = {"CO": "headline", "NA": "secondary", "IN": "secondary", "CGA": "headline", "F": "headline"}
THREE_WAY_METRICS = tuple(f"judge_{k.lower()}" for k in DIRECTION)

JUDGE_METRICS = (
    mean_of("judge_score", "judge_score", format=".3f",
            description="mean of the judge's score per answer (a grade's declared score, or the number it gave)"),
    mean_of("judge_unreadable", "judge_unreadable_rate", direction="lower", role="diagnostic",
            description="share of answers whose judge reply the declaration could not read"),
    *(Metric(f"judge_{k.lower()}", kind="grade_rate", params={"rate": k, "prefix": "judge_"}, direction=d, role=_ROLE[k],
             description=f"SimpleQA {k} from a YAML judge's grades mapped to correct / incorrect / not attempted")
      for k, d in DIRECTION.items()),
)

for _m in JUDGE_METRICS:
    register_metric(_m)
