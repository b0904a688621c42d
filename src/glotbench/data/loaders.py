"""Read dataset files (JSON array, JSONL, CSV, TSV, Parquet) or a pinned Hugging Face dataset
into a list of record dicts. Problems name the file, and the line or record at fault.

A file compressed with gzip, xz or bzip2 (``data.jsonl.gz``, ``answers.csv.xz``) is read through
the standard library's decompressor, told by its first bytes (the suffix is not needed); a
Zstandard file, which the standard library of this Python cannot read, is refused with one line
saying how to decompress it."""

from __future__ import annotations

import bz2
import codecs
import csv
import gzip
import hashlib
import io
import json
import lzma
import os
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


# first bytes -> (name, opener of a binary stream); Zstandard has no reader in this Python's stdlib
_MAGIC = ((b"\x1f\x8b", "gzip", gzip.open), (b"\xfd7zXZ\x00", "xz", lzma.open), (b"BZh", "bzip2", bz2.open))
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
COMPRESSED_SUFFIXES = (".gz", ".xz", ".bz2", ".zst")


def compression_of(path: Path) -> str | None:
    """``"gzip"``, ``"xz"``, ``"bzip2"`` (read transparently) or None for a plain file; a
    Zstandard file is a DataError saying how to decompress it."""
    with path.open("rb") as fh:
        head = fh.read(6)
    for magic, name, _ in _MAGIC:
        if head.startswith(magic):
            return name
    if head.startswith(_ZSTD_MAGIC):
        raise DataError(f"{path}: Zstandard-compressed, which glotbench cannot read without an extra package; "
                        f"decompress it first (zstd -d {path.name}) or recompress it with gzip or xz")
    return None


def open_binary(path: Path):
    """``path`` opened for reading bytes, decompressed when it is gzip, xz or bzip2."""
    kind = compression_of(path)
    for _, name, opener in _MAGIC:
        if name == kind:
            return opener(path, "rb")
    return path.open("rb")


def _read_bytes(path: Path, limit: int) -> bytes:
    """At most ``limit`` bytes of the (decompressed) file: a small file that inflates hugely is not read whole."""
    with open_binary(path) as fh:
        try:
            return fh.read(limit)
        except (OSError, EOFError, lzma.LZMAError) as err:
            raise DataError(f"{path}: cannot decompress: {err}") from None


def strip_compression(name: str) -> str:
    """``answers.csv.gz`` -> ``answers.csv`` (the suffix that tells the format)."""
    low = name.lower()
    for suf in COMPRESSED_SUFFIXES:
        if low.endswith(suf):
            return name[: -len(suf)]
    return name


MAX_RECORD_BYTES = 16 << 20  # one JSONL line / CSV row; GLOTBENCH_MAX_RECORD_BYTES overrides
MAX_JSON_FILE_BYTES = 1 << 30  # a JSON array file is read whole; GLOTBENCH_MAX_JSON_FILE_BYTES overrides


def _cap(name: str, default: int) -> int:
    raw = os.environ.get(name)
    try:
        return int(raw) if raw else default
    except ValueError:
        raise DataError(f"environment variable {name}={raw!r}: expected a number of bytes") from None


def _check_encoding(path: Path, encoding: str) -> None:
    try:
        codecs.lookup(encoding)
    except LookupError:
        raise DataError(f"{path}: unknown encoding {encoding!r} (dataset.encoding; e.g. utf-8, utf-8-sig, cp1250)") from None


def read_records(path: Path, fmt: str, encoding: str = "utf-8-sig") -> list[dict]:
    """All records of a dataset file. An empty file, undecodable bytes, a record nested too deeply
    or larger than the record cap is a DataError naming the file and the line or record."""
    _check_encoding(path, encoding)
    records = _read_any(path, fmt, encoding)
    if not records:
        raise DataError(f"{path}: the dataset holds no records")
    return records


def _read_any(path: Path, fmt: str, encoding: str) -> list[dict]:
    if fmt == "json":
        return _read_json(path, encoding)
    if fmt == "jsonl":
        return _read_jsonl(path, encoding)
    if fmt in ("csv", "tsv"):
        return _read_csv(path, encoding, "\t" if fmt == "tsv" else ",")
    if fmt == "parquet":
        try:
            import pyarrow.parquet as pq
        except ImportError:
            raise DataError(f"{path}: reading Parquet needs pyarrow: pip install 'glotbench[parquet]'") from None
        return pq.read_table(path).to_pylist()
    raise DataError(f"{path}: unknown dataset format {fmt!r}")


