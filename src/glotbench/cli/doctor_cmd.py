"""`glotbench doctor RUN`: check a run's journal; salvage a damaged one into a fresh file."""

from __future__ import annotations

from pathlib import Path

import typer

from glotbench.cli.nouns import runs_app


@runs_app.command("doctor")
def doctor(
    run: Path = typer.Argument(..., help="Run directory (or its journal.sqlite)."),
    check_only: bool = typer.Option(False, "--check", help="Only check; change nothing."),
) -> None:
    """Check a run journal; if it is damaged, copy every readable row into a fresh journal (the
    damaged file is kept beside it) and report what was lost. Rerunning then resends only the lost requests."""
    from glotbench.engine.lock import RunLock
    from glotbench.engine.salvage import check, salvage
    from glotbench.engine.sqlite_ro import writable
    from glotbench.engine.journal import JOURNAL_NAME
    from glotbench.errors import GlotbenchError

    path = run / JOURNAL_NAME if run.is_dir() else run
    if not path.exists():
        raise GlotbenchError(f"{path}: no journal here (give the run directory that holds {JOURNAL_NAME})")
    cache_bad = _check_cache(path.parent, check_only)
    ok, problem = check(path)
    if ok:
        typer.echo(f"{path}: ok (integrity check passed, every row's checksum holds); nothing to do")
        if cache_bad and check_only:
            raise typer.Exit(1)
        return
    if check_only:
        typer.echo(f"{path}: corrupt ({problem}); salvage it with: glotbench runs doctor {path.parent}")
        raise typer.Exit(1)
    if not writable(path):
        raise GlotbenchError(f"{path}: corrupt ({problem}); it is on storage this process cannot write: copy the run "
                             f"directory somewhere writable and run glotbench runs doctor there")
    with RunLock(path.parent):
        report = salvage(path)
    typer.echo(f"{path}: corrupt ({problem})")
    if not report.salvaged:
        typer.echo("  nothing was readable: a fresh, empty journal replaces it (the rerun sends every request again)")
    for table, n in report.salvaged.items():
        dropped = report.dropped.get(table, 0)
        lost = report.unreadable.get(table, 0) - dropped
        note = f", {lost} unreadable stretch(es) skipped" if lost else ""
        if dropped:
            note += (f", {dropped} row(s) left out (checksum, not readable, or using an answer left out: "
                     f"{'re-sent' if table == 'responses' else 'redone'} by the rerun)")
        typer.echo(f"  {table}: {n} row(s) salvaged{note}")
    if report.kept_as:
        typer.echo(f"  damaged file kept as {report.kept_as}")
    if report.salvaged:
        lost_any = any(report.unreadable.values())
        typer.echo("  lost: " + ("the rows in the unreadable stretches above" if lost_any else "nothing readable was lost")
                   + "; rerun the same `glotbench run` command: it sends only the requests whose answers are not "
                     "in the journal")


def _cache_of(run_dir: Path) -> Path | None:
    """The shared response cache folder the run used: the folder its last session recorded (a cache
    named by $GLOTBENCH_CACHE too), else its config's ``cache``; None when it used none."""
    import json

    from glotbench.engine.response_cache import cache_dir_for

    try:
        results = json.loads((run_dir / "results.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(results, dict):
        return None
    sessions = (results.get("run") or {}).get("sessions") or []
    for entry in reversed(sessions if isinstance(sessions, list) else []):
        folder = (entry.get("shared_cache") or {}).get("folder") if isinstance(entry, dict) else None
        if isinstance(folder, str) and folder:
            return Path(folder)
    config = results.get("config")
    if not isinstance(config, dict) or config.get("no_cache") or not config.get("cache"):
        return None
    try:
        return cache_dir_for(config.get("cache"))
    except Exception:  # noqa: BLE001 - an odd value: no cache to check
        return None


def _check_cache(run_dir: Path, check_only: bool) -> bool:
    """Check the response cache the run used; rebuild it from its sound rows unless ``--check``.
    True when it was damaged."""
    from glotbench.engine.cache_salvage import check_cache, rebuild_cache
    from glotbench.engine.response_cache import CACHE_FILE
    from glotbench.engine.sqlite_ro import writable

    folder = _cache_of(run_dir)
    if folder is None or not (folder / CACHE_FILE).is_file():
        return False
    n, problems = check_cache(folder)
    where = folder / CACHE_FILE
    if not problems:
        typer.echo(f"response cache {where}: ok ({n} row(s) read, each an answer)")
        return False
    typer.echo(f"response cache {where}: damaged ({'; '.join(problems)}); runs read such rows as misses and send "
               f"their requests again")
    if check_only or not writable(where):
        typer.echo(f"  rebuild it from its sound rows with: glotbench runs doctor {run_dir}" if check_only else
                   "  it is on storage this process cannot write: left as it is")
        return True
    kept, aside = rebuild_cache(folder)
    typer.echo(f"  rebuilt: {kept} sound row(s) kept; the damaged file kept as {aside}")
    return True
