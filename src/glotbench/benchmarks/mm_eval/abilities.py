"""MM-Eval's Dual Capability Framework (§3.1, §5): language ability (syntax + semantics) vs
cognitive ability (knowledge + reasoning), from one run's results.json.

The paper reports the four levels' accuracies and argues over the two abilities without a formula
for them. glotbench shows both readings, named: ``mean of levels`` (the two levels' accuracies
averaged, each level weighing the same, the way the paper's discussion compares levels) and
``pooled items`` (right answers over all items of the two levels). A level that was not run leaves
its ability out (shown as ``-``).

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


def _acc(entry: dict | None, metric: str | None = None) -> tuple[float, int] | None:
    from glotbench.report.runs import primary_metric

    if not entry:
        return None
    m = (entry.get("metrics") or {}).get(metric or primary_metric(entry)) or {}
    if m.get("value") is None:
        return None
    return float(m["value"]), int(entry.get("n_scored") or 0)


def abilities(results: dict, metric: str | None = None) -> dict[str, dict]:
    """``{ability: {"levels": {task: score}, "metrics": {task: name}, "mean_of_levels", "pooled_items", "n"}}``
    (None where a level is missing); each level on its headline metric, or on ``metric``."""
    from glotbench.report.runs import primary_metric

    tasks = results.get("tasks") or {}
    out: dict[str, dict] = {}
    for ability, levels in LEVELS.items():
        got = {t: _acc(tasks.get(t), metric) for t in levels}
        complete = all(v is not None for v in got.values())
        n = sum(v[1] for v in got.values() if v) if complete else 0
        out[ability] = {
            "levels": {t: (v[0] if v else None) for t, v in got.items()},
            "metrics": {t: metric or (primary_metric(tasks[t]) if t in tasks else None) for t in levels},
            "mean_of_levels": sum(v[0] for v in got.values()) / len(got) if complete else None,
            "pooled_items": (sum(v[0] * v[1] for v in got.values()) / n) if complete and n else None,
            "n": n,
        }
    return out


def abilities_table(results: dict) -> Table:
    table = Table(title="MM-Eval Dual Capability Framework (§3.1) · each level's headline metric in %")
    for col in ("ability", "levels", "mean of levels", "pooled items", "items"):
        table.add_column(col, justify="left" if col in ("ability", "levels") else "right")
    fmt = lambda v: "-" if v is None else f"{100 * v:.2f}"  # noqa: E731
    for ability, row in abilities(results).items():
        named = {t: f" ({m})" if m not in (None, "accuracy") else "" for t, m in row["metrics"].items()}  # numeric_match
        levels = ", ".join(f"{t.split('.')[-1]} {fmt(v)}{named[t]}" for t, v in row["levels"].items())
        table.add_row(f"{ability} ({' + '.join(t.split('.')[-1] for t in LEVELS[ability])})", levels,
                      fmt(row["mean_of_levels"]), fmt(row["pooled_items"]), str(row["n"] or "-"))
    return table


def console_tables(results: dict) -> list[Table]:
    """Language (syntax + semantics) vs cognitive (knowledge + reasoning) abilities (a result-table hook)."""
    return [abilities_table(results)] if applies(results) else []
