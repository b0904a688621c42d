"""Turn scored sample records into per-task and per-slice metrics with bootstrap intervals."""

from __future__ import annotations

import math
from typing import Any

from glotbench.sample_record import SampleRecord
from glotbench.scoring.metrics import ScoredItem, bootstrap_ci, get_metric

FLAG_UNPARSEABLE = 0.20  # above: the score is flagged "*"
INVALID_UNPARSEABLE = 0.50  # above: the score is reported invalid (Czech-Bench convention)


def _typed(records: list) -> list[SampleRecord]:
    """SampleRecords as they are; journal rows / samples.jsonl lines (dicts) read into one."""
    return [r if isinstance(r, SampleRecord) else SampleRecord.from_json(r) for r in records]


def _items(records: list[SampleRecord]) -> list[ScoredItem]:
    return [ScoredItem(gold=r.gold, pred=r.pred, values=r.value_map, metadata=r.metadata_map) for r in records]


def _clean(x: float) -> float | None:
    return None if x is None or (isinstance(x, float) and (math.isnan(x) or math.isinf(x))) else round(float(x), 6)


def metric_block(records: list, metric_names: list[str], *, n_boot: int = 1000, seed: int = 0) -> dict[str, Any]:
    items = _items(_typed(records))
    out: dict[str, Any] = {}
    for name in metric_names:
        fn = get_metric(name, where=f"metric {name!r}")
        value = fn(items) if items else float("nan")
        lo, hi = bootstrap_ci(items, fn, n_resamples=n_boot, seed=seed) if items else (float("nan"), float("nan"))
        out[name] = {"value": _clean(value), "ci95": [_clean(lo), _clean(hi)]}
    return out


def summarise_task(records: list, metric_names: list[str], slice_by: list[str], total: int,
                   n_boot: int = 1000, seed: int = 0) -> dict[str, Any]:
    records = _typed(records)
    scored = [r for r in records if r.is_scored]
    errors = [r for r in records if r.status == "error"]
    unparseable = sum(1 for r in scored if r.pred is None)
    frac = unparseable / len(scored) if scored else 0.0
    status = "invalid" if frac > INVALID_UNPARSEABLE else ("flagged" if frac > FLAG_UNPARSEABLE else "ok")
    if len(scored) + len(errors) < total:
        status = "incomplete"
    summary: dict[str, Any] = {
        "n_items": total,
        "n_scored": len(scored),
        "n_errors": len(errors),
        "n_unparseable": unparseable,
        "unparseable_rate": round(frac, 4),
        "status": status,
        "flag": {"ok": "", "flagged": "*", "invalid": "invalid", "incomplete": "incomplete"}[status],
        "metrics": metric_block(scored, metric_names, n_boot=n_boot, seed=seed),
        # each metric's definition (how computed, direction, format): finished runs are read without
        # importing the code that defined it (see glotbench.scoring.metrics.Metric.from_dict)
        "metric_definitions": {name: get_metric(name).to_dict() for name in metric_names},
        "slices": {},
    }
    for field in slice_by:
        groups: dict[str, list[SampleRecord]] = {}
        for r in scored:
            groups.setdefault(str(r.metadata_map.get(field)), []).append(r)
        summary["slices"][field] = {
            value: {"n": len(rs), "metrics": metric_block(rs, metric_names, n_boot=n_boot, seed=seed)}
            for value, rs in sorted(groups.items())
        }
    return summary
