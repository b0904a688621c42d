"""Comparisons over finished runs: cross-lingual gaps, rank movement, paired tests.

Glue only: the statistics live in :mod:`glotbench.report.analysis` (crosslingual, ranks, paired);
this module picks the numbers out of run directories and hands them over.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from glotbench.report.analysis.crosslingual import CrosslingualTable, GapIntervals, PairItems, crosslingual_table, gap_intervals
from glotbench.report.analysis.paired import mcnemar, paired_bootstrap
from glotbench.report.analysis.ranks import RankComparison, rank_movement
from glotbench.report.analysis.robustness import drop_rate
from glotbench.errors import DataError
from glotbench.sample_record import SampleRecord
from glotbench.report.items import circular_pairs, is_binary, is_circular, item_vector, plain_order, scored_items
from glotbench.report.runs import (
    RunData,
    headline_metrics,
    metric_of,
    metric_value,
    primary_metric,
    scores_by_model,
    unavailable,
)

# ----------------------------------------------------------------------------- cross-lingual


@dataclass
class CrosslingualResult:
    table: CrosslingualTable
    pairs: list[tuple[str, str, str]]  # (pair name, native task, English/counterpart task)
    notes: list[str] = field(default_factory=list)
    # (model, pair name) -> (native ci95, counterpart ci95) as each run states them (None: no interval,
    # as for a published score or a score that counts as missing)
    intervals: dict[tuple[str, str], tuple[list | None, list | None]] = field(default_factory=dict)
    # item-paired bootstrap intervals of each difference, relative gap and model average (None: not asked)
    gaps: GapIntervals | None = None
    # (model, pair name) -> (native status, counterpart status) where a side is no score ("invalid", "failed")
    invalid: dict[tuple[str, str], tuple[str | None, str | None]] = field(default_factory=dict)


def _usable(task_result: dict, metric: str) -> float | None:
    """The score, or None when the run marked it invalid (over 50% unparseable), as Czech-Bench's "-"."""
    if task_result.get("status") in ("invalid", "failed"):
        return None
    return metric_value(task_result, metric)


def _interval(task_result: dict, metric: str) -> list | None:
    """The run's 95% bootstrap interval of the score (None for a score :func:`_usable` drops, or none stated)."""
    if _usable(task_result, metric) is None:
        return None
    ci = ((task_result.get("metrics") or {}).get(metric) or {}).get("ci95")
    return list(ci) if isinstance(ci, (list, tuple)) and len(ci) == 2 and None not in ci else None


def rankable(task_result: dict, metric: str) -> float | None:
    """The score ``compare --ranks`` may average, or None when the run says it is no score: a failed
    task, or over 50% unparseable by the rule of the metric ranked on (the headline's rule for a
    headline metric: the run's own ``invalid``; glotbench's extractor for another metric)."""
    status = task_result.get("status")
    if status == "failed":
        return None
    headlines = set(task_result.get("headline_metrics") or []) | {task_result.get("headline")}
    if status == "invalid" and (metric in headlines or "n_unparseable_extractor" not in task_result):
        return None
    if metric not in headlines and task_result.get("n_scored"):
        if (task_result.get("n_unparseable_extractor") or 0) / task_result["n_scored"] > 0.5:
            return None
    return metric_value(task_result, metric)


_rankable = rankable


def _no_score(task_result: dict) -> str | None:
    status = task_result.get("status")
    return status if status in ("invalid", "failed") else None


def _pair_items(label: str, pair: str, group: str, m: str, native: tuple[dict, list[SampleRecord]],
                english: tuple[dict, list[SampleRecord]]) -> PairItems:
    """The pair's items for the gap's bootstrap: both tasks' scored items joined on item id."""
    (res_n, recs_n), (res_e, recs_e) = native, english
    a, b = _by_id(recs_n), _by_id(recs_e)
    ids = [i for i in a if i in b and a[i].is_scored and b[i].is_scored]
    ra, rb = [a[i] for i in ids], [b[i] for i in ids]
    ma, mb = metric_of(res_n, m), metric_of(res_e, m)
    va, vb = item_vector(ra, ma), item_vector(rb, mb)
    if va is not None and vb is not None:
        vec = tuple(np.array([np.nan if v is None else v for v in vs], dtype=float) for vs in (va, vb))
        return PairItems(label, pair, group, len(ids), vectors=vec)  # type: ignore[arg-type]
    items_a, items_b = scored_items(ra), scored_items(rb)

    def score(idx: np.ndarray) -> tuple[float, float]:
        return ma([items_a[int(j)] for j in idx]), mb([items_b[int(j)] for j in idx])

    return PairItems(label, pair, group, len(ids), score=score)


