"""The predictions file a user uploads to the leaderboard, and its validator.

The format (documented in docs/leaderboard.md; the harness writes it)::

    {"task": "my_suite.sst", "model": "my-model", "predictions": [{"id": "0", "label": "1"}, ...]}

A bare JSON list ``[{"id": "0", "label": "1"}, ...]`` is accepted too (task and model then come
from the upload form or API fields). ``id`` and ``label`` are strings; integers are accepted and
turned into strings. The file is UTF-8 (a BOM is allowed).

This module has no web dependencies so the harness can import it to write and pre-check files.
:func:`validate_submission` reports *every* problem it finds, in plain words, and never looks at
gold labels: it knows only the task's item ids and its (public) label set.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Iterable

from glotbench.leaderboard.safe_json import JSONLimitError, loads

FORMAT_VERSION = 1
MAX_LISTED = 10  # how many offending ids a message names before it says "and N more"


@dataclass
class Submission:
    predictions: dict[str, str]  # item id -> predicted label
    task: str | None = None
    model: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def make_submission(task: str, model: str, predictions: dict[str, str] | Iterable[tuple[str, str]]) -> dict:
    """The JSON document (as a dict) for ``predictions``; ``json.dumps`` it to write the file."""
    items = predictions.items() if isinstance(predictions, dict) else predictions
    return {"task": task, "model": model, "predictions": [{"id": str(i), "label": str(l)} for i, l in items]}


def _listing(values: list[str]) -> str:
    shown = ", ".join(repr(v) for v in values[:MAX_LISTED])
    more = len(values) - MAX_LISTED
    return shown + (f" and {more} more" if more > 0 else "")


def _as_text(value: Any) -> str | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, int):
        return str(value)
    return None


def validate_submission(
    raw_bytes: bytes,
    task_ids: set[str],
    label_set: set[str],
    max_bytes: int,
    expected_task: str | None = None,
    max_depth: int = 32,
    max_int_digits: int = 64,
    deadline: float | None = None,
) -> tuple[Submission | None, list[str]]:
    """Parse and check an uploaded predictions file.

    Returns ``(submission, [])`` when the file is valid and ``(None, problems)`` otherwise, where
    ``problems`` lists every problem found as a one-line English sentence. ``deadline`` (a
    :func:`time.monotonic` value) bounds the parsing time (see :func:`safe_json.loads`).
    """
    if len(raw_bytes) > max_bytes:
        return None, [f"The file is too large: {len(raw_bytes):,} bytes; the limit is {max_bytes:,} bytes."]
    if not raw_bytes.strip():
        return None, ["The file is empty; expected a JSON document with predictions."]
    try:
        text = raw_bytes.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        return None, [f"The file is not UTF-8 text (bad byte at position {err.start})."]
    try:
        doc = loads(text, max_depth, max_int_digits, deadline=deadline)
    except JSONLimitError as err:
        return None, [str(err)]
    except json.JSONDecodeError as err:
        return None, [f"The file is not valid JSON: {err.msg} at line {err.lineno}, column {err.colno}."]

    problems: list[str] = []
    task = model = None
    extra: dict[str, Any] = {}
    if isinstance(doc, dict):
        if "predictions" not in doc:
            return None, ['Wrong shape: the JSON object has no "predictions" field (expected {"task": ..., "model": ..., "predictions": [{"id": ..., "label": ...}, ...]}).']
        entries = doc["predictions"]
        task, model = doc.get("task"), doc.get("model")
        if task is not None and not isinstance(task, str):
            problems.append('Wrong shape: "task" must be a string.')
            task = None
        if model is not None and (not isinstance(model, str) or not model.strip()):
            problems.append('Wrong shape: "model" must be a non-empty string.')
            model = None
        if expected_task and task and task != expected_task:
            problems.append(f"The file is for task {task!r}, but it was uploaded for task {expected_task!r}.")
        extra = {k: v for k, v in doc.items() if k not in ("task", "model", "predictions")}
    elif isinstance(doc, list):
        entries = doc
    else:
        return None, [f"Wrong shape: the top level is a JSON {type(doc).__name__ if not isinstance(doc, str) else 'string'}; expected an object with \"predictions\" or a list of {{\"id\", \"label\"}} objects."]
    if not isinstance(entries, list):
        return None, problems + ['Wrong shape: "predictions" must be a list of {"id": ..., "label": ...} objects.']

    preds: dict[str, str] = {}
    bad_shape: list[str] = []
    duplicates: list[str] = []
    bad_labels: dict[str, list[str]] = {}
    for n, entry in enumerate(entries):
        if not isinstance(entry, dict):
            bad_shape.append(f"entry {n} is not an object")
            continue
        item_id, label = _as_text(entry.get("id")), _as_text(entry.get("label"))
        if "id" not in entry or item_id is None:
            bad_shape.append(f'entry {n} has no string "id"')
            continue
        if "label" not in entry or label is None:
            bad_shape.append(f'entry {n} (id {item_id!r}) has no string "label"')
            continue
        if item_id in preds:
            duplicates.append(item_id)
            continue
        preds[item_id] = label
        if label not in label_set:
            bad_labels.setdefault(label, []).append(item_id)

    if bad_shape:
        more = len(bad_shape) - MAX_LISTED
        problems.append("Wrong shape: " + "; ".join(bad_shape[:MAX_LISTED]) + (f"; and {more} more" if more > 0 else "") + ".")
    if not entries:
        problems.append("The predictions list is empty.")
    unknown = sorted((i for i in preds if i not in task_ids), key=_id_key)
    if unknown:
        problems.append(f"{len(unknown)} unknown id(s), not in this task: {_listing(unknown)}.")
    missing = sorted((i for i in task_ids if i not in preds), key=_id_key)
    if missing and entries:
        problems.append(f"{len(missing)} missing id(s), every item needs a prediction: {_listing(missing)}.")
    if duplicates:
        dups = sorted(set(duplicates), key=_id_key)
        problems.append(f"{len(dups)} duplicate id(s), each id may appear once: {_listing(dups)}.")
    for label, ids in sorted(bad_labels.items()):
        allowed = ", ".join(repr(l) for l in sorted(label_set))
        problems.append(f"Label {label!r} is not in the label set ({allowed}); used for {len(ids)} id(s): {_listing(ids)}.")
    if problems:
        return None, problems
    return Submission(predictions=preds, task=task, model=model, extra=extra), []


def _id_key(item_id: str) -> tuple[int, int | str]:
    return (0, int(item_id)) if item_id.isdigit() else (1, item_id)
