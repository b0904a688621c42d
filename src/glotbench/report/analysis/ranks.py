"""How a leaderboard's order changes between two benchmarks (e.g. SimpleQA vs HuSimpleQA).

OpenHuEval (Tables 7, 9, 10, 11) lists both rankings side by side and marks each model in the
second ranking with its movement relative to the first: in Table 7 Deepseek-R1 is 4th on
WildBench and 1st on HuWildBench, shown as "Deepseek-R1(↑3)"; a model ranked lower on the second
benchmark gets "↓k" and an unchanged one "-". It then reports the share of models whose rank
changed ("70% LLMs experienced ranking changes"). Chinese SimpleQA (Figure 8) shows the same
movement as signed numbers: "+10" for Doubao-pro-32k moving from 12th to 2nd, "-6" for GPT-4
dropping from 3rd to 9th. Both styles are available via ``style``.

Ranks are competition ranks (1 = best; tied scores share the lowest rank, next rank skipped),
computed over the models the two score sets have in common; the others are listed, not ranked.
Kendall's tau-b (SciPy) between the two score vectors measures agreement of the two orders.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import numpy as np
from scipy.stats import kendalltau, rankdata

from glotbench.errors import DataError

Style = Literal["arrow", "signed"]


def rank_scores(scores: Mapping[str, float], higher_is_better: bool = True) -> dict[str, int]:
    """Competition ranks ("1224"): 1 is the best score, ties share a rank."""
    models = list(scores)
    vals = np.array([float(scores[m]) for m in models], dtype=float)
    if np.isnan(vals).any():
        bad = [m for m, v in zip(models, vals) if math.isnan(v)]
        raise DataError(f"rank_scores: missing (NaN) score for model(s) {', '.join(bad)}")
    key = -vals if higher_is_better else vals
    ranks = rankdata(key, method="min")
    return {m: int(r) for m, r in zip(models, ranks)}


def format_movement(delta: int, style: Style = "arrow") -> str:
    """``delta`` = rank_a - rank_b (positive: moved up). arrow: "↑2"/"↓1"/"-"; signed: "+2"/"-1"/"0"."""
    if style == "arrow":
        return "-" if delta == 0 else (f"↑{delta}" if delta > 0 else f"↓{-delta}")
    if style == "signed":
        return "0" if delta == 0 else f"{delta:+d}"
    raise ValueError(f"unknown movement style {style!r}; use 'arrow' or 'signed'")


@dataclass(frozen=True)
class RankRow:
    model: str
    score_a: float
    score_b: float
    rank_a: int
    rank_b: int
    delta: int  # rank_a - rank_b: positive = better rank under B
    movement: str  # "↑2", "↓1", "-" (or "+2", "-1", "0")


@dataclass
class RankComparison:
    rows: list[RankRow]  # ordered by rank under B, then by rank under A, then by name
    tau: float  # Kendall's tau-b between the score vectors (NaN if fewer than 2 models)
    p_value: float
    share_changed: float  # fraction of common models whose rank differs
    only_in_a: list[str] = field(default_factory=list)
    only_in_b: list[str] = field(default_factory=list)
    # models with no score (None / NaN: an invalid or failed score) on a side: left out, never ranked as a number
    invalid: list[str] = field(default_factory=list)

    def side_by_side(self) -> list[tuple[int, str, str]]:
        """OpenHuEval layout: (rank, model at that rank under A, model under B with movement).

        With ties the two columns can hold different numbers of models per rank, so this
        layout pairs the i-th model of each ordering; use ``rows`` for the exact ranks.
        """
        by_a = sorted(self.rows, key=lambda r: (r.rank_a, r.model))
        by_b = self.rows
        return [(i + 1, a.model, f"{b.model}({b.movement})") for i, (a, b) in enumerate(zip(by_a, by_b))]

    def to_dict(self) -> dict:
        return {
            "rows": [asdict(r) for r in self.rows],
            "tau": self.tau,
            "p_value": self.p_value,
            "share_changed": self.share_changed,
            "only_in_a": self.only_in_a,
            "only_in_b": self.only_in_b,
            "invalid": self.invalid,
        }


def kendall_tau(scores_a: Mapping[str, float], scores_b: Mapping[str, float]) -> tuple[float, float]:
    """Kendall's tau-b and its two-sided p-value over the models both mappings hold."""
    common = [m for m in scores_a if m in scores_b]
    if len(common) < 2:
        return float("nan"), float("nan")
    res = kendalltau([float(scores_a[m]) for m in common], [float(scores_b[m]) for m in common])
    return float(res.statistic), float(res.pvalue)


def rank_movement(
    scores_a: Mapping[str, float],
    scores_b: Mapping[str, float],
    higher_is_better: bool = True,
    style: Style = "arrow",
) -> RankComparison:
    """Rank every common model under A (the reference, e.g. SimpleQA) and B (e.g. HuSimpleQA).

    The movement string follows OpenHuEval Table 7/9: "↑3" = three places higher under B
    than under A. ``style="signed"`` gives the Chinese SimpleQA Figure 8 form ("+10", "-6").
    A model whose score is None or NaN on either side (an invalid score) is left out of the ranks and
    tau and listed under ``invalid``.
    """
    def no_score(x: Any) -> bool:
        return x is None or (isinstance(x, float) and math.isnan(x))

    invalid = [m for m in dict.fromkeys([*scores_a, *scores_b])
               if no_score(scores_a.get(m, 0.0)) or no_score(scores_b.get(m, 0.0))]
    scores_a = {m: v for m, v in scores_a.items() if m not in invalid}
    scores_b = {m: v for m, v in scores_b.items() if m not in invalid}
    common = [m for m in scores_a if m in scores_b]
    only_a = [m for m in scores_a if m not in scores_b]
    only_b = [m for m in scores_b if m not in scores_a]
    ra = rank_scores({m: scores_a[m] for m in common}, higher_is_better)
    rb = rank_scores({m: scores_b[m] for m in common}, higher_is_better)
    rows = [
        RankRow(
            model=m,
            score_a=float(scores_a[m]),
            score_b=float(scores_b[m]),
            rank_a=ra[m],
            rank_b=rb[m],
            delta=ra[m] - rb[m],
            movement=format_movement(ra[m] - rb[m], style),
        )
        for m in common
    ]
    rows.sort(key=lambda r: (r.rank_b, r.rank_a, r.model))
    tau, p = kendall_tau({m: scores_a[m] for m in common}, {m: scores_b[m] for m in common})
    share = sum(r.delta != 0 for r in rows) / len(rows) if rows else float("nan")
    return RankComparison(rows=rows, tau=tau, p_value=p, share_changed=share, only_in_a=only_a, only_in_b=only_b,
                          invalid=invalid)