def crosslingual_from_runs(runs: list[RunData], metric: str | None = None, *, n_boot: int = 0,
                           seed: int = 0) -> CrosslingualResult:
    """Every task whose ``counterpart`` is also in the same model's runs becomes a pair.

    The native side is the task whose language is not English (if both or neither are English,
    the task naming the counterpart is the native side). One row per pair and metric: by default
    the native task's headline metrics (one per measure: the thesis' accuracy and macro-F1 rows;
    no parse rate, no second rule's copy of the same statistic; see
    :mod:`glotbench.scoring.roles`) that the counterpart reports too; with ``metric``, that one
    metric. A metric that is not non-negative and higher-is-better (error sizes, MCC) is left
    out with a note. A score the run marked invalid counts as missing (shown as invalid, left out of
    the average and counted).

    ``n_boot`` > 0 (runs loaded with their samples): the item-paired bootstrap interval of each
    difference and relative gap (both tasks' items joined on item id, the same draws on both sides)
    and of each model's average gap (:func:`glotbench.report.analysis.crosslingual.gap_intervals`, ``seed``).
    """
    per_model = scores_by_model(runs)
    samples: dict[tuple[str, str], list[SampleRecord]] = {}
    for r in runs:
        for t in r.tasks:
            recs = r.samples_of(t)
            if recs:
                samples[(r.label, t)] = recs
    pair_defs: dict[tuple[str, str], None] = {}
    notes: list[str] = []
    for label, tasks in per_model.items():
        for name, t in tasks.items():
            cp = t.get("counterpart")
            if not cp:
                continue
            if cp not in tasks:
                note = f"{name}: counterpart {cp} is not in the runs of {label}"
                if note not in notes:
                    notes.append(note)
                continue
            native, english = name, cp
            if t.get("language") == "en" and tasks[cp].get("language") != "en":
                native, english = cp, name
            pair_defs.setdefault((native, english), None)
    if not pair_defs:
        raise DataError("no cross-lingual pairs in these runs: a pair needs a task with `counterpart: OTHER` "
                        "and OTHER in the runs of the same model" + (f" ({'; '.join(notes)})" if notes else ""))
    rows = []
    pairs = []
    intervals: dict[tuple[str, str], tuple[list | None, list | None]] = {}
    invalid: dict[tuple[str, str], tuple[str | None, str | None]] = {}
    to_resample: list[PairItems] = []
    complete: dict[str, bool] = {}
    for native, english in pair_defs:
        metric_names: list[str] = []
        defs = {}
        for tasks in per_model.values():
            if native in tasks and english in tasks:
                wanted = [metric] if metric else headline_metrics(tasks[native])
                for m in wanted:
                    if m in (tasks[native].get("metrics") or {}) and m in (tasks[english].get("metrics") or {}) \
                            and m not in metric_names:
                        metric_names.append(m)
                        defs[m] = metric_of(tasks[native], m)
        if not metric_names:
            notes.append(f"{native}: no {'metric ' + metric if metric else 'headline metric'} in both {native} and {english}")
        for m in metric_names:
            if not defs[m].higher_is_better or not defs[m].nonnegative:
                notes.append(f"{native}: metric {m} left out (the relative gap needs non-negative higher-is-better scores)")
                continue
            pair = f"{native} {m}"
            pairs.append((pair, native, english))
            for label, tasks in per_model.items():
                if native in tasks and english in tasks:
                    sn, se = _usable(tasks[native], m), _usable(tasks[english], m)
                    rows.append((label, pair, sn, se))
                    intervals[(label, pair)] = (_interval(tasks[native], m), _interval(tasks[english], m))
                    bad = (_no_score(tasks[native]), _no_score(tasks[english]))
                    if any(bad):
                        invalid[(label, pair)] = bad
                    if n_boot > 0 and sn is not None and se is not None:
                        recs_n, recs_e = samples.get((label, native)), samples.get((label, english))
                        if recs_n and recs_e:
                            to_resample.append(_pair_items(label, pair, f"{native} vs {english}", m,
                                                           (tasks[native], recs_n), (tasks[english], recs_e)))
                        else:
                            complete[label] = False
    if not rows:
        raise DataError(f"no cross-lingual pair has {'metric ' + metric if metric else 'a headline metric'} on both sides"
                        + (f" ({'; '.join(notes)})" if notes else ""))
    gaps = None
    if n_boot > 0:
        gaps = gap_intervals(to_resample, n_resamples=n_boot, seed=seed, complete=complete)
        for label, ok in complete.items():
            if not ok:
                notes.append(f"{label}: a score without item records (a published score, or a run without "
                             "samples.jsonl): its gap has no interval, nor its average")
    for (label, pair), (bn, be) in invalid.items():
        sides = " and ".join(f"{side} {st}" for side, st in (("native", bn), ("counterpart", be)) if st)
        notes.append(f"{label}: {pair}: {sides}: no score, left out of the average (counted under 'missing')")
    return CrosslingualResult(crosslingual_table(rows), pairs, notes, intervals, gaps, invalid)


