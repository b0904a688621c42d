"""What a viewer may see of a submission: the one place that decides it. Every page, template, API
answer and export is given a :class:`SubmissionView` made here, never the stored row, so the
public/private split cannot be forgotten in one of them (the "My submissions" table once showed the
all-items score of a pending result while the API showed the public-share score).

Rules: an administrator sees everything (both scores); the owner of a result not yet approved sees
only the score on the task's public share when the task has one; anyone sees an approved result
with its all-items score; nobody else sees a result that is not approved.

Before approval the owner's score is coarse (:func:`pending_score`: steps of :data:`PENDING_STEP` of
the metric's scale, no interval): every upload is an answer from the hidden labels, and a fine score
tells which label one changed prediction hit (issue 48: five chrF uploads at 3 decimals told which
word a hidden reference held). docs/leaderboard.md gives the bound."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from glotbench.leaderboard.schema import APPROVED, Submission, User

ALL_ITEMS, PUBLIC_SHARE = "all items", "public share"
PENDING_STEP = 0.05  # of the metric's scale (1 for accuracy/F1/MCC, 100 for chrF/BLEU): 21 shown values at most


def metric_scale(metric: str) -> float:
    """1 for a metric on [0, 1] (or [-1, 1]), 100 for one on sacrebleu's 0-100 scale: the magnitude of
    its value on perfect predictions (read from the metric itself, at least 1)."""
    return _scale(metric)


def _scale(metric: str, _cache: dict = {}) -> float:  # noqa: B006 - a per-process cache
    if metric not in _cache:
        try:
            from glotbench.leaderboard.scoring import task_metric

            tm = task_metric(metric)
            gold = {"0": "a b c", "1": "d e f"}
            value = float(tm.metric(tm.items(gold, dict(gold))))
            _cache[metric] = 100.0 if abs(value) > 1.5 else 1.0
        except Exception:  # noqa: BLE001 - an unknown metric: the [0, 1] scale
            _cache[metric] = 1.0
    return _cache[metric]


def pending_score(score: float | None, metric: str) -> float | None:
    """A not-yet-approved score as its owner sees it: rounded to the nearest PENDING_STEP x scale."""
    if score is None:
        return None
    step = PENDING_STEP * metric_scale(metric)
    return round(round(score / step) * step, 6)


@dataclass(frozen=True)
class SubmissionView:
    id: int
    task: str
    metric: str
    model_name: str
    team: str
    user: str
    score: float | None
    score_on: str  # ALL_ITEMS or PUBLIC_SHARE
    public_score: float | None  # set for administrators only
    ci_low: float | None
    ci_high: float | None
    n_items: int
    n_fallback: int | None
    status: str
    model_size: str
    paper_url: str
    code_url: str
    description: str
    created_at: datetime
    reviewed_at: datetime | None
    admin_view: bool


def view_of(sub: Submission, viewer: User | None) -> SubmissionView | None:
    """The view of ``sub`` that ``viewer`` (``None``: anonymous) may see, or ``None`` for none."""
    admin = bool(viewer is not None and viewer.is_admin)
    owner = viewer is not None and viewer.id == sub.user_id
    if sub.status != APPROVED and not (admin or owner):
        return None
    public_only = sub.public_score is not None and sub.status != APPROVED and not admin
    coarse = sub.status != APPROVED and not admin  # the owner, before approval: a probe-safe score, no interval
    score = sub.public_score if public_only else sub.score
    return SubmissionView(
        id=sub.id, task=sub.task.name, metric=sub.task.metric, model_name=sub.model_name, team=sub.team,
        user=sub.user.username, score=pending_score(score, sub.task.metric) if coarse else score,
        score_on=PUBLIC_SHARE if public_only else ALL_ITEMS, public_score=sub.public_score if admin else None,
        ci_low=None if coarse else sub.ci_low, ci_high=None if coarse else sub.ci_high,
        n_items=sub.n_items, n_fallback=sub.n_fallback, status=sub.status, model_size=sub.model_size,
        paper_url=sub.paper_url, code_url=sub.code_url, description=sub.description, created_at=sub.created_at,
        reviewed_at=sub.reviewed_at, admin_view=admin)


def views_of(subs, viewer: User | None) -> list[SubmissionView]:
    return [v for v in (view_of(s, viewer) for s in subs) if v is not None]
