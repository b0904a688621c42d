"""Leaderboard submission files from a run: each benchmark with a leaderboard registers a writer
for its suite (``bench.submission_writer``); ``glotbench submission`` and ``run --predictions-out``
call every writer whose suite the run holds. The generic code knows no leaderboard format."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from glotbench.errors import GlotbenchError, TaskSpecError
from glotbench.registry import Registry

# build(run_dir, out_dir, *, model_name, fill_missing) -> list of summaries, [] when the run holds none of its tasks
SubmissionWriter = Callable[..., list[Any]]

SUBMISSION_WRITERS: Registry[SubmissionWriter] = Registry("submission writer", error=TaskSpecError)


def build_submissions(run_dir: Path, out_dir: Path, *, model_name: str | None = None,
                      fill_missing: bool = False) -> list[Any]:
    """Every registered writer's files for the run; one-line error when no writer has a task in it."""
    summaries: list[Any] = []
    for suite in SUBMISSION_WRITERS.in_order():
        summaries.extend(SUBMISSION_WRITERS.get(suite)(Path(run_dir), Path(out_dir), model_name=model_name,
                                                        fill_missing=fill_missing))
    if not summaries:
        suites = ", ".join(SUBMISSION_WRITERS.in_order()) or "none registered"
        raise GlotbenchError(f"{run_dir}: the run holds no task of a suite with a leaderboard format ({suites})")
    return summaries