# ----------------------------------------------------------------------------- ranks


@dataclass
class RanksResult:
    comparison: RankComparison
    a_label: str
    b_label: str
    a_tasks: list[str]
    b_tasks: list[str]
    metric_a: str
    metric_b: str
    notes: list[str] = field(default_factory=list)


def _tasks_for(name: str, available: list[str]) -> list[str]:
    """A task name, or a suite (registered suite, or the ``name.`` prefix of task names)."""
    if name in available:
        return [name]
    members: list[str] = []
    try:
        from glotbench.tasks.registry import suites

        members = [t for t in suites().get(name, []) if t in available]
    except Exception:  # noqa: BLE001 - a broken task folder must not stop a comparison of finished runs
        members = []
    if not members:
        members = [t for t in available if t.startswith(name + ".")]
    if not members:
        raise DataError(f"{name!r} is neither a task nor a suite in these runs (tasks: {', '.join(available)})")
    return members


def _side_scores(per_model: dict[str, dict[str, dict]], tasks: list[str], metric: str | None,
                 notes: list[str], side: str) -> tuple[dict[str, float], str]:
    """Score per model: the task's metric, or the mean over a suite's tasks (each task's headline metric)."""
    out: dict[str, float] = {}
    used = metric or ""
    for label, res in per_model.items():
        vals = []
        missing = [t for t in tasks if t not in res]
        if missing:
            notes.append(f"{label}: left out of {side} (no results for {', '.join(missing)})")
            continue
        for t in tasks:
            m = metric or primary_metric(res[t])
            used = used or m or ""
            v = _rankable(res[t], m)  # an invalid score (over 50% unparseable) or a failed task is no score
            if v is None:
                break
            vals.append(float(v))
        else:
            out[label] = float(np.mean(vals))
            continue
        status = res[t].get("status")
        why = (f"its {t} score is {status}" if status == "failed" or (status == "invalid" and metric_value(res[t], m) is not None)
               else f"its {t} {m} is over 50% unparseable" if metric_value(res[t], m) is not None
               else f"no {metric or 'score'} for {t}")
        notes.append(f"{label}: left out of {side} ({why})")
    if len(tasks) > 1:
        used = f"mean of headline metrics over {len(tasks)} tasks" if metric is None else f"mean {metric} over {len(tasks)} tasks"
    return out, used


def ranks_from_runs(runs: list[RunData], a: str, b: str, metric: str | None = None, style: str = "arrow") -> RanksResult:
    per_model = scores_by_model(runs)
    available = list(dict.fromkeys(t for res in per_model.values() for t in res))
    ta, tb = _tasks_for(a, available), _tasks_for(b, available)
    notes: list[str] = []
    sa, ma = _side_scores(per_model, ta, metric, notes, "A")
    sb, mb = _side_scores(per_model, tb, metric, notes, "B")
    if len(set(sa) & set(sb)) < 1:
        raise DataError(f"no model has scores for both {a!r} and {b!r}")
    # Lower-is-better only when every metric compared (as the runs define it) is lower-is-better.
    used = [metric_of(res[t], metric or primary_metric(res[t])) for res in per_model.values() for t in ta + tb if t in res]
    higher = not (used and all(m is not None and not m.higher_is_better for m in used))
    cmp = rank_movement(sa, sb, higher_is_better=higher, style=style)  # type: ignore[arg-type]
    return RanksResult(cmp, a, b, ta, tb, ma, mb, notes)


