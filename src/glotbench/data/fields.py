"""Tiny path expressions that pull values out of records.

``question`` -> record["question"]; ``meta.level`` -> record["meta"]["level"];
``choices[*].text`` -> [c["text"] for c in record["choices"]]; ``choices[0]`` -> first element;
``=literal`` -> the literal string.
"""

from __future__ import annotations

import re
from typing import Any

_MISSING = object()
_TOKEN = re.compile(r"([^.\[\]]+)|\[(\*|-?\d+)\]")


class MissingField(KeyError):
    pass


def _parse(path: str) -> list[str | int]:
    steps: list[str | int] = []
    for name, idx in _TOKEN.findall(path):
        if name:
            steps.append(name)
        elif idx == "*":
            steps.append("*")
        else:
            steps.append(int(idx))
    return steps


def _walk(value: Any, steps: list, path: str) -> Any:
    for i, step in enumerate(steps):
        if step == "*":
            if not isinstance(value, list):
                raise MissingField(path)
            return [_walk(v, steps[i + 1:], path) for v in value]
        if isinstance(step, int):
            if not isinstance(value, list) or not -len(value) <= step < len(value):
                raise MissingField(path)
            value = value[step]
        else:
            if not isinstance(value, dict) or step not in value:
                raise MissingField(path)
            value = value[step]
    return value


def get_path(record: dict, path: str) -> Any:
    """Return the value at ``path``; raise MissingField when any step is absent."""
    if path.startswith("="):
        return path[1:]
    return _walk(record, _parse(path), path)
