"""CircularEval's aggregate (OpenCompass): an item counts as right only when every rotation of its
options was answered right. The rotations themselves are built by :mod:`glotbench.tasks.circular`;
each scored rotation carries, in its metadata, its item's id (``circular_of``), its offset
(``rotation``) and how many rotations the item has (``rotations``)."""

from __future__ import annotations

import math
from typing import Any

from glotbench.scoring.metrics import Metric, ScoredItem, bootstrap_cis

ITEM = "circular_of"  # metadata: the id of the item a rotation belongs to
ROTATION = "rotation"  # metadata: k, the rotation's offset (0: the dataset's order)
ROTATIONS = "rotations"  # metadata: how many rotations the item has (its number of options)
KEY = "circular_correct"  # per item: 1.0 when every rotation is right

CIRCULAR_METRIC = Metric("circular_accuracy", key=KEY, measure="circular_accuracy", role="secondary",
                         description="CircularEval (OpenCompass): share of items answered right in every rotation "
                                     "of their options (run --circular)")


def circular_items(rotations: list[ScoredItem]) -> tuple[list[ScoredItem], int]:
    """One item per dataset item whose rotations all scored (``values[KEY]``: 1.0 when every one has
    gold == prediction, as ``accuracy`` counts), in first-seen order; and how many items were left
    out because a rotation has no score (an error after retries)."""
    groups: dict[str, list[ScoredItem]] = {}
    for it in rotations:
        groups.setdefault(str(it.metadata.get(ITEM)), []).append(it)
    out, incomplete = [], 0
    for group in groups.values():
        want = group[0].metadata.get(ROTATIONS) or len(group)
        if len({it.metadata.get(ROTATION) for it in group}) < want:
            incomplete += 1
            continue
        right = all(str(it.gold) == str(it.pred) for it in group)
        out.append(ScoredItem(gold=group[0].gold, pred=group[0].pred, values={KEY: 1.0 if right else 0.0},
                              metadata={ITEM: group[0].metadata.get(ITEM)}))
    return out, incomplete


def _clean(x: float) -> float | None:
    return None if x is None or math.isnan(x) or math.isinf(x) else round(float(x), 6)


def circular_summary(rotations: list[ScoredItem], n_boot: int, seed: int) -> dict[str, Any]:
    """results.json's ``circular`` block (counts) and ``circular_accuracy`` with its bootstrap interval
    over items (under ``circular.metrics``; the caller moves it into the task's metrics)."""
    items, incomplete = circular_items(rotations)
    value = CIRCULAR_METRIC(items) if items else float("nan")
    lo, hi = bootstrap_cis(items, [CIRCULAR_METRIC], n_resamples=n_boot, seed=seed)[0] if items else (math.nan, math.nan)
    return {"circular": {"n_items": len(items), "n_incomplete": incomplete, "n_rotations": len(rotations),
                         "n_right_every_rotation": int(sum(it.values[KEY] for it in items)),
                         "metrics": {CIRCULAR_METRIC.name: {"value": _clean(value), "ci95": [_clean(lo), _clean(hi)]}}}}
