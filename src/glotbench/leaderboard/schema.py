"""Database tables (SQLAlchemy 2 ORM). Gold labels live only in ``gold_labels``; nothing that
renders a page or an API answer reads that table (only :mod:`glotbench.leaderboard.scoring`)."""

from __future__ import annotations

from datetime import datetime, timezone

from sqlalchemy import JSON, Boolean, DateTime, Float, ForeignKey, Integer, LargeBinary, String, Text, UniqueConstraint
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

PENDING, APPROVED, REJECTED = "pending", "approved", "rejected"


def utcnow() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)  # stored as naive UTC on every backend


class Base(DeclarativeBase):
    pass


class Setting(Base):
    __tablename__ = "settings"
    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(Text)


class User(Base):
    __tablename__ = "users"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    username: Mapped[str] = mapped_column(String(64), index=True)
    username_key: Mapped[str] = mapped_column(String(64), unique=True)  # casefolded: 'Boss' and 'boss' are one name
    team: Mapped[str] = mapped_column(String(128), default="")
    password_hash: Mapped[str] = mapped_column(String(255))
    is_admin: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    failed_logins: Mapped[int] = mapped_column(Integer, default=0)  # consecutive wrong passwords
    locked_until: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)


class WebSession(Base):
    """A server-side login session; the cookie carries only a random id whose SHA-256 is stored here,
    so deleting the row (logout, password change) kills every copy of the cookie."""
    __tablename__ = "web_sessions"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(DateTime)


class ApiToken(Base):
    __tablename__ = "api_tokens"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True, index=True)  # sha256 hex; the token itself is never stored
    name: Mapped[str] = mapped_column(String(128), default="")
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    user: Mapped[User] = relationship(lazy="joined")


class Task(Base):
    __tablename__ = "tasks"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(128), unique=True, index=True)
    title: Mapped[str] = mapped_column(String(255), default="")
    metric: Mapped[str] = mapped_column(String(32))
    labels: Mapped[list] = mapped_column(JSON)  # the public label set; [] for a text task (free-text predictions)
    n_items: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    # share of the test items whose score the submitter sees (None: all); the rest count only on the board
    public_share: Mapped[float | None] = mapped_column(Float, nullable=True)
    description_en: Mapped[str] = mapped_column(Text, default="")  # Markdown, edited by administrators
    description_hu: Mapped[str] = mapped_column(Text, default="")
    gold_version: Mapped[int] = mapped_column(Integer, default=1)


class TaskFile(Base):
    """A downloadable corpus file of a task (train/dev with labels, test without), kept in the database."""
    __tablename__ = "task_files"
    __table_args__ = (UniqueConstraint("task_id", "split"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    task_id: Mapped[int] = mapped_column(ForeignKey("tasks.id", ondelete="CASCADE"), index=True)
    split: Mapped[str] = mapped_column(String(16))
    filename: Mapped[str] = mapped_column(String(255))
    content: Mapped[bytes] = mapped_column(LargeBinary)
    n_records: Mapped[int] = mapped_column(Integer, default=0)


class GoldLabel(Base):
    __tablename__ = "gold_labels"
    __table_args__ = (UniqueConstraint("task_id", "item_id"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    task_id: Mapped[int] = mapped_column(ForeignKey("tasks.id", ondelete="CASCADE"), index=True)
    item_id: Mapped[str] = mapped_column(String(128))
    label: Mapped[str] = mapped_column(Text)  # a class label, or a text task's reference (a translation: any length)


class Submission(Base):
    __tablename__ = "submissions"
    __table_args__ = (UniqueConstraint("user_id", "idempotency_key"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    task_id: Mapped[int] = mapped_column(ForeignKey("tasks.id", ondelete="CASCADE"), index=True)
    model_name: Mapped[str] = mapped_column(String(255))
    team: Mapped[str] = mapped_column(String(128), default="")
    score: Mapped[float] = mapped_column(Float)  # on all items: what the approved board shows
    public_score: Mapped[float | None] = mapped_column(Float, nullable=True)  # on the task's public share
    ci_low: Mapped[float | None] = mapped_column(Float, nullable=True)  # bootstrap 95% interval, set on approval
    ci_high: Mapped[float | None] = mapped_column(Float, nullable=True)
    idempotency_key: Mapped[str | None] = mapped_column(String(128), nullable=True)
    model_size: Mapped[str] = mapped_column(String(64), default="")
    paper_url: Mapped[str] = mapped_column(String(512), default="")
    code_url: Mapped[str] = mapped_column(String(512), default="")
    description: Mapped[str] = mapped_column(Text, default="")
    n_fallback: Mapped[int | None] = mapped_column(Integer, nullable=True)  # predictions the harness filled with a fallback label
    gold_version: Mapped[int] = mapped_column(Integer, default=1)
    n_items: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(16), default=PENDING, index=True)
    predictions: Mapped[dict] = mapped_column(JSON)  # kept for audit and re-scoring; never shown
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    reviewed_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    reviewed_by: Mapped[int | None] = mapped_column(ForeignKey("users.id"), nullable=True)
    # loaded with the row (joined): nothing is lazy-loaded later, e.g. after a commit in an endpoint
    user: Mapped[User] = relationship(foreign_keys=[user_id], lazy="joined")
    task: Mapped[Task] = relationship(lazy="joined")


class QuotaSlot(Base):
    """One numbered use of a limited allowance: ``bucket`` names who and what (``user:3:task:7``,
    ``addr:127.0.0.1:task:7``, ``register:all``), ``period`` the day or hour it counts in, ``n`` runs
    from 1 to the limit. The unique constraint is the lock: two parallel requests cannot both take
    slot ``n``, so no more than the limit are ever taken (see :mod:`glotbench.leaderboard.quotas`)."""
    __tablename__ = "quota_slots"
    __table_args__ = (UniqueConstraint("bucket", "period", "n"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    bucket: Mapped[str] = mapped_column(String(200))
    period: Mapped[str] = mapped_column(String(16))
    n: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)


class AccountHold(Base):
    """A registered account that awaits an administrator's approval (``glotbench serve
    --approve-accounts``): it may log in but not upload until ``glotbench admin approve-user``."""
    __tablename__ = "account_holds"
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
