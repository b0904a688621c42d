"""How much signal a task carries across many runs (HF FineTasks' criteria): checkpoints of one
model, several models, seeds.

Each run is a :class:`RunPoint` (model, step, seed, score, its score on two halves of the items);
:func:`task_signal` computes monotonicity, noise, distance from random and rank consistency and the
verdict (:data:`THRESHOLDS`), as the table in docs/trust-a-number.md defines them.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import numpy as np
from scipy.stats import kendalltau, spearmanr

THRESHOLDS = {"monotonicity": 0.5, "distance_from_random": 3.0, "rank_consistency": 0.5}


@dataclass(frozen=True)
class RunPoint:
    model: str
    step: float | None
    seed: str | None
    score: float | None  # None: an invalid score (left out, counted)
    halves: tuple[float, float] | None = None


@dataclass
class TaskSignal:
    task: str
    metric: str
    n_runs: int
    n_invalid: int
    chance: float | None
    final_score: float | None
    monotonicity: float | None
    noise: float | None
    distance_from_random: float | None
    rank_consistency: float | None
    verdict: str = ""
    failed: list[str] = field(default_factory=list)
    unchecked: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


def _nan_to_none(x: float) -> float | None:
    return None if x is None or math.isnan(x) else float(x)


def _groups(points: list[RunPoint]) -> dict[tuple[str, float | None], list[RunPoint]]:
    out: dict[tuple[str, float | None], list[RunPoint]] = {}
    for p in points:
        out.setdefault((p.model, p.step), []).append(p)
    return out


def monotonicity(points: list[RunPoint], higher_is_better: bool = True) -> float | None:
    rhos = []
    models = sorted({p.model for p in points})
    for m in models:
        by_step = {step: [p.score for p in ps] for (mm, step), ps in _groups(points).items() if mm == m and step is not None}
        if len(by_step) < 3:
            continue
        steps = sorted(by_step)
        means = [float(np.mean(by_step[s])) for s in steps]
        rho = spearmanr(steps, means).statistic
        if not math.isnan(rho):
            rhos.append(rho if higher_is_better else -rho)
    return float(np.mean(rhos)) if rhos else None


def noise(points: list[RunPoint]) -> float | None:
    stds = [float(np.std([p.score for p in ps], ddof=1)) for ps in _groups(points).values() if len(ps) >= 2]
    return float(np.mean(stds)) if stds else None


def final_score(points: list[RunPoint], higher_is_better: bool = True) -> float | None:
    finals = []
    for m in sorted({p.model for p in points}):
        mine = [p for p in points if p.model == m]
        steps = [p.step for p in mine if p.step is not None]
        last = max(steps) if steps else None
        finals.append(float(np.mean([p.score for p in mine if p.step == last])))
    if not finals:
        return None
    return max(finals) if higher_is_better else min(finals)


def rank_consistency(points: list[RunPoint]) -> float | None:
    entries = [ps for ps in _groups(points).values() if all(p.halves is not None for p in ps)]
    if len(entries) < 3:
        return None
    first = [float(np.mean([p.halves[0] for p in ps])) for ps in entries]
    second = [float(np.mean([p.halves[1] for p in ps])) for ps in entries]
    return _nan_to_none(kendalltau(first, second).statistic)


def task_signal(task: str, metric: str, points: list[RunPoint], chance: float | None,
                higher_is_better: bool = True) -> TaskSignal:
    valid = [p for p in points if p.score is not None and not math.isnan(p.score)]
    rho = monotonicity(valid, higher_is_better)
    sd = noise(valid)
    final = final_score(valid, higher_is_better)
    distance = None
    if final is not None and chance is not None and sd is not None and sd > 0:
        distance = (final - chance) / sd if higher_is_better else (chance - final) / sd
    tau = rank_consistency(valid)
    sig = TaskSignal(task, metric, len(points), len(points) - len(valid), chance, final, rho, sd, distance, tau)
    for name, value in (("monotonicity", rho), ("distance_from_random", distance), ("rank_consistency", tau)):
        limit = THRESHOLDS[name]
        if value is None:
            sig.unchecked.append(name)
        elif (value <= limit) if name == "distance_from_random" else (value < limit):
            sig.failed.append(name)
    if len(sig.unchecked) == len(THRESHOLDS):
        sig.verdict = "unchecked (too few runs)"
    elif sig.failed:
        sig.verdict = "weak signal: " + ", ".join(sig.failed)
    else:
        sig.verdict = "good signal"
    if sig.unchecked and len(sig.unchecked) < len(THRESHOLDS):
        sig.verdict += " (unchecked: " + ", ".join(sig.unchecked) + ")"
    return sig
