"""The predictions file a user uploads to the leaderboard, and its validator.

The format (an object with ``task``, ``model`` and ``predictions``, a bare list, or JSON Lines; UTF-8,
a BOM allowed) is in docs/leaderboard.md "The submission file"; the harness writes it. This module
has no web dependencies so the harness can import it to write and pre-check files.
:func:`validate_submission` reports *every* problem it finds, one line each, and never looks at
gold labels or references: it knows only the task's item ids and its (public) label set, ``None``
for a text task (any string is an answer).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, Iterable

from glotbench.leaderboard.names import shown
from glotbench.leaderboard.safe_json import JSONLimitError, loads

MAX_LISTED = 10  # how many offending ids a message names before it says "and N more"


@dataclass
class Submission:
    predictions: dict[str, str]  # item id -> predicted label
    task: str | None = None
    model: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


ANSWER_FIELDS = ("label", "prediction")  # the field an entry's answer is in (either name)


def make_submission(task: str, model: str, predictions: dict[str, str] | Iterable[tuple[str, str]],
                    field: str = "label") -> dict:
    """The JSON document (as a dict) for ``predictions``; ``json.dumps`` it to write the file.
    ``field``: ``"label"`` (classification) or ``"prediction"`` (a text task's answers)."""
    if field not in ANSWER_FIELDS:
        raise ValueError(f"field must be one of {ANSWER_FIELDS}, not {field!r}")
    items = predictions.items() if isinstance(predictions, dict) else predictions
    return {"task": task, "model": model, "predictions": [{"id": str(i), field: str(l)} for i, l in items]}


def _listing(values: list[str]) -> str:
    shown = ", ".join(repr(v) for v in values[:MAX_LISTED])
    more = len(values) - MAX_LISTED
    return shown + (f" and {more} more" if more > 0 else "")


def _as_text(value: Any, numbers: bool = False) -> str | None:
    """A string, an integer (or with ``numbers`` a finite float) as a string; None otherwise."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, int):
        return str(value)
    if numbers and isinstance(value, float) and math.isfinite(value):
        return repr(value)
    return None


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, float):
        return "a number that is not finite" if not math.isfinite(value) else "a number"
    return {dict: "an object", list: "a list"}.get(type(value), type(value).__name__)


def _json_lines(text: str, max_depth: int, max_int_digits: int, deadline: float | None) -> tuple[list, list[int], list[str]]:
    """JSON Lines: the objects, their line numbers, and one problem per line that is not a JSON object."""
    docs, lines, problems = [], [], []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            doc = loads(line, max_depth, max_int_digits, deadline=deadline)
        except json.JSONDecodeError as err:
            problems.append(f"Line {n} is not valid JSON: {err.msg} at column {err.colno}.")
            continue
        if not isinstance(doc, dict):
            problems.append(f"Line {n} is {_kind(doc)}, not a JSON object like {{\"id\": ..., \"prediction\": ...}}.")
            continue
        docs.append(doc)
        lines.append(n)
    return docs, lines, problems


def _looks_like_json_lines(text: str) -> bool:
    rows = [r.strip() for r in text.splitlines() if r.strip()]
    return len(rows) > 1 and all(r.startswith("{") for r in rows[:2])


def validate_submission(
    raw_bytes: bytes,
    task_ids: set[str],
    label_set: set[str] | None,
    max_bytes: int,
    expected_task: str | None = None,
    max_depth: int = 32,
    max_int_digits: int = 64,
    deadline: float | None = None,
) -> tuple[Submission | None, list[str]]:
    """Parse and check an uploaded predictions file.

    Returns ``(submission, [])`` when the file is valid and ``(None, problems)`` otherwise, where
    ``problems`` lists every problem found as a one-line English sentence. ``label_set`` is the
    task's public label set, or ``None`` for a text task (any string is an answer; numbers are
    read as text). ``deadline`` (a :func:`time.monotonic` value) bounds the parsing time (see
    :func:`safe_json.loads`).
    """
    if len(raw_bytes) > max_bytes:
        return None, [f"The file is too large: {len(raw_bytes):,} bytes; the limit is {max_bytes:,} bytes."]
    if not raw_bytes.strip():
        return None, ["The file is empty; expected a JSON document with predictions."]
    try:
        text = raw_bytes.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        return None, [f"The file is not UTF-8 text (bad byte at position {err.start})."]
    lines: list[int] | None = None  # per entry, its line (JSON Lines only)
    try:
        doc = loads(text, max_depth, max_int_digits, deadline=deadline)
    except JSONLimitError as err:
        return None, [str(err)]
    except json.JSONDecodeError as err:
        if not (err.msg == "Extra data" and _looks_like_json_lines(text)):
            return None, [f"The file is not valid JSON: {err.msg} at line {err.lineno}, column {err.colno}."]
        try:
            docs, lines, line_problems = _json_lines(text, max_depth, max_int_digits, deadline)
        except JSONLimitError as limit:
            return None, [str(limit)]
        if line_problems:
            return None, line_problems
        head = docs[0] if docs and "id" not in docs[0] else None
        doc = {**(head or {}), "predictions": docs[1:] if head is not None else docs}
        lines = lines[1:] if head is not None else lines
    if isinstance(doc, dict) and "predictions" not in doc and "id" in doc:
        doc, lines = [doc], [1]  # JSON Lines with one line: a task of one item

    answer_field = "label" if label_set is not None else "prediction"
    problems: list[str] = []
    task = model = None
    extra: dict[str, Any] = {}
    if isinstance(doc, dict):
        if "predictions" not in doc:
            return None, [f'Wrong shape: the JSON object has no "predictions" field (expected {{"task": ..., "model": ..., "predictions": [{{"id": ..., "{answer_field}": ...}}, ...]}}).']
        entries = doc["predictions"]
        task, model = doc.get("task"), doc.get("model")
        if task is not None and not isinstance(task, str):
            problems.append('Wrong shape: "task" must be a string.')
            task = None
        if model is not None and (not isinstance(model, str) or not model.strip()):
            problems.append('Wrong shape: "model" must be a non-empty string.')
            model = None
        if expected_task and task and task != expected_task:
            problems.append(f"The file is for task {shown(task)}, but it was uploaded for task {shown(expected_task)}.")
        extra = {k: v for k, v in doc.items() if k not in ("task", "model", "predictions")}
    elif isinstance(doc, list):
        entries = doc
    else:
        return None, [f"Wrong shape: the top level is a JSON {type(doc).__name__ if not isinstance(doc, str) else 'string'}; expected an object with \"predictions\" or a list of {{\"id\", \"{answer_field}\"}} objects."]
    if not isinstance(entries, list):
        return None, problems + [f'Wrong shape: "predictions" must be a list of {{"id": ..., "{answer_field}": ...}} objects.']

    def where(n: int) -> str:
        return f"line {lines[n]}" if lines is not None else f"entry {n}"

    preds: dict[str, str] = {}
    bad_shape: list[str] = []
    duplicates: list[str] = []
    bad_labels: dict[str, list[str]] = {}
    named: set[str] = set()  # ids whose entry has a shape problem
    for n, entry in enumerate(entries):
        if not isinstance(entry, dict):
            bad_shape.append(f"{where(n)} is not an object")
            continue
        item_id = _as_text(entry.get("id"))
        if "id" not in entry or item_id is None:
            bad_shape.append(f'{where(n)} has no string "id"' + (f" (it is {_kind(entry['id'])})" if "id" in entry else ""))
            continue
        given = [f for f in ANSWER_FIELDS if f in entry]
        if len(given) > 1:
            named.add(item_id)
            bad_shape.append(f'{where(n)} (id {shown(item_id)}) has both "label" and "prediction"; give one')
            continue
        fld = given[0] if given else answer_field
        label = _as_text(entry.get(fld), numbers=label_set is None)
        if not given or label is None:
            named.add(item_id)  # its problem is said here, not again as a missing id
            bad_shape.append(f'{where(n)} (id {shown(item_id)}) has no string "{fld}"' + (f" (it is {_kind(entry[fld])})" if given else ""))
            continue
        if item_id in preds:
            duplicates.append(item_id)
            continue
        preds[item_id] = label
        if label_set is not None and label not in label_set:
            bad_labels.setdefault(label, []).append(item_id)

    if bad_shape:
        more = len(bad_shape) - MAX_LISTED
        problems.append("Wrong shape: " + "; ".join(bad_shape[:MAX_LISTED]) + (f"; and {more} more" if more > 0 else "") + ".")
    if not entries:
        problems.append("The predictions list is empty.")
    unknown = sorted((i for i in preds if i not in task_ids), key=_id_key)
    if unknown:
        problems.append(f"{len(unknown)} unknown id(s), not in this task: {_listing(unknown)}.")
    missing = sorted((i for i in task_ids if i not in preds and i not in named), key=_id_key)
    if missing and entries:
        problems.append(f"{len(missing)} missing id(s), every item needs a prediction: {_listing(missing)}.")
    if duplicates:
        dups = sorted(set(duplicates), key=_id_key)
        problems.append(f"{len(dups)} duplicate id(s), each id may appear once: {_listing(dups)}.")
    for label, ids in sorted(bad_labels.items()):
        allowed = ", ".join(repr(l) for l in sorted(label_set or ()))
        problems.append(f"Label {shown(label)} is not in the label set ({allowed}); used for {len(ids)} id(s): {_listing(ids)}.")
    if problems:
        return None, problems
    return Submission(predictions=preds, task=task, model=model, extra=extra), []


def task_named_in(raw_bytes: bytes, max_depth: int = 32, max_int_digits: int = 64, deadline: float | None = None) -> str | None:
    """The ``"task"`` a file names (a JSON document's, or a JSON Lines file's first line), else None."""
    try:
        text = raw_bytes.decode("utf-8-sig")
        first = next((r for r in text.splitlines() if r.strip()), "") if _looks_like_json_lines(text) else text
        doc = loads(first, max_depth, max_int_digits, deadline=deadline)
    except (ValueError, UnicodeDecodeError):
        return None
    return doc.get("task") if isinstance(doc, dict) and isinstance(doc.get("task"), str) else None


def _id_key(item_id: str) -> tuple[int, int | str]:
    return (0, int(item_id)) if item_id.isdigit() else (1, item_id)
