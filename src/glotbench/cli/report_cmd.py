"""`glotbench report`: one self-contained HTML file from run directories."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from glotbench.cli.nouns import runs_app
from glotbench.settings import RunSettings
from glotbench.cli.option_groups import options, setting_option


@runs_app.command("report")
@options((RunSettings, "output"), about={"output": "HTML file to write (default: report.html)."})
def report(
    run_dirs: list[Path] = typer.Argument(..., help="Run directories (each written by `glotbench run -o DIR`)."),
    title: Optional[str] = setting_option(None, "--title", help="Page title (default: the model names)."),
    max_samples: int = setting_option(2000, "--max-samples", help="Items per task and run embedded in the sample browser."),
    *, output: Path = Path("report.html"),
) -> None:
    """Scores with intervals, per-slice plots, error counts and a sample browser, in one offline HTML file."""
    from glotbench.report.html import write_report

    path = write_report(list(run_dirs), output, title=title, max_samples_per_task=max_samples)
    size = path.stat().st_size
    Console().print(f"wrote {path} ({size / 1024:.0f} KiB); open it in a browser, no network needed")
