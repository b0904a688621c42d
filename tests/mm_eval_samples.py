"""Real MM-Eval samples for the embedded-model tests (skip with the reason when the data is absent)."""

from __future__ import annotations

import pytest


def mm_eval_samples(tasks: tuple[str, ...], per_task: int):
    """``(task, sample)`` for the first ``per_task`` samples of each task, in order."""
    from glotbench.errors import DataError
    from glotbench.tasks.registry import resolve

    out = []
    for name in tasks:
        task = resolve([name])[0]
        try:
            samples = task.samples(None, per_task)
        except DataError as exc:
            pytest.skip(f"MM-Eval data not available (../shared/data): {exc}")
        out.extend((task, s) for s in samples)
    return out
