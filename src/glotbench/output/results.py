"""Write results.json and samples.jsonl for a run directory."""

from __future__ import annotations

import functools
import json
import platform
import sys
from importlib import metadata
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


def export_samples(journal, path: Path, run_keys: dict[str, str] | None = None) -> int:
    """Write every sample record (one JSON object per line) of ``journal`` (anything with
    ``iter_sample_rows()``, the journal's unparsed rows: output/ does not depend on the engine).
    ``run_keys``: task -> run_key filter."""
    n = 0
    tmp = path.with_suffix(path.suffix + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for row in journal.iter_sample_rows():
            if run_keys is not None and run_keys.get(row[1]) != row[0]:
                continue
            fh.write(sample_line(*row) + "\n")
            n += 1
    tmp.replace(path)
    return n
