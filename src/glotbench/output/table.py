"""The console results table."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table


def _fmt(metric: dict, definition: dict | None = None) -> str:
    v = metric.get("value")
    if v is None:
        return "n/a"
    f = (definition or {}).get("format") or ".3f"  # the metric's declared display format
    lo, hi = metric.get("ci95") or [None, None]
    ci = f" [{lo:{f}}, {hi:{f}}]" if lo is not None and hi is not None else ""
    return f"{v:{f}}{ci}"


def results_table(results: dict, title: str = "") -> Table:
    table = Table(title=title or None, show_lines=False)
    for col in ("task", "lang", "metric", "value [95% CI]", "n", "unparseable", "errors", "flag", "prompt"):
        table.add_column(col, justify="right" if col in ("n", "unparseable", "errors") else "left")
    for name, t in results["tasks"].items():
        for i, (mname, m) in enumerate(t["metrics"].items()):
            first = i == 0
            table.add_row(
                name if first else "", t["language"] if first else "", mname,
                _fmt(m, (t.get("metric_definitions") or {}).get(mname)),
                str(t["n_scored"]) if first else "", str(t["n_unparseable"]) if first else "",
                str(t["n_errors"]) if first else "", t["flag"] if first else "",
                f"v{t['version']}·{t['prompt_hash']}" if first else "",
            )
    return table


def print_results(results: dict, console: Console | None = None) -> None:
    console = console or Console()
    console.print(results_table(results, title=f"{results['model']['model_id']}  ·  run {results['fingerprint']}"))
    if results.get("note"):
        console.print(f"note: {results['note']}", markup=False)
    notes = []
    for name, t in results["tasks"].items():
        if t["status"] == "flagged":
            notes.append(f"* {name}: {t['unparseable_rate']:.0%} of answers unparseable (over 20%)")
        elif t["status"] == "invalid":
            notes.append(f"invalid {name}: {t['unparseable_rate']:.0%} of answers unparseable (over 50%): score not valid")
        elif t["status"] == "incomplete":
            notes.append(f"incomplete {name}: {t['n_scored'] + t['n_errors']}/{t['n_items']} items done")
        if t["n_errors"]:
            notes.append(f"{name}: {t['n_errors']} item(s) failed after retries and are excluded from the score (see errors in results.json)")
    for name, why in (results.get("skipped_tasks") or {}).items():
        notes.append(f"data missing, not run: {name}: {why}")
    for n in notes:
        console.print(n, style="yellow")
    from glotbench.output.hooks import extra_tables

    for table in extra_tables(results):  # benchmark tables, contributed through hooks
        console.print(table)
