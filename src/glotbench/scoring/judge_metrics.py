"""Metrics fed by a judge declared in YAML (glotbench.judges.declared writes the per-item values):
the mean score of the judged answers and the share of replies the declaration could not read.
The share of each grade is ``mean:judge_share_<GRADE>``. An unreadable reply the declaration
excludes has no score and no grade (out of those denominators) and counts in the unreadable rate.
"""

from __future__ import annotations

from glotbench.scoring.metrics import mean_of, register_metric

JUDGE_METRICS = (
    mean_of("judge_score", "judge_score", format=".3f",
            description="mean of the judge's score per answer (a grade's declared score, or the number it gave)"),
    mean_of("judge_unreadable", "judge_unreadable_rate", direction="lower", role="diagnostic",
            description="share of answers whose judge reply the declaration could not read"),
)

for _m in JUDGE_METRICS:
    register_metric(_m)
