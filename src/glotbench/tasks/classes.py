"""The task-class registry: names a task YAML may give as ``task_class:`` (built-ins are
registered lazily by :mod:`glotbench.builtins`; ``"module:Class"`` names user code)."""

from __future__ import annotations

from typing import Any

from glotbench.errors import TaskSpecError
from glotbench.registry import Registry


def _coerce_task_class(obj: Any, name: str, where: str) -> type:
    from glotbench.tasks.task import Task

    if isinstance(obj, type) and issubclass(obj, Task):
        return obj
    prefix = f"{where}: " if where else ""
    raise TaskSpecError(f"{prefix}{name} is not a glotbench Task subclass")


TASK_CLASSES: Registry[type] = Registry("task class", coerce=_coerce_task_class, error=TaskSpecError)


def register_task_class(name: str, cls: type) -> type:
    TASK_CLASSES.register(name, _coerce_task_class(cls, name, ""))
    return cls
