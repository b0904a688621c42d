"""Read dataset files (JSON array, JSONL, CSV, TSV, Parquet) or a pinned Hugging Face dataset
into a list of record dicts. Problems name the file, and the line or record at fault."""

from __future__ import annotations

import csv
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

from glotbench.errors import DataError
from glotbench.paths import find_data_root, resolve_data_file


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def locate(rel: str, task: str, base: Path | None = None) -> Path:
    """A task's data file: a relative path is looked up next to the task's YAML (``base``) first,
    then under the data root."""
    if base is not None and not Path(rel).expanduser().is_absolute() and (base / rel).is_file():
        return base / rel
    path = resolve_data_file(rel)
    if not path.exists():
        root = find_data_root()
        hint = f"data root: {root}" if root else "no data root found; set GLOTBENCH_DATA to the folder holding the benchmark data"
        near = f"{base}, " if base is not None else ""
        raise DataError(f"task {task}: data file {rel} not found (looked in {near}{hint})")
    return path


def read_records(path: Path, fmt: str, encoding: str = "utf-8-sig") -> list[dict]:
    if fmt == "json":
        return _read_json(path, encoding)
    if fmt == "jsonl":
        return _read_jsonl(path, encoding)
    if fmt in ("csv", "tsv"):
        with path.open(encoding=encoding, newline="") as fh:
            return [dict(r) for r in csv.DictReader(fh, delimiter="\t" if fmt == "tsv" else ",")]
    if fmt == "parquet":
        try:
            import pyarrow.parquet as pq
        except ImportError:
            raise DataError(f"{path}: reading Parquet needs pyarrow: pip install 'glotbench[parquet]'") from None
        return pq.read_table(path).to_pylist()
    raise DataError(f"{path}: unknown dataset format {fmt!r}")


def _read_json(path: Path, encoding: str) -> list[dict]:
    try:
        data = json.loads(path.read_text(encoding=encoding))
    except json.JSONDecodeError as err:
        raise DataError(f"{path}: line {err.lineno}: invalid JSON: {err.msg}") from None
    if isinstance(data, dict):
        # {"data": [...]} or {"id": {...}, ...}
        lists = [v for v in data.values() if isinstance(v, list)]
        data = lists[0] if len(lists) == 1 else [dict(v, id=k) if isinstance(v, dict) else v for k, v in data.items()]
    if not isinstance(data, list):
        raise DataError(f"{path}: expected a JSON array of records, got {type(data).__name__}")
    for i, rec in enumerate(data):
        if not isinstance(rec, dict):
            raise DataError(f"{path}: record {i}: expected an object, got {type(rec).__name__}")
    return data


def iter_jsonl(path: Path, encoding: str = "utf-8-sig") -> Iterator[tuple[int, dict]]:
    """``(line number, record)`` for each non-blank line of a JSONL file; every line must hold
    a JSON object. Callers that check fields of their own get the line number to name."""
    with path.open(encoding=encoding) as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as err:
                raise DataError(f"{path}: line {lineno}: invalid JSON: {err.msg}") from None
            if not isinstance(rec, dict):
                raise DataError(f"{path}: line {lineno}: expected an object, got {type(rec).__name__}")
            yield lineno, rec


def _read_jsonl(path: Path, encoding: str) -> list[dict]:
    return [rec for _, rec in iter_jsonl(path, encoding)]


def read_hf(hf_id: str, revision: str, config: str | None, split: str) -> list[dict]:
    """Load a Hugging Face dataset at a pinned revision (needs network and `datasets`)."""
    try:
        import datasets
    except ImportError:
        raise DataError(f"dataset {hf_id}: loading from the Hugging Face hub needs `pip install 'glotbench[hub]'`") from None
    try:
        ds = datasets.load_dataset(hf_id, config, revision=revision, split=split)
    except Exception as err:  # noqa: BLE001 - the hub raises many types
        raise DataError(f"dataset {hf_id}@{revision} split {split}: cannot load: {str(err).splitlines()[0]}") from None
    return [dict(r) for r in ds]
