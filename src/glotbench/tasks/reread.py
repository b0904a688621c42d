"""A task's items read again from its data, for the exporters (``glotbench export``): the exporters
read finished runs and import no task code; the CLI hands them these two functions."""

from __future__ import annotations

from typing import Any

from glotbench.tasks.registry import resolve


def task_choices(name: str, split: str | None) -> dict[int, list[str]]:
    """``idx -> answer options`` of a task's split, read again from its data (empty when the task or
    its data cannot be loaded here: the export still works from the run's own records)."""
    try:
        [task] = resolve([name])
        return {s.index: [str(c) for c in s.choices] for s in task.samples(split or task.spec.dataset.eval_split)
                if s.choices}
    except Exception:  # noqa: BLE001 - choices are extra information
        return {}


def task_items(name: str, split: str | None, ranked: bool) -> dict[int, tuple[dict, Any]]:
    """``idx -> (dataset record, lm-eval target)`` of a task's split, read again from its data; empty
    when the task or its data cannot be loaded here (the export then falls back to the run's own
    fields). The target is the gold option's index when the options were ``ranked`` by log-likelihood
    (lm-eval's ``multiple_choice``: ``doc_to_target`` is the index), the gold answer otherwise."""
    try:
        [task] = resolve([name])
        split = split or task.spec.dataset.eval_split
        raw = task.raw_records(split)
        out = {}
        for s in task.samples(split):
            target: Any = s.target
            if ranked and (k := task.gold_option(s)) is not None:
                target = k
            rec = raw[s.index] if 0 <= s.index < len(raw) and isinstance(raw[s.index], dict) else dict(s.vars)
            out[s.index] = (rec, target)
        return out
    except Exception:  # noqa: BLE001 - the export still works from the run's own records
        return {}
