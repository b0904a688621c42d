"""Read a finished run directory for exporters: results.json plus the sample records of that run."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from glotbench.data.loaders import iter_jsonl
from glotbench.errors import DataError, GlotbenchError
from glotbench.output.run_result import migrate
from glotbench.sample_record import SampleRecord


def read_results(run_dir: Path) -> dict:
    path = Path(run_dir) / "results.json"
    if not path.exists():
        raise DataError(f"{run_dir}: no results.json here; run `glotbench run` to the end (or rerun it) first")
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise DataError(f"{path}: not valid JSON ({err})") from None
    return migrate(raw, str(path)) if isinstance(raw, dict) else raw  # any version's layout as this one writes it


def iter_run_samples(run_dir: Path, results: dict | None, journal: Any = None) -> Iterator[SampleRecord]:
    """The run's sample records, typed: from ``journal`` (anything with ``iter_samples()``; output/
    does not import the engine), only the run keys results.json names (all of them without a
    results.json); without a journal, from samples.jsonl."""
    keys = None if results is None else \
        {n: (t.get("fingerprint") or {}).get("id") for n, t in (results.get("tasks") or {}).items()}
    if journal is not None:
        for rec in journal.iter_samples():
            if keys is None or keys.get(rec["task"]) == rec["run_key"]:
                yield SampleRecord.from_json(rec)
        return
    path = Path(run_dir) / "samples.jsonl"
    if not path.exists():
        raise GlotbenchError(f"{run_dir}: neither a journal nor samples.jsonl here")
    for _, row in iter_jsonl(path, encoding="utf-8"):
        yield SampleRecord.from_json(row)
