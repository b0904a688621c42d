"""Per-item views of sample records: a metric's per-item value, and each item's outcome.

Every function takes the metric as its declared :class:`~glotbench.scoring.metrics.Metric`
(read from the run's results.json with :func:`glotbench.report.runs.metric_of`), never by name:
a metric is per-item when it is the mean of a per-item value (``exact_match``, ``mean:<key>``)
or declares its per-item value (accuracy: gold == prediction, an unparseable answer counts as
wrong). Corpus metrics (macro-F1, MCC) have no per-item value; :func:`item_vector` returns None.

An item's outcome (:func:`outcome`) comes from, in this order: a judge's grade when the item was
judged (CORRECT / INCORRECT / NOT_ATTEMPTED: the grade is the verdict, whatever the headline);
the headline's per-item value; for a corpus headline, whether the answer equals the gold, which
is *not* the metric (:func:`outcome_basis` says which, so a page never labels those counts as
MCC or macro-F1).
"""

from __future__ import annotations

from typing import Any

from glotbench.sample_record import SampleRecord
from glotbench.scoring.circular import ITEM, KEY, ROTATION, circular_items
from glotbench.scoring.metrics import Metric, ScoredItem

OUTCOMES = ("correct", "partial", "wrong", "not_attempted", "unparseable", "error")
# a judge's grade -> the outcome it is (SimpleQA-style grades, any case, space or underscore)
_GRADE_OUTCOME = {"CORRECT": "correct", "INCORRECT": "wrong", "NOT_ATTEMPTED": "not_attempted"}


def _item(rec: SampleRecord) -> ScoredItem:
    return ScoredItem(gold=rec.gold, pred=rec.pred, values=rec.value_map, metadata=rec.metadata_map)


def item_value(rec: SampleRecord, metric: Metric | None) -> float | None:
    if metric is None or not metric.per_item_mean:
        return None
    return metric.item_value(_item(rec))


def item_vector(records: list[SampleRecord], metric: Metric | None) -> list[float] | None:
    """Per-item values of ``metric`` over ``records`` (None when it is a corpus metric)."""
    if metric is None or not metric.per_item_mean:
        return None
    return [item_value(r, metric) for r in records]


def is_circular(metric: Metric | None) -> bool:
    """Whether ``metric`` is CircularEval's (``run --circular``): a value per dataset item, read from
    all its rotations, not per record."""
    return metric is not None and metric.key == KEY


def plain_order(ids, *runs: dict[str, SampleRecord]) -> list[str]:
    """``ids`` without the rotations a ``--circular`` run added (rotation k > 0): a run's metrics
    read the dataset's order (rotation 0, which keeps the item's id), so a paired comparison does
    too; a run without ``--circular`` keeps every id."""
    return [i for i in ids if not any((r[i].metadata_map.get(ROTATION) if i in r else None) for r in runs)]


def circular_pairs(records_a, records_b) -> tuple[list[float], list[float], int]:
    """Two ``--circular`` runs' CircularEval values on the items both have complete (every rotation
    scored), in A's order, and how many items either has that the other lacks or left incomplete."""
    ga, gb = circular_values(records_a), circular_values(records_b)
    both = [g for g in ga if g in gb]
    return [ga[g] for g in both], [gb[g] for g in both], len(ga.keys() | gb.keys()) - len(both)


def circular_values(records) -> dict[str, float]:
    """A ``--circular`` run's CircularEval value per dataset item (1.0 when every rotation of its
    options was answered right, else 0.0), from its scored records; an item with a rotation that
    has no score is left out, as the run's ``circular_accuracy`` leaves it out."""
    rotations = [_item(r) for r in records if r.is_scored and r.metadata_map.get(ITEM) is not None]
    items, _incomplete = circular_items(rotations)
    return {str(it.metadata[ITEM]): it.values[KEY] for it in items}


def is_binary(values: list[float | None]) -> bool:
    return bool(values) and all(v in (0.0, 1.0) for v in values)


def scored_items(records: list[SampleRecord]) -> list[ScoredItem]:
    return [_item(r) for r in records]


def judge_grade_outcome(rec: SampleRecord) -> str | None:
    """The outcome a judge's grade says, for a judged item whose answer (``pred``) is the grade."""
    if rec.judgments is None and rec.judge is None:
        return None
    if not isinstance(rec.pred, str):
        return None
    return _GRADE_OUTCOME.get(rec.pred.strip().upper().replace(" ", "_"))


def outcome_basis(records: list[SampleRecord], metric: Metric | None) -> str:
    """What the outcome counts of ``records`` are read from: ``"judge grade"``, the headline's
    name (its per-item value), or ``"answer = gold"`` (a corpus headline: not the metric)."""
    if records and all(judge_grade_outcome(r) is not None for r in records if r.is_scored and r.pred is not None):
        if any(r.is_scored and r.pred is not None for r in records):
            return "judge grade"
    if metric is not None and metric.per_item_mean:
        return metric.name
    return "answer = gold"


def outcome(rec: SampleRecord, metric: Metric | None) -> str:
    """error | unparseable | correct | partial | wrong | not_attempted: a judged item's grade,
    else the task's headline metric per item, else (corpus headline) answer == gold."""
    if not rec.is_scored:
        return "error"
    graded = judge_grade_outcome(rec)
    if graded is not None:
        return graded
    if rec.pred is None:
        return "unparseable"
    v = item_value(rec, metric) if metric else None
    if v is None and metric is not None and metric.per_item_mean:
        return "unparseable"  # the headline's own rule could not read the answer (Czech-Bench's cb_*)
    if v is None:  # corpus metric: answer == gold (outcome_basis says so; not the metric)
        v = float(str(rec.pred) == str(rec.gold))
    if metric is not None and not metric.higher_is_better:  # an error or a rate of failures: 0 is right
        return "correct" if v == 0 else "wrong"
    if v >= 1.0:
        return "correct"
    return "partial" if v > 0 else "wrong"


def outcome_counts(records: list[SampleRecord], metric: Metric | None) -> dict[str, int]:
    counts = {k: 0 for k in OUTCOMES}
    for r in records:
        counts[outcome(r, metric)] += 1
    return counts


def raw_output(rec: SampleRecord) -> str:
    outs = rec.output_list
    texts = []
    for o in outs:
        if isinstance(o, dict):
            if o.get("text") is not None:  # a multi-turn item's answers name their turn
                texts.append(f"[turn {o['turn']}] {o['text']}" if o.get("turn") else str(o["text"]))
            elif "logprob" in o:
                texts.append(f"logprob {o['logprob']:.4f}")
    return "\n---\n".join(texts)


def reasoning_of(rec: SampleRecord) -> str:
    outs = rec.output_list
    return "\n---\n".join(str(o["reasoning"]) for o in outs if isinstance(o, dict) and o.get("reasoning"))


def prompt_text(prompt: Any) -> str:
    """A prompt (chat messages or plain text) as readable text."""
    if isinstance(prompt, list):
        parts = []
        for m in prompt:
            if isinstance(m, dict):
                parts.append(f"[{m.get('role', '?')}]\n{m.get('content', '')}")
            else:
                parts.append(str(m))
        return "\n\n".join(parts)
    return "" if prompt is None else str(prompt)
