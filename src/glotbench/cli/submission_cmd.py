"""`glotbench submission`: leaderboard submission files from a run directory."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from glotbench.cli.nouns import runs_app
from glotbench.settings import RunSettings
from glotbench.cli.option_groups import options, setting_option


@runs_app.command("submission")
@options((RunSettings, "output!"), about={"output": "Folder for the submission files (<task>.json)."})
def submission(
    run_dir: Path = typer.Argument(..., help="A run directory (holds results.json / samples.jsonl / journal.sqlite)."),
    model_name: Optional[str] = setting_option(None, "--model-name", help="Model name in the files (default: the run's model id)."),
    fill_missing: bool = setting_option(False, "--fill-missing", help="Give items the run never reached the fallback label too."),
    *, output: Path,
) -> None:
    """Write leaderboard submission files for the tasks the run scored on --split test."""
    from rich.console import Console
    from rich.table import Table

    from glotbench.output.submission_writers import build_submissions

    summaries = build_submissions(run_dir, output, model_name=model_name, fill_missing=fill_missing)
    table = Table(title="submission files")
    for col in ("task", "items", "predicted", "fallback", "missing", "fallback label", "file"):
        table.add_column(col, justify="right" if col in ("items", "predicted", "fallback", "missing") else "left")
    for s in summaries:
        if s.path is None:
            table.add_row(s.task, "", "", "", "", "", f"skipped: {s.skipped}")
        else:
            table.add_row(s.task, str(s.n_items), str(s.n_predicted), str(s.n_fallback), str(s.n_missing),
                          s.fallback_label or "", str(s.path))
    console = Console(soft_wrap=True)
    console.print(table)
    for s in summaries:
        if s.n_fallback:
            console.print(f"{s.task}: {s.n_fallback} unparseable or failed item(s) got the train majority label {s.fallback_label!r}",
                          style="yellow")
        if s.n_missing and not fill_missing:
            console.print(f"{s.task}: {s.n_missing} of {s.n_items} item(s) were not run; the leaderboard will reject this file "
                          "(finish the run, or pass --fill-missing)", style="yellow")
    if not any(s.path for s in summaries):
        raise typer.Exit(1)
