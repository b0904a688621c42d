"""A task's headline metric(s), from the roles its metrics declare (docs/scorers-and-metrics.md).

Its **headline metrics** are its ``headline``-role metrics, one per measure, the first listed
winning; its **headline** is the first of them, and a task with no headline-role metric falls back
to its first metric. Generic: no benchmark is named here.
"""

from __future__ import annotations

from collections.abc import Iterable

from glotbench.scoring.metrics import Metric


def headline_metrics(metrics: Iterable[Metric]) -> list[str]:
    """Names of the headline metrics, in the task's order (one per measure)."""
    seen: set[str] = set()
    out: list[str] = []
    for m in metrics:
        if m.role != "headline" or m.measured in seen:
            continue
        seen.add(m.measured)
        out.append(m.name)
    return out


def headline_metric(metrics: Iterable[Metric]) -> str | None:
    """The task's headline: its first headline metric, else its first metric (None when it has none)."""
    metrics = list(metrics)
    heads = headline_metrics(metrics)
    if heads:
        return heads[0]
    return metrics[0].name if metrics else None


def metric_roles(metrics: Iterable[Metric]) -> dict[str, str]:
    """``{name: role}`` as this task uses it: a headline-role metric that duplicates an earlier
    metric's measure is ``secondary`` here."""
    metrics = list(metrics)
    heads = set(headline_metrics(metrics))
    return {m.name: ("headline" if m.name in heads else ("diagnostic" if m.role == "diagnostic" else "secondary"))
            for m in metrics}
