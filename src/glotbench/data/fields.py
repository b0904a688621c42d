"""Tiny path expressions that pull values out of records.

``question`` -> record["question"]; ``meta.level`` -> record["meta"]["level"];
``choices[*].text`` -> [c["text"] for c in record["choices"]]; ``choices[0]`` -> first element;
``=literal`` -> the literal string.

A step may end in ``|json`` or ``|python-literal`` to decode a *stringified* cell before going
on: ``metadata|python-literal.topic`` reads ``topic`` out of a CSV cell holding
``"{'topic': 'Art', 'answer_type': 'Person'}"`` (the SimpleQA CSV's ``metadata`` column);
``meta|json.level`` does the same for a JSON string. A cell that is already a dict or list passes
through; a string that does not decode is a :class:`FieldDecodeError` (one line naming the path
and the decoder). ``python-literal`` uses :func:`ast.literal_eval` (literals only, no code runs).

A path that matches nothing in *any* record is almost always a typo (``topic: topik``): tasks
check that with :func:`unmatched_paths` when they load, and fail naming the field.
"""

from __future__ import annotations

import ast
import functools
import json
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from glotbench.errors import DataError

_MISSING = object()
_TOKEN = re.compile(r"([^.\[\]|]+)|\[(\*|-?\d+)\]|\|([a-z-]+)")

DECODERS = ("json", "python-literal")


class MissingField(KeyError):
    pass


class FieldDecodeError(DataError):
    """A ``|json`` / ``|python-literal`` step met a string that does not decode."""


class _Decode:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        if name not in DECODERS:
            raise DataError(f"field path: unknown decoder '|{name}' (known: {', '.join('|' + d for d in DECODERS)})")
        self.name = name


@functools.lru_cache(maxsize=4096)
def _parse(path: str) -> tuple[Any, ...]:
    """The steps of ``path`` (cached: a task reads the same few paths from every record)."""
    steps: list[Any] = []
    for name, idx, dec in _TOKEN.findall(path):
        if name:
            steps.append(name)
        elif dec:
            steps.append(_Decode(dec))
        elif idx == "*":
            steps.append("*")
        else:
            steps.append(int(idx))
    return tuple(steps)


def _decode(value: Any, dec: _Decode, path: str) -> Any:
    if not isinstance(value, str):
        return value  # already structured (a JSON record): nothing to decode
    try:
        if dec.name == "json":
            return json.loads(value)
        return ast.literal_eval(value.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as err:
        short = value if len(value) <= 60 else value[:57] + "..."
        raise FieldDecodeError(f"field '{path}': cell {short!r} is not {dec.name} ({type(err).__name__})") from None


def _walk(value: Any, steps: tuple, path: str) -> Any:
    for i, step in enumerate(steps):
        if isinstance(step, _Decode):
            value = _decode(value, step, path)
            continue
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
    """Return the value at ``path``; raise MissingField when any step is absent, FieldDecodeError
    when a ``|json`` / ``|python-literal`` cell does not decode."""
    if path.startswith("="):
        return path[1:]
    return _walk(record, _parse(path), path)


def _step_fn(step: Any, nxt: Callable[[Any], Any] | None, path: str) -> Callable[[Any], Any]:
    """One step of :func:`_walk` as a function of the value so far, then ``nxt`` (None: the last step)."""
    if isinstance(step, _Decode):
        if nxt is None:
            return lambda v: _decode(v, step, path)
        return lambda v: nxt(_decode(v, step, path))
    if step == "*":
        if nxt is None:
            def every(v: Any) -> Any:
                if not isinstance(v, list):
                    raise MissingField(path)
                return list(v)
            return every

        def each(v: Any) -> Any:
            if not isinstance(v, list):
                raise MissingField(path)
            return [nxt(x) for x in v]
        return each
    if isinstance(step, int):
        def index(v: Any) -> Any:
            if not isinstance(v, list) or not -len(v) <= step < len(v):
                raise MissingField(path)
            return v[step] if nxt is None else nxt(v[step])
        return index
    if nxt is None:
        def key(v: Any) -> Any:
            if isinstance(v, dict) and step in v:
                return v[step]
            raise MissingField(path)
        return key

    def key_then(v: Any) -> Any:
        if isinstance(v, dict) and step in v:
            return nxt(v[step])
        raise MissingField(path)
    return key_then


@functools.lru_cache(maxsize=4096)
def getter(path: str) -> Callable[[Any], Any]:
    """A function doing what ``get_path(record, path)`` does, its steps composed once per path (a task
    reads the same few paths from every record: walking the parsed steps per field per item was a
    few percent of a run's CPU). tests/test_request_prep_same_output.py compares both on every built-in task."""
    if path.startswith("="):
        literal = path[1:]
        return lambda record: literal
    steps = _parse(path)
    fn: Callable[[Any], Any] | None = None
    for k in range(len(steps) - 1, -1, -1):
        if steps[k] == "*" and k == len(steps) - 2 and _is_key(steps[k + 1]):
            fn = _each_key(steps[k + 1], path)  # ``list[*].name``: one function, not one call per element
            continue
        fn = _step_fn(steps[k], fn, path)
    return fn if fn is not None else (lambda record: record)


def _is_key(step: Any) -> bool:
    return isinstance(step, str) and step != "*"


def _each_key(name: str, path: str) -> Callable[[Any], Any]:
    """The steps ``[*]`` then ``name`` (the last): ``[x[name] for x in value]``, each checked as :func:`_walk` does."""
    def each_key(v: Any) -> Any:
        if not isinstance(v, list):
            raise MissingField(path)
        out = []
        for x in v:
            if not (isinstance(x, dict) and name in x):
                raise MissingField(path)
            out.append(x[name])
        return out
    return each_key


def has_path(record: dict, path: str) -> bool:
    """Whether ``path`` reaches a value in ``record`` (a cell that does not decode counts as absent)."""
    try:
        get_path(record, path)
    except (MissingField, FieldDecodeError):
        return False
    return True


def unmatched_paths(fields: Mapping[str, str], records: Iterable[dict]) -> dict[str, str]:
    """The ``{name: path}`` entries of ``fields`` that match nothing in any of ``records``.

    Stops looking at a field as soon as one record has it, so a typical task costs one record.
    No records at all: nothing is reported (an empty split is reported elsewhere).
    """
    left = {n: p for n, p in fields.items() if not p.startswith("=")}
    seen_any = False
    for rec in records:
        seen_any = True
        left = {n: p for n, p in left.items() if not has_path(rec, p)}
        if not left:
            break
    return left if seen_any else {}
