"""Task-file templates a benchmark package registers (``bench.task_template(name, ref)``): a
function ``(language=..., grader=...) -> dict`` of the task fields (task class, scorer, metrics,
options) a ``glotbench build`` step writes into the task YAML it ends with."""

from __future__ import annotations

from typing import Any, Callable

from glotbench.errors import TaskSpecError
from glotbench.registry import Registry

TASK_TEMPLATES: Registry[Callable[..., dict[str, Any]]] = Registry("task template", error=TaskSpecError)
