"""MM-Eval's Dual Capability Framework (§3.1, §5): language ability (syntax + semantics) vs
cognitive ability (knowledge + reasoning), from one run's results.json.

The paper reports the four levels' accuracies and argues over the two abilities without a formula
for them. glotbench shows both readings, named: ``mean of levels`` (the two levels' accuracies
averaged, each level weighing the same, the way the paper's discussion compares levels) and
``pooled items`` (right answers over all items of the two levels). A level that was not run leaves
its ability out (shown as ``-``). A level whose score the run marks as no score (``invalid``: over
50% of its answers unparseable by the metric's rule; a failed task) is shown as ``invalid`` and left
out of its ability's averages, which are then over the other level, with the count of levels left out.

Each level is read on its task's headline metric (results.json ``headline``; see
:mod:`glotbench.scoring.roles`): ``accuracy`` for the multiple-choice levels, ``numeric_match`` for
reasoning, whose answers are numbers. ``metric=`` reads one named metric on every level instead.
"""

from __future__ import annotations

from rich.table import Table

LEVELS = {"language": ("mm_eval.syntax", "mm_eval.semantics"),
          "cognitive": ("mm_eval.knowledge", "mm_eval.reasoning")}


def applies(results: dict) -> bool:
    tasks = results.get("tasks") or {}
    return any(t in tasks for levels in LEVELS.values() for t in levels)


INVALID = "invalid"


def _acc(entry: dict | None, metric: str | None = None) -> tuple[float, int] | str | None:
    """(score, items), ``"invalid"`` when the run marks the score as no score, None when absent."""
    from glotbench.report.comparisons import rankable
    from glotbench.report.runs import primary_metric

    if not entry:
        return None
    name = metric or primary_metric(entry)
    m = (entry.get("metrics") or {}).get(name) or {}
    if entry.get("status") == "failed" or (m.get("value") is not None and rankable(entry, name) is None):
        return INVALID
    if m.get("value") is None:
        return None
    return float(m["value"]), int(entry.get("n_scored") or 0)


def abilities(results: dict, metric: str | None = None) -> dict[str, dict]:
    """``{ability: {"levels": {task: score}, "metrics": {task: name}, "mean_of_levels", "pooled_items", "n",
    "invalid": [task]}}`` (None where a level is missing, ``"invalid"`` where its score is no score);
    each level on its headline metric, or on ``metric``. An invalid level is left out of the averages
    (listed under ``invalid``); a missing level leaves them out."""
    from glotbench.report.runs import primary_metric

    tasks = results.get("tasks") or {}
    out: dict[str, dict] = {}
    for ability, levels in LEVELS.items():
        got = {t: _acc(tasks.get(t), metric) for t in levels}
        invalid = [t for t, v in got.items() if v == INVALID]
        valid = [v for v in got.values() if isinstance(v, tuple)]
        complete = all(v is not None for v in got.values()) and bool(valid)
        n = sum(v[1] for v in valid) if complete else 0
        out[ability] = {
            "levels": {t: (v if v == INVALID else v[0] if v else None) for t, v in got.items()},
            "metrics": {t: metric or (primary_metric(tasks[t]) if t in tasks else None) for t in levels},
            "mean_of_levels": sum(v[0] for v in valid) / len(valid) if complete else None,
            "pooled_items": (sum(v[0] * v[1] for v in valid) / n) if complete and n else None,
            "n": n,
            "invalid": invalid,
        }
    return out


def abilities_table(results: dict) -> Table:
    table = Table(title="MM-Eval Dual Capability Framework (§3.1) · each level's headline metric in %")
    for col in ("ability", "levels", "mean of levels", "pooled items", "items"):
        table.add_column(col, justify="left" if col in ("ability", "levels") else "right")
    fmt = lambda v: "-" if v is None else v if v == INVALID else f"{100 * v:.2f}"  # noqa: E731
    left_out = []
    for ability, row in abilities(results).items():
        named = {t: f" ({m})" if m not in (None, "accuracy") else "" for t, m in row["metrics"].items()}  # numeric_match
        levels = ", ".join(f"{t.split('.')[-1]} {fmt(v)}{named[t]}" for t, v in row["levels"].items())
        mark = f" ({len(row['invalid'])} invalid left out)" if row["invalid"] and row["mean_of_levels"] is not None else ""
        table.add_row(f"{ability} ({' + '.join(t.split('.')[-1] for t in LEVELS[ability])})", levels,
                      fmt(row["mean_of_levels"]) + mark, fmt(row["pooled_items"]) + mark, str(row["n"] or "-"))
        left_out += row["invalid"]
    if left_out:
        table.caption = (f"invalid (over 50% unparseable, or failed): {', '.join(left_out)}: no score, left out of "
                         "its ability's averages")
    return table


def console_tables(results: dict) -> list[Table]:
    """Language (syntax + semantics) vs cognitive (knowledge + reasoning) abilities (a result-table hook)."""
    return [abilities_table(results)] if applies(results) else []
