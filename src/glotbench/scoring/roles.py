"""A task's headline metric(s), from the roles its metrics declare.

Each :class:`~glotbench.scoring.metrics.Metric` declares a ``role`` (headline / secondary /
diagnostic) and a ``measure`` (the statistic it estimates). A task lists its metrics in order;

* its **headline metrics** are its ``headline``-role metrics, one per measure: the first listed
  wins, so when a task lists the reference's ``cb_accuracy`` before glotbench's ``accuracy``
  (both measure accuracy) the reference's is the headline and glotbench's is secondary;
  diagnostics (parse rates such as ``cb_parsed``) and secondary numbers (error sizes, a
  not-attempted rate) never are;
* its **headline** is the first of them (the task's one number: rank tables, ability aggregates,
  the HTML report); a task with no headline-role metric falls back to its first metric.

Cross-lingual averages take every headline metric of a pair (the Czech-Bench thesis averages
its accuracy *and* macro-F1 rows); ``--metric NAME`` takes that one metric instead.
Generic: no benchmark is named here.
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
