"""``compare --duels``: duel scoring over finished runs (the statistics live in
:mod:`glotbench.report.analysis.duels`; this module picks the items out of run directories).

Per task (every task any run holds), the models are the runs' labels; each pair is joined on
sample id over the items scored in both runs, and an item whose per-item value is undefined on a
side (nothing parsed by the metric's own rule) is left out of that pair. A model whose score of
the task is no score (invalid: over 50% unparseable, or a failed task; :func:`rankable`) takes
part in no duel of that task: it is listed as invalid and counted, never averaged.
"""

from __future__ import annotations

import math
import zlib

import numpy as np

from glotbench.report.analysis.duels import Duel, DuelResult, decide, duel_test, task_shares
from glotbench.errors import DataError
from glotbench.report.comparisons import rankable
from glotbench.report.items import circular_pairs, is_binary, is_circular, item_vector, plain_order, scored_items
from glotbench.report.runs import RunData, metric_of, primary_metric, task_names, unavailable


def _pair_seed(seed: int, task: str, a: str, b: str) -> int:
    return (seed * 1_000_003 + zlib.crc32(f"{task}\0{a}\0{b}".encode("utf-8"))) % (2**32)


def duels_from_runs(runs: list[RunData], metric: str | None = None, alpha: float = 0.05, n_resamples: int = 10_000,
                    seed: int = 0, notes: list[str] | None = None) -> DuelResult:
    notes = notes if notes is not None else []
    labels = [r.label for r in runs]
    if len(set(labels)) != len(labels):
        raise DataError("compare --duels: two run directories show the same model ("
                        + ", ".join(sorted({x for x in labels if labels.count(x) > 1})) + "); give one run per model")
    result = DuelResult(duels=[], shares={}, alpha=alpha)
    for task in task_names(runs):
        holders = [r for r in runs if task in r.tasks]
        m = metric or primary_metric(holders[0].tasks[task])
        if m is None:
            notes.append(f"{task}: no metric; left out")
            continue
        result.metrics[task] = m
        valid = []
        for r in holders:
            if m not in (r.tasks[task].get("metrics") or {}):
                notes.append(f"{task}: {r.label} has no metric {m}; left out")
            elif rankable(r.tasks[task], m) is None:
                result.invalid.setdefault(r.label, []).append(task)
            else:
                valid.append(r)
        mdef = metric_of(valid[0].tasks[task], m) if valid else None
        if mdef is not None and not mdef.available and len(valid) >= 2:
            notes.append(unavailable(task, mdef))
            continue
        if len(valid) < 2 or mdef is None:
            if holders and len(holders) > 1:
                notes.append(f"{task}: fewer than two valid scores; no duel")
            continue
        duels: list[Duel] = []
        by_id = {r.label: {s.sample_id: s for s in r.samples_of(task) if s.is_scored} for r in valid}
        for i, ra in enumerate(valid):
            for rb in valid[i + 1:]:
                da, db = by_id[ra.label], by_id[rb.label]
                ids = plain_order([x for x in da if x in db], da, db)  # --circular: the dataset's order
                recs_a, recs_b = [da[x] for x in ids], [db[x] for x in ids]
                if is_circular(mdef):  # CircularEval: one value per dataset item, from all its rotations
                    va, vb, _ = circular_pairs(da.values(), db.values())
                else:
                    va, vb = item_vector(recs_a, mdef), item_vector(recs_b, mdef)
                pseed = _pair_seed(seed, task, ra.label, rb.label)
                if va is not None and vb is not None:
                    keep = [j for j in range(len(va)) if va[j] is not None and vb[j] is not None]
                    va, vb = [va[j] for j in keep], [vb[j] for j in keep]
                    if not keep:
                        notes.append(f"{task}: {ra.label} vs {rb.label}: no item with a value on both sides; no duel")
                        continue
                    sa, sb = float(np.mean(va)), float(np.mean(vb))
                    test, p = duel_test(va, vb, is_binary(va) and is_binary(vb), None, len(keep), n_resamples, pseed)
                    k = len(keep)
                else:
                    items = scored_items(recs_a) + scored_items(recs_b)
                    k = len(ids)
                    if k == 0:
                        notes.append(f"{task}: {ra.label} vs {rb.label}: no item scored in both; no duel")
                        continue

                    def diff(idx, _items=items, _k=k, _fn=mdef) -> float:
                        return _fn([_items[int(j)] for j in idx]) - _fn([_items[int(j) + _k] for j in idx])

                    sa, sb = mdef([items[j] for j in range(k)]), mdef([items[j + k] for j in range(k)])
                    if math.isnan(sa) or math.isnan(sb):
                        notes.append(f"{task}: {ra.label} vs {rb.label}: {m} undefined on these items; no duel")
                        continue
                    fast = None
                    try:  # the metric's vectorised resampling: the same draws on both sides, so paired
                        sa_stats = mdef.resample_stats(items[:k], n_resamples, pseed)
                        sb_stats = mdef.resample_stats(items[k:], n_resamples, pseed)
                        if sa_stats is not None and sb_stats is not None:
                            fast = np.asarray(sa_stats, dtype=float) - np.asarray(sb_stats, dtype=float)
                    except (ValueError, TypeError, KeyError):  # no fast form for these items: the loop below
                        fast = None
                    test, p = duel_test(None, None, False, diff, k, min(n_resamples, 2000), pseed, fast)
                duels.append(Duel(task, m, ra.label, rb.label, sa, sb, k, test, p))
        decide(duels, mdef.higher_is_better, alpha)
        result.duels.extend(duels)
        for model, share in task_shares(duels, [r.label for r in valid]).items():
            result.shares.setdefault(model, {})[task] = share
    return result
