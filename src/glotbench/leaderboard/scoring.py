"""Scoring a validated submission against a task's hidden references. The only reader of gold.

A leaderboard task names one of the project's registered metrics
(:data:`glotbench.scoring.metrics.METRICS`), the same objects a run computes: the leaderboard has
no metric code of its own. An item is scored as a run scores it: the registered scorer that feeds
the metric turns (prediction, reference) into ``(pred, values)``, and the metric is computed over
the :class:`ScoredItem` s; the interval is :func:`glotbench.scoring.metrics.bootstrap_ci`.

Which metrics a task may use is decided from the registries, not from a list kept here: a metric
is *computable from a prediction and a hidden reference* when one of the scorers that could feed
it (the scorer registered under the metric's name, then the scorers that declare the metric,
``label`` first, then ``label`` itself as the plain "prediction as given" scorer) gives it a
number on a small probe of (prediction, reference) pairs without anything else (no sample, no
judge). Diagnostic metrics (parse rates) are no task score and are left out.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from glotbench.errors import GlotbenchError
from glotbench.leaderboard.schema import GoldLabel, Task
from glotbench.scoring.metrics import METRICS, Metric, ScoredItem, bootstrap_ci, get_metric
from glotbench.scoring.scorers import SCORERS, Scorer, get_scorer

PLAIN_SCORER = "label"  # the prediction as given, compared as a string (classification tasks)
# (reference, prediction) pairs every leaderboard metric must score to a number: labels, numbers, text
_PROBE = (("1", "1"), ("2", "3"), ("a b c", "a b d"), ("0.5", "0,5"))


@dataclass(frozen=True)
class TaskMetric:
    """A registered metric with the registered scorer that turns (prediction, reference) into its input."""

    metric: Metric
    scorer: Scorer

    @property
    def name(self) -> str:
        return self.metric.name

    @property
    def labelled(self) -> bool:
        """True for a classification metric (the ``label`` scorer declares it): the task has a public
        label set and predictions must come from it. Otherwise predictions are free text."""
        return self.scorer.name == PLAIN_SCORER and self.metric.name in (self.scorer.metrics or ())

    def items(self, gold: dict[str, str], predictions: dict[str, str]) -> list[ScoredItem]:
        """One scored item per gold item, in id order; a missing prediction counts as unparseable."""
        out = []
        for item_id, ref in sorted(gold.items()):
            pred, values = self.scorer(predictions.get(item_id), ref)
            out.append(ScoredItem(gold=ref, pred=pred, values=dict(values)))
        return out


class NotComputable(GlotbenchError, ValueError):
    """The metric cannot be computed from predictions and references alone (one line, says why)."""


def _candidates(name: str, metric: Metric) -> list[str]:
    """Scorers that may feed ``metric``, in the order they are tried. A mean of a per-item value is
    fed only by a scorer that declares the metric (the value means what that scorer says it means:
    a task class's ``correct`` is not the ``label`` scorer's); a corpus metric reads gold and
    prediction, so the plain ``label`` scorer can feed it too."""
    declaring = [s for s in SCORERS.in_order() if name in (get_scorer(s).metrics or ())]
    named = [name] if name in SCORERS and (metric.key is None or name in declaring) else []
    order = named + sorted(declaring, key=lambda s: s != PLAIN_SCORER) + ([PLAIN_SCORER] if metric.key is None else [])
    return list(dict.fromkeys(order))


def _probe(tm: TaskMetric) -> float:
    gold = {str(k): ref for k, (ref, _) in enumerate(_PROBE)}
    preds = {str(k): pred for k, (_, pred) in enumerate(_PROBE)}
    return float(tm.metric(tm.items(gold, preds)))


_FOUND: dict[str, tuple[Metric, TaskMetric | NotComputable]] = {}
_LOCK = threading.Lock()  # the server scores in worker threads: one probe at a time


def task_metric(name: str) -> TaskMetric:
    """The metric ``name`` with its scorer, or :class:`NotComputable` / TaskSpecError (one line)."""
    with _LOCK:
        metric = get_metric(name)
        known = _FOUND.get(name)
        if known is None or known[0] is not metric:  # probed once per registered object
            try:
                found: TaskMetric | NotComputable = _find(name, metric)
            except NotComputable as err:
                found = err
            _FOUND[name] = known = (metric, found)
    if isinstance(known[1], NotComputable):
        raise known[1]
    return known[1]


def _find(name: str, metric: Metric) -> TaskMetric:
    if metric.role == "diagnostic":
        raise NotComputable(f"metric {name!r} is a diagnostic (role {metric.role!r}), not a score a task is ranked on")
    for scorer_name in _candidates(name, metric):
        tm = TaskMetric(metric, get_scorer(scorer_name))
        try:
            value = _probe(tm)
        except Exception:  # noqa: BLE001 - a scorer that needs a sample, a judge, a pack...
            continue
        if not math.isnan(value):
            return tm
    raise NotComputable(f"metric {name!r} cannot be computed from a prediction and a reference alone "
                        f"(no registered scorer gives it a value without the task's samples or a judge)")


def leaderboard_metrics() -> list[str]:
    """Every registered metric a leaderboard task can use, by name."""
    out = []
    for name in METRICS.names():
        try:
            task_metric(name)
        except Exception:  # noqa: BLE001 - not computable, or a lazy metric that cannot be imported here
            continue
        out.append(name)
    return out


def gold_for(db: Session, task: Task) -> dict[str, str]:
    # in the gold file's order (the bootstrap's resamples index the items in this order)
    return dict(db.execute(select(GoldLabel.item_id, GoldLabel.label).where(GoldLabel.task_id == task.id)
                           .order_by(GoldLabel.id)).all())


def first_item_ids(db: Session, task: Task, n: int = 2) -> list[str]:
    """The first ``n`` item ids of ``task`` in its gold file's order (what an example submission names)."""
    return list(db.scalars(select(GoldLabel.item_id).where(GoldLabel.task_id == task.id).order_by(GoldLabel.id).limit(n)))


