"""What a viewer may see of a submission: the one place that decides it. Every page, template, API
answer and export is given a :class:`SubmissionView` made here, never the stored row, so the
public/private split cannot be forgotten in one of them (the "My submissions" table once showed the
all-items score of a pending result while the API showed the public-share score).

Rules: an administrator sees everything (both scores); the owner of a result not yet approved sees
only the score on the task's public share when the task has one; anyone sees an approved result
with its all-items score; nobody else sees a result that is not approved."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from glotbench.leaderboard.schema import APPROVED, Submission, User

ALL_ITEMS, PUBLIC_SHARE = "all items", "public share"


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
    return SubmissionView(
        id=sub.id, task=sub.task.name, metric=sub.task.metric, model_name=sub.model_name, team=sub.team,
        user=sub.user.username, score=sub.public_score if public_only else sub.score,
        score_on=PUBLIC_SHARE if public_only else ALL_ITEMS, public_score=sub.public_score if admin else None,
        ci_low=None if public_only else sub.ci_low, ci_high=None if public_only else sub.ci_high,
        n_items=sub.n_items, n_fallback=sub.n_fallback, status=sub.status, model_size=sub.model_size,
        paper_url=sub.paper_url, code_url=sub.code_url, description=sub.description, created_at=sub.created_at,
        reviewed_at=sub.reviewed_at, admin_view=admin)


def views_of(subs, viewer: User | None) -> list[SubmissionView]:
    return [v for v in (view_of(s, viewer) for s in subs) if v is not None]