# ----------------------------------------------------------------------------- paired


@dataclass
class PairedRow:
    task: str
    metric: str
    n_items: int  # items both runs scored
    n_left_out: int  # items in either run that are missing, or an error, on the other side
    score_a: float
    score_b: float
    difference: float  # a - b
    low: float
    high: float
    mcnemar_b: int | None = None  # A right, B wrong
    mcnemar_c: int | None = None  # A wrong, B right
    p_value: float | None = None
    method: str | None = None
    invalid: str | None = None  # "A", "B" or "A and B": that side's score is invalid (no number, left out)
    drop_rate: float | None = None  # 1 - B / A: the performance drop rate when B is A's run perturbed (--perturb)
    drop_low: float | None = None
    drop_high: float | None = None

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def _by_id(records: list[SampleRecord]) -> dict[str, SampleRecord]:
    return {r.id: r for r in records}


def _data_files(task_result: dict) -> str | None:
    """The data part of a task's fingerprint, without what a variant adds (``+pool:``, ``+rag:``)."""
    fp = task_result.get("fingerprint")
    data = fp.get("data") if isinstance(fp, dict) else None
    return str(data).split("+", 1)[0] if data else None


def variant_pairs(tasks_a: dict[str, dict], tasks_b: dict[str, dict], notes: list[str]) -> list[tuple[str, str]]:
    """Tasks of two runs that are variants of the same items: ``X`` and ``X.v`` (the prompt variants
    glotbench names so: ``task`` and ``task.base``), reading the same data
    files where both runs recorded them. Items are then joined on their ids."""
    out = []
    for ta, ra in tasks_a.items():
        for tb, rb in tasks_b.items():
            if not (ta.startswith(tb + ".") or tb.startswith(ta + ".")):
                continue
            da, db = _data_files(ra), _data_files(rb)
            if da and db and da != db:
                notes.append(f"{ta} and {tb} read different data ({da} vs {db}): not paired")
                continue
            out.append((ta, tb))
    return out


def counterpart_pairs(tasks_a: dict[str, dict], tasks_b: dict[str, dict]) -> list[tuple[str, str]]:
    """A task of A and its ``counterpart`` (the same items in another language) in B, either way round."""
    out = [(ta, ra["counterpart"]) for ta, ra in tasks_a.items() if ra.get("counterpart") in tasks_b]
    out += [(rb["counterpart"], tb) for tb, rb in tasks_b.items()
            if rb.get("counterpart") in tasks_a and (rb["counterpart"], tb) not in out
            and (tb, rb["counterpart"]) not in out]  # one run against itself: each pair once
    return out


