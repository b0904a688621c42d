"""`glotbench analyze ...`: analyses of a finished run. The group is generic; its sub-commands come
from the benchmark packages (``bench.command("analyze", module)``), each reading the run's records
with :func:`load_run_records`."""

from __future__ import annotations

from pathlib import Path

import typer

from glotbench.cli import NounGroup, app
from glotbench.errors import DataError
from glotbench.sample_record import SampleRecord

analyze_app = typer.Typer(cls=NounGroup, help="Analyses of a finished run (reads its journal; no model calls unless --judge).",
                          no_args_is_help=True)
app.add_typer(analyze_app, name="analyze")

def load_run_records(run_dir: Path) -> list[SampleRecord]:
    """Scored sample records of the run: from journal.sqlite (only the run keys results.json
    names, when it exists), else from samples.jsonl."""
    from glotbench.engine.journal import Journal
    from glotbench.engine.journal import JOURNAL_NAME
    from glotbench.output.run_records import iter_run_samples, read_results

    journal_path, samples_path, results_path = run_dir / JOURNAL_NAME, run_dir / "samples.jsonl", run_dir / "results.json"
    results = read_results(run_dir) if results_path.is_file() else None
    if results is not None and not isinstance(results.get("tasks"), dict):
        raise DataError(f"{results_path}: not a glotbench results file (no 'tasks')")
    if not journal_path.is_file() and not samples_path.is_file():
        raise DataError(f"{run_dir}: no {JOURNAL_NAME} or samples.jsonl here (not a glotbench run directory)")
    journal = Journal(journal_path) if journal_path.is_file() else None
    try:
        return [r for r in iter_run_samples(run_dir, results, journal) if r.is_scored]
    finally:
        if journal is not None:
            journal.close()
