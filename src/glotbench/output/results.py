"""Write results.json and samples.jsonl for a run directory."""

from __future__ import annotations

import functools
import json
import platform
import re
import sys
from importlib import metadata
from json.encoder import encode_basestring as _quote  # json.dumps's str writer (ensure_ascii=False)
from pathlib import Path

from glotbench.version import __version__
from glotbench.json_codec import COMPACT, dumps_indented

TRACKED_PACKAGES = ("glotbench", "llama_cpp_python", "openai", "anthropic", "httpx", "numpy", "scikit-learn", "jinja2", "pydantic")


def package_versions() -> dict[str, str]:
    """Versions of Python, the platform and the tracked packages (a copy: read once per process, as
    the packages a process has imported do not change under it; reading the metadata took 6-14 ms)."""
    return dict(_package_versions())


@functools.cache
def _package_versions() -> dict[str, str]:
    out = {"python": sys.version.split()[0], "platform": platform.platform()}
    for name in TRACKED_PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    out["glotbench"] = __version__
    return out


def write_json(path: Path, data: dict) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_bytes(dumps_indented(data))
    tmp.replace(path)


_IDENTITY_KEYS = tuple(f'"{k}"' for k in ("run_key", "task", "sample_id", "idx", "status"))
# any of _IDENTITY_KEYS in a record's UTF-8 (one pass; `any(k in record ...)` made five)
_IDENTITY_KEY_BYTES = re.compile(b'"(?:run_key|task|sample_id|idx|status)"')


def sample_line(run_key: str, task: str, sample_id: str, idx: int, status: str, record: str) -> str:
    """The samples.jsonl line of one journal row: ``json.dumps({identity columns, **record})`` with
    compact separators. The record's JSON text (the journal writes it compact; an older journal's,
    spaced, keeps its spaces) is spliced in unparsed; a record that may hold an identity key itself
    (an old journal) is parsed and merged as dict order merges it."""
    if any(k in record for k in _IDENTITY_KEYS) or not record.startswith("{"):
        row = {"run_key": run_key, "task": task, "sample_id": sample_id, "idx": idx, "status": status,
               **json.loads(record)}
        return json.dumps(row, ensure_ascii=False, default=str, separators=COMPACT)
    head = json.dumps({"run_key": run_key, "task": task, "sample_id": sample_id, "idx": idx, "status": status},
                      ensure_ascii=False, separators=COMPACT)
    rest = record[1:].lstrip()
    return head[:-1] + ("}" if rest == "}" else "," + rest)


def _line_bytes(heads: dict, run_key, task, sample_id, idx, status, record: bytes) -> bytes:
    """:func:`sample_line`'s UTF-8, for a record read as UTF-8 bytes; the common row (a compact record
    with no identity key, text identity columns) is spliced as bytes, its head's run and task part
    built once per task (``heads``); any other row takes :func:`sample_line` itself."""
    t = type
    if (t(idx) is int and t(sample_id) is str and t(status) is str and t(run_key) is str and t(task) is str
            and (record[:2] == b'{"' or record == b"{}") and not _IDENTITY_KEY_BYTES.search(record)):
        record.decode("utf-8")  # what reading the column as text checked (a row that is not UTF-8 raises)
        head = heads.get((run_key, task))
        if head is None:
            head = heads[(run_key, task)] = (f'{{"run_key":{_quote(run_key)},"task":{_quote(task)},"sample_id":'
                                             ).encode("utf-8")
        line = f'{_quote(sample_id)},"idx":{int.__repr__(idx)},"status":{_quote(status)}'.encode("utf-8")
        return head + line + (b"}\n" if record == b"{}" else b"," + record[1:] + b"\n")
    return (sample_line(run_key, task, sample_id, idx, status, record.decode("utf-8")) + "\n").encode("utf-8")


def export_samples(journal, path: Path, run_keys: dict[str, str] | None = None) -> int:
    """Write every sample record (one JSON object per line) of ``journal`` (anything with
    ``iter_sample_rows()``, the journal's unparsed rows: output/ does not depend on the engine).
    ``run_keys``: task -> run_key filter."""
    n = 0
    tmp = path.with_suffix(path.suffix + ".tmp")
    heads: dict = {}
    with tmp.open("wb") as fh:
        lines: list[bytes] = []
        for row in journal.iter_sample_rows(record="CAST(record AS BLOB)"):
            if run_keys is not None and run_keys.get(row[1]) != row[0]:
                continue
            lines.append(_line_bytes(heads, *row))
            n += 1
            if len(lines) >= 512:
                fh.writelines(lines)
                lines.clear()
        fh.writelines(lines)
    tmp.replace(path)
    return n
