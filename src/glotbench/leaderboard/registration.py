"""Self-registration with limits, so probing hidden labels is bounded per person, not per account:
new accounts per network address (per hour and per day) and over the whole site (per hour), and
optionally an administrator's approval before a new account may upload.

The limits are database slots (:mod:`glotbench.leaderboard.quotas`), taken *after* the account row
is inserted: a registration that fails (a taken name) uses no slot, and an account whose slot cannot
be had is deleted again (the slots it did take stay used), so under any concurrency no more
accounts than the limits allow survive."""

from __future__ import annotations

from sqlalchemy import delete
from sqlalchemy.orm import Session

from glotbench.leaderboard import quotas
from glotbench.leaderboard.accounts import InputError, create_user
from glotbench.leaderboard.config import Settings
from glotbench.leaderboard.schema import AccountHold, User


class RegistrationLimit(InputError):
    """Too many new accounts from this address or on the site just now (HTTP 429)."""


def _limits(settings: Settings, address: str | None) -> list[tuple[str, str, int]]:
    out = [("register:all", quotas.hour(), settings.register_per_hour)]
    if address:
        out += [(f"register:addr:{address}", quotas.hour(), settings.register_per_address_hour),
                (f"register:addr:{address}", quotas.day(), settings.register_per_address_day)]
    return [x for x in out if x[2]]


def register(db: Session, username: str, password: str, team: str, address: str | None, settings: Settings) -> User:
    """Create a self-registered account or raise :class:`InputError` (:class:`RegistrationLimit`
    when a limit is used up)."""
    limits = _limits(settings, address)
    for bucket, period, limit in limits:  # a cheap early refusal; the slots below are the real check
        if quotas.used(db, bucket, [period]) >= limit:
            raise RegistrationLimit("err_register_limit", "too many new accounts from this address or on the site; try again later")
    user = create_user(db, username, password, team)
    for bucket, period, limit in limits:
        if not quotas.take(db, bucket, period, limit):  # slots already taken stay taken: the attempt counts
            db.execute(delete(User).where(User.id == user.id))
            db.commit()
            raise RegistrationLimit("err_register_limit", "too many new accounts from this address or on the site; try again later")
    if settings.approve_accounts:
        db.add(AccountHold(user_id=user.id))
        db.commit()
    return user


def on_hold(db: Session, user: User) -> bool:
    return db.get(AccountHold, user.id) is not None


def approve(db: Session, user: User) -> bool:
    """Let a held account upload; ``False`` when it was not held."""
    n = db.execute(delete(AccountHold).where(AccountHold.user_id == user.id)).rowcount
    db.commit()
    return bool(n)
