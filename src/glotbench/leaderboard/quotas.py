"""Limits enforced by the database itself: an allowance of ``limit`` uses per bucket and period is
``limit`` numbered slots, and a use is the insert of one free slot under a unique constraint
(``quota_slots``: bucket, period, n). Two parallel requests that both see slot 3 free race for it;
the database lets one insert and refuses the other (IntegrityError), which tries slot 4. So the
limit holds under any concurrency on SQLite and PostgreSQL alike, with no count-then-insert window.

A slot is committed at once, in its own transaction, before the upload is even parsed: a rejected
upload uses up its slot too (a malformed or hostile file costs the sender as much as a good one)."""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from glotbench.leaderboard.schema import QuotaSlot, utcnow


def day(now: datetime | None = None) -> str:
    return (now or utcnow()).strftime("%Y-%m-%d")


def hour(now: datetime | None = None) -> str:
    return (now or utcnow()).strftime("%Y-%m-%dT%H")


def used(db: Session, bucket: str, periods: list[str]) -> int:
    return db.scalar(select(func.count()).select_from(QuotaSlot).where(QuotaSlot.bucket == bucket,
                                                                      QuotaSlot.period.in_(periods))) or 0


def take(db: Session, bucket: str, period: str, limit: int) -> bool:
    """Claim one of the ``limit`` slots of ``bucket`` in ``period`` (committed at once); ``False``
    when every slot is taken. ``limit`` 0 means no limit. Commits the session."""
    if not limit:
        return True
    start = used(db, bucket, [period]) + 1
    db.rollback()  # end the read transaction: each attempt below is its own short write
    for n in range(start, limit + 1):
        db.add(QuotaSlot(bucket=bucket, period=period, n=n))
        try:
            db.commit()
            return True
        except IntegrityError:  # a parallel request took slot n first
            db.rollback()
    return False


def last_days(n: int, now: datetime | None = None) -> list[str]:
    """The ``n`` day periods ending today (for a rolling 30-day count over day slots)."""
    now = now or utcnow()
    return [day(now - timedelta(days=k)) for k in range(n)]
