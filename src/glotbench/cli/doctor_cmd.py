"""`glotbench doctor RUN`: check a run's journal; salvage a damaged one into a fresh file."""

from __future__ import annotations

from pathlib import Path

import typer

from glotbench.cli import app


@app.command()
def doctor(
    run: Path = typer.Argument(..., help="Run directory (or its journal.sqlite)."),
    check_only: bool = typer.Option(False, "--check", help="Only check; change nothing."),
) -> None:
    """Check a run journal; if it is damaged, copy every readable row into a fresh journal (the
    damaged file is kept beside it) and report what was lost. Rerunning then resends only the lost requests."""
    from glotbench.engine.lock import RunLock
    from glotbench.engine.salvage import check, salvage
    from glotbench.engine.session import JOURNAL_NAME
    from glotbench.errors import GlotbenchError

    path = run / JOURNAL_NAME if run.is_dir() else run
    if not path.exists():
        raise GlotbenchError(f"{path}: no journal here (give the run directory that holds {JOURNAL_NAME})")
    ok, problem = check(path)
    if ok:
        typer.echo(f"{path}: ok (integrity check passed); nothing to do")
        return
    if check_only:
        typer.echo(f"{path}: corrupt ({problem}); salvage it with: glotbench doctor {path.parent}")
        raise typer.Exit(1)
    with RunLock(path.parent):
        report = salvage(path)
    typer.echo(f"{path}: corrupt ({problem})")
    if not report.salvaged:
        typer.echo("  nothing was readable: a fresh, empty journal replaces it (the rerun sends every request again)")
    for table, n in report.salvaged.items():
        lost = report.unreadable.get(table, 0)
        note = f", {lost} unreadable stretch(es) skipped" if lost else ""
        typer.echo(f"  {table}: {n} row(s) salvaged{note}")
    if report.kept_as:
        typer.echo(f"  damaged file kept as {report.kept_as}")
    if report.salvaged:
        lost_any = any(report.unreadable.values())
        typer.echo("  lost: " + ("the rows in the unreadable stretches above" if lost_any else "nothing readable was lost")
                   + "; rerun the same `glotbench run` command: it sends only the requests whose answers are not "
                     "in the journal")
