"""Turn scored sample records into per-task and per-slice metrics with bootstrap intervals."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from glotbench.sample_record import SampleRecord
from glotbench.scoring.circular import CIRCULAR_METRIC, ROTATION, circular_summary
from glotbench.scoring.metrics import ScoredItem, bootstrap_cis, get_metric
from glotbench.scoring.per_class import per_class
from glotbench.scoring.resample import same_items
from glotbench.scoring.roles import headline_metric, headline_metrics

FLAG_UNPARSEABLE = 0.20  # above: the score is flagged "*"
INVALID_UNPARSEABLE = 0.50  # above: the score is reported invalid (Czech-Bench convention)


def _clean(x: float) -> float | None:
    return None if x is None or (isinstance(x, float) and (math.isnan(x) or math.isinf(x))) else round(float(x), 6)


def _metrics(items: list[ScoredItem], metric_names: list[str], n_boot: int, seed: int) -> dict[str, Any]:
    fns = [get_metric(name, where=f"metric {name!r}") for name in metric_names]
    nan = (float("nan"), float("nan"))
    with same_items():  # the metrics of one slice read the same list: its codes are read once
        values = [fn(items) if items else float("nan") for fn in fns]
        cis = bootstrap_cis(items, fns, n_resamples=n_boot, seed=seed) if items else [nan] * len(fns)
    return {name: {"value": _clean(value), "ci95": [_clean(lo), _clean(hi)]}
            for name, value, (lo, hi) in zip(metric_names, values, cis)}


def _kind(metric) -> str:
    kind = metric.kind
    return kind if isinstance(kind, str) else str(getattr(kind, "name", kind))


def _unparsed(item: ScoredItem, parsed_key: str | None) -> bool:
    """Unparseable under the headline's own rule (its per-item ``parsed_key``), else glotbench's extractor."""
    if parsed_key is not None and item.values.get(parsed_key) is not None:
        return not item.values[parsed_key]
    return item.pred is None


def summarise_task(records, metric_names: list[str], slice_by: list[str], total: int,
                   n_boot: int = 1000, seed: int = 0, circular: bool = False) -> dict[str, Any]:
    """Counts, metrics with intervals and per-slice metrics of one task's records.

    ``records`` may be any iterable (SampleRecords, RecordBriefs, journal rows or samples.jsonl lines): it is read
    once and only each scored record's gold, pred, values and slice fields are kept, so a run's
    records never all sit in memory at once (docs/performance.md).

    The ``*`` (over 20% unparseable) and ``invalid`` (over 50%) flags count unparseable answers by
    the rule of the task's headline metric: its ``parsed_key`` when it declares one (Czech-Bench's
    ``cb_*``: the reference's parse), else glotbench's extractor (no prediction). A task whose
    every item that ran failed (no answer scored) is ``failed``, never ``ok``.

    ``circular`` (``run --circular``): the records are every rotation of each item's options; the
    metrics, counts of unparseable answers and slices are those of rotation 0 (the dataset's order:
    the plain score), and ``circular_accuracy`` joins the metrics (tasks/circular.py)."""
    items: list[ScoredItem] = []
    rotated: list[ScoredItem] = []  # --circular: the scored rotations other than the dataset's order
    n_errors = 0
    first_error = None
    for r in records:
        if type(r) is tuple:  # a RecordBrief (sample_record.py): (idx, status, gold, pred, values, metadata, error, ...)
            _, status, gold, pred, values, metadata, error = r[:7]
        else:
            r = r if isinstance(r, SampleRecord) else SampleRecord.from_json(r)
            status, gold, pred, values, metadata, error = r.status, r.gold, r.pred, r.values, r.metadata, r.error
        if status == "scored":
            item = ScoredItem(gold=gold, pred=pred, values=values or {}, metadata=metadata or {})
            (rotated if circular and item.metadata.get(ROTATION) else items).append(item)
        elif status == "error":
            n_errors += 1
            first_error = first_error or error
    defs = [get_metric(name, where=f"metric {name!r}") for name in metric_names]
    defs = [d if d.name == name else dataclasses.replace(d, name=name) for d, name in zip(defs, metric_names)]
    defs = [dataclasses.replace(d, signature=d.signature_of(items)) if d.signature_of and items else d for d in defs]
    head = headline_metric(defs)
    parsed_key = next((d.parsed_key for d in defs if d.name == head), None)
    no_pred = sum(1 for i in items if i.pred is None)  # glotbench's extractor found no answer
    unparseable = no_pred if parsed_key is None else sum(1 for i in items if _unparsed(i, parsed_key))
    frac = unparseable / len(items) if items else 0.0
    status = "invalid" if frac > INVALID_UNPARSEABLE else ("flagged" if frac > FLAG_UNPARSEABLE else "ok")
    if len(items) + len(rotated) + n_errors < total:
        status = "incomplete"
    if not items and n_errors:  # every item run failed: no score at all, whatever the metrics' NaN says
        status = "failed"
    summary: dict[str, Any] = {
        "n_items": total,
        "n_scored": len(items),
        "n_errors": n_errors,
        "n_unparseable": unparseable,
        "unparseable_rate": round(frac, 4),
        # whose parse the count and the flag follow: the headline's own rule, or glotbench's extractor
        "unparseable_by": parsed_key or "extractor",
        "n_unparseable_extractor": no_pred,
        "headline": head,
        "headline_metrics": headline_metrics(defs),
        "status": status,
        "flag": {"ok": "", "flagged": "*", "invalid": "invalid", "incomplete": "incomplete", "failed": "failed"}[status],
        "metrics": _metrics(items, metric_names, n_boot, seed),
        **({"first_error": str(first_error)[:500]} if status == "failed" and first_error else {}),
        # each metric's definition (how computed, direction, format): finished runs are read without
        # importing the code that defined it (see glotbench.scoring.metrics.Metric.from_dict)
        "metric_definitions": {d.name: d.to_dict() for d in defs},
        "slices": {},
    }
    if any(_kind(d) == "label" for d in defs) and items:  # a label task: Czech-Bench §4.3.4's per-class table
        summary["per_class"] = per_class(items, n_boot, seed)
    if circular:
        summary.update(circular_summary(items + rotated, n_boot, seed))
        summary["metrics"].update(summary["circular"].pop("metrics"))
        summary["metric_definitions"][CIRCULAR_METRIC.name] = CIRCULAR_METRIC.to_dict()
    for field in slice_by:
        groups: dict[str, list[ScoredItem]] = {}
        for it in items:
            groups.setdefault(str(it.metadata.get(field)), []).append(it)
        summary["slices"][field] = {
            value: {"n": len(group), "metrics": _metrics(group, metric_names, n_boot, seed)}
            for value, group in sorted(groups.items())
        }
    return summary
