"""The factuality tasks' console tables below the results table (a result-table hook): the papers'
CO / NA / IN / CGA / F table per judged task, per category field."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from glotbench.output.grade_tables import factuality_table

MAX_CONSOLE_ROWS = 20  # a category field with more values gets a line, not a table, in the console


def console_tables(results: dict) -> list[Table | Text]:
    """The papers' CO / NA / IN / CGA / F table per judged task, per category field (a result-table hook).

    The first field is always a table (the papers' per-topic table); a further field with more than
    :data:`MAX_CONSOLE_ROWS` values (Chinese SimpleQA's 99 subtopics) is one line pointing to where
    its rows are: 340 console lines at the end of every run hid the results table, and drawing them
    took 0.12 s of a 2,000-item run."""
    out: list[Table | Text] = []
    for name, t in results.get("tasks", {}).items():
        if not t.get("factuality"):
            continue
        by = t["factuality"].get("by") or {}
        for k, field in enumerate(list(by) or [None]):
            if k and len(by[field]) > MAX_CONSOLE_ROWS:
                out.append(Text(f"{name}: {field} has {len(by[field])} values; their CO / NA / IN / CGA / F with "
                                f"intervals are in results.json (tasks.{name}.factuality.by.{field}) and in "
                                f"glotbench runs report"))
            else:
                out.append(factuality_table(name, t["factuality"], by=field))
    return out
