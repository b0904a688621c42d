"""Read a finished run directory for exporters: results.json plus the sample records of that run."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from glotbench.errors import GlotbenchError


def read_results(run_dir: Path) -> dict:
    path = Path(run_dir) / "results.json"
    if not path.exists():
        raise GlotbenchError(f"{run_dir}: no results.json here; run `glotbench run` to the end (or rerun it) first")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise GlotbenchError(f"{path}: not valid JSON ({err})") from None


def iter_run_samples(run_dir: Path, results: dict) -> Iterator[dict]:
    """The run's sample records, from the journal (only the keys results.json names), else samples.jsonl."""
    from glotbench.engine.journal import Journal
    from glotbench.engine.session import JOURNAL_NAME

    run_dir = Path(run_dir)
    keys = {n: (t.get("fingerprint") or {}).get("id") for n, t in (results.get("tasks") or {}).items()}
    if (run_dir / JOURNAL_NAME).exists():
        j = Journal(run_dir / JOURNAL_NAME)
        try:
            for rec in j.iter_samples():
                if keys.get(rec["task"]) == rec["run_key"]:
                    yield rec
        finally:
            j.close()
        return
    path = run_dir / "samples.jsonl"
    if not path.exists():
        raise GlotbenchError(f"{run_dir}: neither a journal nor samples.jsonl here")
    with path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if line.strip():
                try:
                    yield json.loads(line)
                except json.JSONDecodeError as err:
                    raise GlotbenchError(f"{path}: record {n}: not valid JSON ({err})") from None
