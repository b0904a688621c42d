"""`glotbench merge RUN`: merge a sharded run's shard journals into the run's journal by hand."""

from __future__ import annotations

from pathlib import Path

import typer

from glotbench.cli.nouns import runs_app
from glotbench.cli.option_groups import JournalOptions, options


@runs_app.command("merge")
@options((JournalOptions, "wait"))
def merge(run_dir: Path = typer.Argument(..., help="Run directory holding shards/K/journal.sqlite files."),
          *, wait: bool = False) -> None:
    """Merge shard journals into RUN/journal.sqlite (idempotent: a second merge changes nothing).
    Rerun `glotbench run` with the same settings afterwards to write results.json from it."""
    from glotbench.engine.journal import Journal
    from glotbench.engine.lock import RunLock
    from glotbench.engine.shards.assign import shard_journals
    from glotbench.engine.shards.merge import merge_shards
    from glotbench.errors import GlotbenchError

    sources = shard_journals(run_dir)
    if not sources:
        raise GlotbenchError(f"{run_dir}: no shard journals (shards/K/journal.sqlite) to merge")
    lock = RunLock(run_dir).acquire(wait=wait)
    try:
        journal = Journal(run_dir / "journal.sqlite")
        try:
            counts = merge_shards(journal, sources)
        finally:
            journal.close()
    finally:
        lock.release()
    typer.echo(f"merged {counts.shards} shard journal(s) into {run_dir / 'journal.sqlite'}: "
               f"{counts.responses} new response(s), {counts.samples} item record(s), {counts.judgments} judgment(s), "
               f"{counts.errors} error row(s)")
