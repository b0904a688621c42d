"""Items and their provenance: the one JSONL shape every `glotbench build` step reads and writes.

An item is a JSON object with the task's own fields plus ``provenance``: a list of steps, oldest
first, each ``{"step", "source", "model", "prompt_sha256", ...}`` (keys a step does not use are left
out). Items a check removes are written, with ``removed_by`` (the check) and ``reason``, to the
step's ``*.dropped.jsonl`` beside its output, so nothing is silently lost.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Iterable

from glotbench.data.loaders import iter_jsonl
from glotbench.errors import DataError


def prompt_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def add_step(item: dict, step: str, **info: Any) -> dict:
    """Append one provenance entry (None values dropped) and return the item."""
    entry = {"step": step, **{k: v for k, v in info.items() if v is not None}}
    item.setdefault("provenance", []).append(entry)
    return item


def drop(item: dict, check: str, reason: str) -> dict:
    """The item as the dropped file records it: which check removed it and why."""
    return {**item, "removed_by": check, "reason": reason}


def read_items(path: Path) -> list[dict]:
    """Items of a JSONL dataset, read by the task-data reader (:func:`glotbench.data.loaders.iter_jsonl`:
    record-size cap, encoding, one DataError naming file and line for a malformed line)."""
    path = Path(path)
    try:
        return [rec for _, rec in iter_jsonl(path)]
    except FileNotFoundError:
        raise DataError(f"{path}: no such file") from None


def write_items(path: Path, items: Iterable[dict]) -> int:
    """Write items as JSONL (atomically: a temp file renamed over the target); returns the count."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    n = 0
    with tmp.open("w", encoding="utf-8") as fh:
        for item in items:
            fh.write(json.dumps(item, ensure_ascii=False, default=str) + "\n")
            n += 1
    tmp.replace(path)
    return n


def dropped_path(output: Path) -> Path:
    """``out.jsonl`` -> ``out.dropped.jsonl``."""
    output = Path(output)
    stem = output.name[: -len(".jsonl")] if output.name.endswith(".jsonl") else output.name
    return output.with_name(stem + ".dropped.jsonl")