def _read_csv(path: Path, encoding: str, delimiter: str) -> list[dict]:
    limit = _cap("GLOTBENCH_MAX_RECORD_BYTES", MAX_RECORD_BYTES)
    old = csv.field_size_limit()
    csv.field_size_limit(limit)
    rows: list[dict] = []
    try:
        with open_binary(path) as raw, io.TextIOWrapper(raw, encoding=encoding, newline="") as fh:
            reader = csv.DictReader(fh, delimiter=delimiter)
            try:
                for r in reader:
                    rows.append(dict(r))
            except csv.Error as err:
                raise DataError(f"{path}: line {reader.line_num}: {err} (record cap {limit} bytes: "
                                f"GLOTBENCH_MAX_RECORD_BYTES)") from None
            except UnicodeDecodeError as err:
                raise DataError(f"{path}: record {len(rows)} (after line {reader.line_num}): not valid {encoding}: "
                                f"{err.reason}") from None
            except (OSError, EOFError, lzma.LZMAError) as err:  # a truncated or corrupt compressed file
                raise DataError(f"{path}: cannot decompress: {err}") from None
    finally:
        csv.field_size_limit(old)
    return rows


def _read_json(path: Path, encoding: str) -> list[dict]:
    limit = _cap("GLOTBENCH_MAX_JSON_FILE_BYTES", MAX_JSON_FILE_BYTES)
    size = path.stat().st_size
    if size > limit:
        raise DataError(f"{path}: {size} bytes, over the {limit}-byte cap for JSON array files "
                        f"(convert it to JSONL, or raise GLOTBENCH_MAX_JSON_FILE_BYTES)")
    raw = _read_bytes(path, limit + 1)
    if len(raw) > limit:
        raise DataError(f"{path}: more than {limit} bytes decompressed, over the {limit}-byte cap for JSON array files "
                        f"(convert it to JSONL, or raise GLOTBENCH_MAX_JSON_FILE_BYTES)")
    try:
        text = raw.decode(encoding)
    except UnicodeDecodeError as err:
        line = raw.count(b"\n", 0, err.start) + 1
        raise DataError(f"{path}: line {line}: not valid {encoding} (byte {err.start}: {err.reason})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise DataError(f"{path}: line {err.lineno}: invalid JSON: {err.msg}") from None
    except RecursionError:
        raise DataError(f"{path}: a record is nested too deeply to read") from None
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
    _check_encoding(path, encoding)
    limit = _cap("GLOTBENCH_MAX_RECORD_BYTES", MAX_RECORD_BYTES)
    with open_binary(path) as fh:  # bytes, a bounded line at a time: a huge line never sits in memory
        lineno = 0
        while True:
            try:
                raw = fh.readline(limit + 1)
            except (OSError, EOFError, lzma.LZMAError) as err:
                raise DataError(f"{path}: line {lineno + 1}: cannot decompress: {err}") from None
            if not raw:
                break
            lineno += 1
            if len(raw) > limit and not raw.endswith(b"\n"):
                raise DataError(f"{path}: line {lineno}: record larger than the {limit}-byte cap "
                                f"(raise GLOTBENCH_MAX_RECORD_BYTES if it is meant to be)")
            try:
                line = raw.decode(encoding)
            except UnicodeDecodeError as err:
                raise DataError(f"{path}: line {lineno}: not valid {encoding} (column {err.start + 1}: {err.reason})") from None
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as err:
                raise DataError(f"{path}: line {lineno}: invalid JSON: {err.msg}") from None
            except RecursionError:
                raise DataError(f"{path}: line {lineno}: record nested too deeply to read") from None
            if not isinstance(rec, dict):
                raise DataError(f"{path}: line {lineno}: expected an object, got {type(rec).__name__}")
            yield lineno, rec


def _read_jsonl(path: Path, encoding: str) -> list[dict]:
    return [rec for _, rec in iter_jsonl(path, encoding)]


def read_hf(hf_id: str, revision: str, config: str | None, split: str) -> list[dict]:
    """Load a Hugging Face dataset at a pinned revision (needs network and `datasets`)."""
    from glotbench.data.hub_folder import require_hub

    require_hub(f"dataset {hf_id}")
    import datasets

    try:
        ds = datasets.load_dataset(hf_id, config, revision=revision, split=split)
    except Exception as err:  # noqa: BLE001 - the hub raises many types
        raise DataError(f"dataset {hf_id}@{revision} split {split}: cannot load: {str(err).splitlines()[0]}") from None
    return [dict(r) for r in ds]
