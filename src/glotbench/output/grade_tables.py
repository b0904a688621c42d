"""Console tables of three-way judge grades: the CO / NA / IN / CGA / F table (overall and per category,
95% intervals, judge errors) and every model's scores under every judge (`glotbench judge`). The
factuality benchmark's result-table hook is in its package (``benchmarks/factuality/tables.py``)."""

from __future__ import annotations

import math
from typing import Any

from rich.markup import escape
from rich.table import Table

COLUMNS = ("CO", "NA", "IN", "CGA", "F")


def _pct(x: float | None) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:.1f}"


def _ci(s: dict, key: str) -> str:
    lo, hi = (s.get("ci") or {}).get(key) or (None, None)
    return "" if lo is None or hi is None else f" [{_pct(lo)}, {_pct(hi)}]"


def factuality_table(task: str, fact: dict[str, Any], *, by: str | None = None, title: str = "") -> Table:
    """One task's table: the overall row, then one row per value of ``by`` (default: the first
    category field). Values in %, CO / CGA / F with their 95% bootstrap intervals."""
    fields = list(fact.get("by") or {})
    by = by or (fields[0] if fields else None)
    t = Table(title=title or f"{task}: factuality (%) · judge {fact.get('judge')} · grader {fact.get('grader')}")
    t.add_column(by or "", justify="left")
    for c in COLUMNS:
        t.add_column(c, justify="right")
    t.add_column("n", justify="right")
    t.add_column("judge errors", justify="right")

    def row(name: str, s: dict, style: str | None = None) -> None:
        t.add_row(escape(name), *[_pct(s.get(c)) + (_ci(s, c) if c in ("CO", "CGA", "F") else "") for c in COLUMNS],
                  str(s.get("n", "")), str(s.get("judge_error", "")), style=style)

    row("overall", fact["overall"], "bold")
    for name, s in ((fact.get("by") or {}).get(by) or {}).items() if by else []:
        row(name, s)
    return t


def judges_scores_table(task: str, res: dict[str, Any]) -> Table:
    """Every model's CO / NA / IN / CGA / F (%) under every judge (from compare_judges output)."""
    t = Table(title=f"{task}: scores (%) per model and judge")
    t.add_column("model")
    t.add_column("judge")
    for c in COLUMNS:
        t.add_column(c, justify="right")
    t.add_column("judge errors", justify="right")
    for m in res["models"]:
        for k, j in enumerate(res["judges"]):
            s = res["scores"][j][m]
            t.add_row(escape(m) if k == 0 else "", escape(j), *[_pct(s[c]) for c in COLUMNS], str(s["judge_error"]))
    return t
