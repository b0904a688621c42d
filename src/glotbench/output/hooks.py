"""Extra console tables a benchmark adds below the results table (OpenHuEval's Table 5, the
SimpleQA CO/NA/IN/CGA/F table, MM-Eval's ability levels). The generic printer knows none of them:
each is a function ``fn(results) -> list[rich renderable]`` (empty when the run has nothing for
it), registered by name; built-ins lazily in :mod:`glotbench.builtins`."""

from __future__ import annotations

from typing import Any, Callable

from glotbench.errors import TaskSpecError
from glotbench.registry import Registry

ResultTables = Callable[[dict], list[Any]]

RESULT_TABLES: Registry[ResultTables] = Registry("result table hook", error=TaskSpecError)


def extra_tables(results: dict) -> list[Any]:
    """Every registered hook's tables for ``results``, in registration order."""
    out: list[Any] = []
    for name in RESULT_TABLES.in_order():
        out.extend(RESULT_TABLES.get(name)(results) or [])
    return out