def paired_rows(run_a: RunData, run_b: RunData, n_boot: int = 10_000, seed: int = 0,
                tasks: list[str] | None = None, invalid: list[PairedRow] | None = None) -> tuple[list[PairedRow], list[str]]:
    """Per task both runs hold, per metric: A - B with a paired bootstrap interval; McNemar for 0/1 metrics.

    When the runs share no task name, a task and its variant on the same items are paired
    (:func:`variant_pairs`: a base model's ``task.base`` against an aligned model's
    ``task``, the alignment-tax comparison), over the metrics both report.
    Items are joined on (task, sample_id); an item that is an error (or absent) in either run
    is left out of both sides and counted in ``n_left_out``.

    A task and its ``counterpart`` (the same items in another language) are paired on their shared
    item ids when the runs share no task name, and always when A and B are the same run directory
    (one model's native task against its counterpart; a run with no counterparts is paired task by
    task with itself).

    A score either run marks as no score (invalid: over 50% unparseable by the metric's rule, or a
    failed task) gets no number and no test: its row goes to ``invalid`` (when given) and a note
    counts them.

    A ``--circular`` run's metrics are compared on the items they are computed over: the dataset's
    order (rotation 0) for the plain ones, one value per item from all its rotations for
    ``circular_accuracy`` (tests/test_compare_circular.py).
    """
    notes: list[str] = []
    same_run = Path(run_a.path).resolve() == Path(run_b.path).resolve()
    common = [] if same_run else [(t, t) for t in run_a.tasks if t in run_b.tasks]
    if not common and not same_run:
        common = variant_pairs(run_a.tasks, run_b.tasks, notes)
    if not common:
        common = counterpart_pairs(run_a.tasks, run_b.tasks)
    if not common and same_run:  # a run against itself with no counterparts: each task with itself
        common = [(t, t) for t in run_a.tasks]
    if tasks:
        common = [(ta, tb) for ta, tb in common if ta in tasks or tb in tasks]
    if not common:
        raise DataError(f"{run_a.path} and {run_b.path} share no task (nor a task and its variant on the same items, "
                        f"such as X and X.base, nor a task and its counterpart): A has {', '.join(run_a.tasks) or 'none'}, B has {', '.join(run_b.tasks) or 'none'}"
                        + (f" ({'; '.join(notes)})" if notes else ""))
    rows: list[PairedRow] = []
    n_invalid = 0
    for task_a, task_b in common:
        task = task_a if task_a == task_b else f"{task_a} vs {task_b}"
        ra, rb = _by_id(run_a.samples_of(task_a)), _by_id(run_b.samples_of(task_b))
        if not ra or not rb:
            notes.append(f"{task}: no samples.jsonl records in {'A' if not ra else 'B'}; left out")
            continue
        ids = [i for i in ra if i in rb and ra[i].is_scored and rb[i].is_scored]
        if not ids:
            notes.append(f"{task}: no item scored in both runs")
            continue
        plain_ids = plain_order(ids, ra, rb)  # --circular: the metrics read the dataset's order (rotation 0)
        recs_a, recs_b = [ra[i] for i in plain_ids], [rb[i] for i in plain_ids]
        plain_left_out = len(plain_order(set(ra) | set(rb), ra, rb)) - len(plain_ids)
        metrics = list(run_a.tasks[task_a].get("metrics") or {}) or ["accuracy"]
        if task_a != task_b:
            metrics = [m for m in metrics if m in (run_b.tasks[task_b].get("metrics") or {})]
        for m in metrics:
            mdef = metric_of(run_a.tasks[task_a], m)
            if not mdef.available:
                notes.append(unavailable(task, mdef))
                continue
            n_m, left_m = len(plain_ids), plain_left_out
            if is_circular(mdef):  # CircularEval: one value per dataset item, from all its rotations
                va, vb, left_m = circular_pairs(ra.values(), rb.values())
                n_m = len(va)
                if not va:
                    notes.append(f"{task} {m}: no item with every rotation scored in A and B; left out")
                    continue
            else:
                va, vb = item_vector(recs_a, mdef), item_vector(recs_b, mdef)
            if va is not None and vb is not None:
                a = np.array([np.nan if v is None else v for v in va], dtype=float)
                b = np.array([np.nan if v is None else v for v in vb], dtype=float)
                if np.isnan(a).all() or np.isnan(b).all():  # e.g. a parse-rule metric where nothing parsed
                    side = "A and B" if np.isnan(a).all() and np.isnan(b).all() else ("A" if np.isnan(a).all() else "B")
                    notes.append(f"{task} {m}: no item has a value in {side} (nothing parsed by its rule); left out")
                    continue
                bad = _invalid_side(run_a.tasks[task_a], run_b.tasks[task_b], m)
                if bad:
                    n_invalid += 1
                    if invalid is not None:
                        invalid.append(PairedRow(task, m, n_m, left_m, None, None, None, None, None,  # type: ignore[arg-type]
                                                 invalid=bad))
                    continue
                boot = paired_bootstrap(a, b, metric_fn=np.nanmean, n=n_boot, seed=seed)
                sa, sb = float(np.nanmean(a)) if not np.isnan(a).all() else math.nan, \
                    float(np.nanmean(b)) if not np.isnan(b).all() else math.nan
                row = PairedRow(task, m, n_m, left_m, sa, sb, boot.difference, boot.low, boot.high)
                if mdef.higher_is_better:  # a drop rate of an error rate or a calibration error means nothing
                    dr = drop_rate(a, b, metric_fn=np.nanmean, n=n_boot, seed=seed)
                    row.drop_rate, row.drop_low, row.drop_high = dr.drop_rate, dr.low, dr.high
                if is_binary(va) and is_binary(vb):
                    mc = mcnemar(va, vb)
                    row.mcnemar_b, row.mcnemar_c, row.p_value, row.method = mc.b, mc.c, mc.p_value, mc.method
            else:  # corpus metric (macro-F1, MCC): resample item indices, recompute on each side
                fn = mdef
                items = scored_items(recs_a) + scored_items(recs_b)
                k = len(recs_a)

                def corpus(idx: np.ndarray, _fn=fn, _items=items) -> float:
                    return _fn([_items[int(j)] for j in idx])

                bad = _invalid_side(run_a.tasks[task_a], run_b.tasks[task_b], m)
                if bad:
                    n_invalid += 1
                    if invalid is not None:
                        invalid.append(PairedRow(task, m, k, left_m, None, None, None, None, None,  # type: ignore[arg-type]
                                                 invalid=bad))
                    continue
                boot = paired_bootstrap(np.arange(k), np.arange(k) + k, metric_fn=corpus,
                                        n=min(n_boot, 2000), seed=seed)
                row = PairedRow(task, m, k, left_m, corpus(np.arange(k)), corpus(np.arange(k) + k),
                                boot.difference, boot.low, boot.high)
                if math.isnan(row.score_a) or math.isnan(row.score_b):
                    notes.append(f"{task} {m}: undefined in {'A' if math.isnan(row.score_a) else 'B'} on these items; left out")
                    continue
                if mdef.higher_is_better:
                    dr = drop_rate(np.arange(k), np.arange(k) + k, metric_fn=corpus, n=min(n_boot, 2000), seed=seed)
                    row.drop_rate, row.drop_low, row.drop_high = dr.drop_rate, dr.low, dr.high
            rows.append(row)
        if run_a.tasks[task_a].get("per_class") and run_b.tasks[task_b].get("per_class"):
            if _no_score(run_a.tasks[task_a]) or _no_score(run_b.tasks[task_b]):
                notes.append(f"{task}: per-class F1 not compared (a side's score is invalid or failed)")
            else:
                rows.extend(per_class_rows(task, recs_a, recs_b, plain_left_out, n_boot, seed))
    if n_invalid:
        notes.append(f"{n_invalid} score(s) invalid in A or B (over 50% unparseable by the metric's rule, or a failed "
                     "task): shown as invalid, no difference or test computed, left out")
    return rows, notes