def task_ids(db: Session, task: Task) -> set[str]:
    return set(db.scalars(select(GoldLabel.item_id).where(GoldLabel.task_id == task.id)))


def score_predictions(gold: dict[str, str], predictions: dict[str, str], metric: str) -> float:
    """``metric`` over the items of ``gold`` (ids must match; the validator checks that first)."""
    tm = task_metric(metric)
    return float(tm.metric(tm.items(gold, predictions)))


# the resamples `glotbench run` draws by default (--bootstrap 1000, --seed 1234: glotbench.settings), so
# a run over the gold file's items, in its order, reports the interval the leaderboard shows
RUN_BOOTSTRAP, RUN_SEED = 1000, 1234


def score_interval(gold: dict[str, str], predictions: dict[str, str], metric: str,
                   n_resamples: int = RUN_BOOTSTRAP, seed: int = RUN_SEED) -> tuple[float | None, float | None]:
    """Percentile bootstrap 95% interval of ``metric`` over the items of ``gold``:
    :func:`glotbench.scoring.metrics.bootstrap_ci`, the interval every run reports (its resample
    forms compute label metrics from per-resample confusion matrices, per-item means at once), with
    the run's default resample count and seed."""
    tm = task_metric(metric)
    lo, hi = bootstrap_ci(tm.items(gold, predictions), tm.metric, n_resamples=n_resamples, seed=seed)
    return (None, None) if math.isnan(lo) or math.isnan(hi) else (lo, hi)


def direction(metric: str) -> str:
    """``"higher"`` or ``"lower"`` (is better): the registered metric's declared direction."""
    return get_metric(metric).direction


def higher_is_better(metric: str) -> bool:
    """The metric's declared direction (glotbench.scoring.metrics.Metric)."""
    return get_metric(metric).higher_is_better


def better(metric: str, a: float, b: float) -> bool:
    """Is score ``a`` better than ``b`` under ``metric``'s direction?"""
    return a > b if higher_is_better(metric) else a < b
