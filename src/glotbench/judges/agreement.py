"""Judge robustness (Chinese SimpleQA appendix B): do different judges rank models the same way,
and do they give the same grade to the same answer?

Input ``table``: ``{judge: {model: grades}}`` where ``grades`` is either a list (aligned by item
position across judges) or a dict ``{item_id: grade}`` (aligned by id; only ids every judge
graded for that model are compared). Output is plain dicts, ready for ``results.json``:

* ``scores[judge][model]``: :func:`factuality_scores` (no intervals);
* ``rankings[judge]``: models, best first, by ``metric`` (F by default); ``ranks[judge][model]``
  their competition ranks (tied scores share a rank: 1, 1, 3);
* ``kendall_tau``: per judge pair, Kendall's tau-b between the judges' model scores;
* ``cohen_kappa``: per judge pair, Cohen's kappa on the item grades pooled over models, plus
  per model; pairs where either judge gave JUDGE_ERROR are left out and counted.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any

from rich.console import Group
from rich.markup import escape
from rich.table import Table
from scipy.stats import kendalltau
from sklearn.metrics import cohen_kappa_score

from glotbench.errors import DataError
from glotbench.scoring.grades import (
    DIRECTION,
    GRADEABLE,
    JUDGE_ERROR,
    factuality_scores,
    to_grade,
)

Grades = Sequence[Any] | Mapping[str, Any]


def _aligned(table: Mapping[str, Mapping[str, Grades]], model: str) -> dict[str, list[Any]]:
    per_judge = {j: table[j][model] for j in table}
    if all(isinstance(g, Mapping) for g in per_judge.values()):
        ids = set.intersection(*(set(g) for g in per_judge.values()))
        order = sorted(ids, key=str)
        return {j: [g[i] for i in order] for j, g in per_judge.items()}
    if any(isinstance(g, Mapping) for g in per_judge.values()):
        raise DataError(f"compare_judges: model {model!r} mixes item-id dicts and lists across judges")
    lengths = {j: len(g) for j, g in per_judge.items()}
    if len(set(lengths.values())) > 1:
        raise DataError(f"compare_judges: model {model!r} has different item counts per judge {lengths}")
    return {j: list(g) for j, g in per_judge.items()}


def _nan_to_none(x: float) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def _kappa(a: list[Any], b: list[Any]) -> dict[str, Any]:
    ga = [to_grade(x) for x in a]
    gb = [to_grade(x) for x in b]
    keep = [(x.value, y.value) for x, y in zip(ga, gb) if x is not JUDGE_ERROR and y is not JUDGE_ERROR]
    out: dict[str, Any] = {"n_items": len(keep), "n_excluded": len(ga) - len(keep)}
    if not keep:
        return {**out, "kappa": None, "agreement": None}
    xa, xb = zip(*keep)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        k = cohen_kappa_score(xa, xb, labels=[g.value for g in GRADEABLE])
    return {**out, "kappa": _nan_to_none(float(k)), "agreement": sum(x == y for x, y in keep) / len(keep)}


def confusion(a: list[Any], b: list[Any]) -> dict[str, dict[str, int]]:
    """``{grade by judge A: {grade by judge B: count}}`` over every aligned item, judge errors included."""
    labels = [g.value for g in (*GRADEABLE, JUDGE_ERROR)]
    out = {x: {y: 0 for y in labels} for x in labels}
    for x, y in zip(a, b):
        out[to_grade(x).value][to_grade(y).value] += 1
    return out


def compare_judges(table: Mapping[str, Mapping[str, Grades]], metric: str = "F") -> dict[str, Any]:
    judges = list(table)
    if len(judges) < 2:
        raise DataError(f"compare_judges: need at least two judges, got {judges}")
    models = sorted(set.intersection(*(set(table[j]) for j in judges)))
    if not models:
        raise DataError("compare_judges: the judges share no model")
    aligned = {m: _aligned(table, m) for m in models}
    scores = {j: {m: factuality_scores(aligned[m][j], ci=False) for m in models} for j in judges}
    if metric not in scores[judges[0]][models[0]]:
        raise DataError(f"compare_judges: unknown metric {metric!r}; use CO, NA, IN, CGA or F")

    # best first, in the direction the metric declares (IN and NA: lower is better)
    sign = 1.0 if DIRECTION[metric.upper()] == "higher" else -1.0

    def key(j: str, m: str) -> float:
        v = scores[j][m][metric]
        return -math.inf if math.isnan(v) else sign * v

    rankings = {j: sorted(models, key=lambda m: (-key(j, m), m)) for j in judges}
    # competition ranks ("1224"): models with the same score share a rank, the next rank skips
    ranks = {j: {m: 1 + sum(1 for o in models if key(j, o) > key(j, m)) for m in models} for j in judges}
    taus, kappas = [], []
    for a, b in combinations(judges, 2):
        xa = [scores[a][m][metric] for m in models]
        xb = [scores[b][m][metric] for m in models]
        if len(models) >= 2:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = kendalltau(xa, xb)
            tau, p = _nan_to_none(float(res.statistic)), _nan_to_none(float(res.pvalue))
        else:
            tau = p = None
        taus.append({"judge_a": a, "judge_b": b, "tau": tau, "p_value": p, "n_models": len(models)})
        pooled_a = [g for m in models for g in aligned[m][a]]
        pooled_b = [g for m in models for g in aligned[m][b]]
        kappas.append(
            {
                "judge_a": a,
                "judge_b": b,
                **_kappa(pooled_a, pooled_b),
                "confusion": confusion(pooled_a, pooled_b),
                "per_model": {m: _kappa(aligned[m][a], aligned[m][b]) for m in models},
            }
        )
    return {"metric": metric, "judges": judges, "models": models, "scores": scores,
            "rankings": rankings, "ranks": ranks, "kendall_tau": taus, "cohen_kappa": kappas}


def _fmt(x: float | None, pct: bool = False) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    return f"{100 * x:.1f}" if pct else f"{x:.3f}"


def render_agreement_table(result: Mapping[str, Any]) -> Group:
    """Rich renderables for :func:`compare_judges` output: scores per model under each judge
    (with the model's rank), then the pairwise tau / kappa table. ``console.print(...)`` it."""
    metric, judges, models = result["metric"], result["judges"], result["models"]
    scores = Table(title=f"{metric} (%) per model under each judge (rank)")
    scores.add_column("model")
    for j in judges:
        scores.add_column(escape(j), justify="right")
    for m in sorted(models, key=lambda m: result["rankings"][judges[0]].index(m)):
        cells = []
        for j in judges:
            s = result["scores"][j][m]
            err = escape(f" [{s['judge_error']} err]") if s["judge_error"] else ""
            rank = (result.get("ranks") or {}).get(j, {}).get(m) or result["rankings"][j].index(m) + 1
            cells.append(f"{_fmt(s[metric], pct=True)} (#{rank}){err}")
        scores.add_row(escape(m), *cells)
    pairs = Table(title="Judge agreement")
    for col in ("judge A", "judge B", "Kendall τ (ranks)", "Cohen κ (items)", "raw agreement", "items"):
        pairs.add_column(col, justify="left" if col.startswith("judge") else "right")
    for t, k in zip(result["kendall_tau"], result["cohen_kappa"]):
        pairs.add_row(escape(t["judge_a"]), escape(t["judge_b"]), _fmt(t["tau"]), _fmt(k["kappa"]),
                      _fmt(k["agreement"], pct=True) + ("%" if k["agreement"] is not None else ""),
                      f"{k['n_items']}" + (f" (+{k['n_excluded']} err)" if k["n_excluded"] else ""))
    parts = [scores, pairs]
    for k in result["cohen_kappa"]:
        conf = k.get("confusion")
        if not conf:
            continue
        used = [g for g in conf if sum(conf[g].values()) or sum(row[g] for row in conf.values())]
        t = Table(title=f"Grades: {escape(k['judge_a'])} (rows) x {escape(k['judge_b'])} (columns)")
        t.add_column("")
        for g in used:
            t.add_column(g, justify="right")
        for g in used:
            t.add_row(g, *(str(conf[g][h]) for h in used))
        parts.append(t)
    return Group(*parts)