def per_class_rows(task: str, recs_a: list[SampleRecord], recs_b: list[SampleRecord], left_out: int,
                   n_boot: int, seed: int) -> list[PairedRow]:
    """Three rows per gold class of a label task (results.json ``per_class``): its precision, recall and F1
    (``precision[CLASS]``, ``recall[CLASS]``, ``f1[CLASS]``), counted as scoring/per_class.py counts them
    (scikit-learn's precision_recall_fscore_support, zero_division=0: an item without a gold class is left
    out, a prediction that is no class is a miss), A - B with a paired bootstrap interval over the items
    both runs scored (the same items on both sides: ``recs_a[i]`` is ``recs_b[i]``'s)."""
    from glotbench.scoring.per_class import class_rates

    k = len(recs_a)
    classes = sorted({str(r.gold) for r in recs_a if r.gold is not None})
    index = {c: i for i, c in enumerate(classes)}
    both = recs_a + recs_b
    gold = np.array([-1 if r.gold is None else index[str(r.gold)] for r in both], dtype=np.intp)
    pred = np.array([index.get(None if r.pred is None else str(r.pred), len(classes)) for r in both], dtype=np.intp)

    def rates(idx) -> tuple[np.ndarray, ...]:  # (precision, recall, f1) of every class over the items idx
        return class_rates(gold[np.asarray(idx, dtype=np.intp)], pred[np.asarray(idx, dtype=np.intp)], len(classes))

    side_a, side_b = rates(np.arange(k)), rates(np.arange(k) + k)
    rows = []
    for ci, c in enumerate(classes):
        for si, stat in enumerate(("precision", "recall", "f1")):
            boot = paired_bootstrap(np.arange(k), np.arange(k) + k, metric_fn=lambda idx, _c=ci, _s=si: float(rates(idx)[_s][_c]),
                                    n=min(n_boot, 2000), seed=seed)
            rows.append(PairedRow(task, f"{stat}[{c}]", k, left_out, float(side_a[si][ci]), float(side_b[si][ci]),
                                  boot.difference, boot.low, boot.high))
    return rows


def _invalid_side(result_a: dict, result_b: dict, metric: str) -> str | None:
    """"A", "B", "A and B" when that run's score of ``metric`` is no score (:func:`_rankable`), else None."""
    bad = [side for side, res in (("A", result_a), ("B", result_b)) if _rankable(res, metric) is None]
    return " and ".join(bad) or None
