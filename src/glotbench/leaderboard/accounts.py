"""Accounts: users, login with throttling and lockout, server-side sessions, API tokens."""

from __future__ import annotations

import re
import secrets
from datetime import timedelta

from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from glotbench.leaderboard.db import LeaderboardError
from glotbench.leaderboard.names import bad_characters, name_key, shown
from glotbench.leaderboard.schema import ApiToken, User, WebSession, utcnow
from glotbench.leaderboard.security import hash_password, new_api_token, token_hash, verify_password

USERNAME_RE = re.compile(r"^[A-Za-z0-9_.\-]{3,64}$")
MIN_PASSWORD = 8
# verified against when the user does not exist, so a wrong name costs the same time as a wrong password
_DUMMY_HASH = hash_password(secrets.token_urlsafe(16))


class InputError(LeaderboardError):
    """Bad user input; ``key`` names the translated message shown on pages."""

    def __init__(self, key: str, message: str):
        super().__init__(message)
        self.key = key


def check_text(field: str, value: str, key: str = "err_bad_chars", allow_newlines: bool = False) -> None:
    bad = bad_characters(value, allow_newlines)
    if bad:
        raise InputError(key, f"{field} contains characters that are not allowed (control or direction-override characters: {', '.join(bad[:5])})")


def create_user(db: Session, username: str, password: str, team: str = "", is_admin: bool = False) -> User:
    username, team = username.strip(), team.strip()
    if not USERNAME_RE.match(username):
        raise InputError("err_username", f"username {shown(username)} must be 3-64 letters, digits, '.', '_' or '-'")
    check_text("team", team)
    if len(password) < MIN_PASSWORD:
        raise InputError("err_password", f"password for {shown(username)} must be at least {MIN_PASSWORD} characters")
    key = name_key(username)
    if db.scalar(select(User.id).where(User.username_key == key)) is not None:
        raise InputError("err_user_exists", f"user {username!r} already exists")
    user = User(username=username, username_key=key, team=team[:128], password_hash=hash_password(password), is_admin=is_admin)
    db.add(user)
    try:
        db.commit()
    except IntegrityError:  # a parallel registration of the same name won the race
        db.rollback()
        raise InputError("err_user_exists", f"user {username!r} already exists") from None
    return user


def authenticate(db: Session, username: str, password: str, max_failures: int = 5, lockout_s: int = 900) -> User | None:
    """The user when the password is right and the account is not locked; ``None`` otherwise, after
    the same argon2 work either way. ``max_failures`` wrong passwords in a row lock it for ``lockout_s``."""
    user = db.scalar(select(User).where(User.username_key == name_key(username.strip())))
    ok = verify_password(user.password_hash if user else _DUMMY_HASH, password)
    if user is None:
        return None
    now = utcnow()
    if user.locked_until is not None and user.locked_until > now:
        return None
    if not ok:
        user.failed_logins = (user.failed_logins or 0) + 1
        if max_failures and user.failed_logins >= max_failures:
            user.locked_until, user.failed_logins = now + timedelta(seconds=lockout_s), 0
        db.commit()
        return None
    if user.failed_logins or user.locked_until:
        user.failed_logins, user.locked_until = 0, None
        db.commit()
    return user


def change_password(db: Session, user: User, old: str, new: str) -> None:
    """Set a new password and end every web session of the user (all devices log in again)."""
    if not verify_password(user.password_hash, old):
        raise InputError("err_old_password", "the current password is wrong")
    if len(new) < MIN_PASSWORD:
        raise InputError("err_password", f"the password must be at least {MIN_PASSWORD} characters")
    user.password_hash = hash_password(new)
    db.execute(delete(WebSession).where(WebSession.user_id == user.id))
    db.commit()


def get_user(db: Session, username: str) -> User:
    user = db.scalar(select(User).where(User.username_key == name_key(username)))
    if user is None:
        raise LeaderboardError(f"no user named {username!r}")
    return user


# ---- server-side sessions ----------------------------------------------------------------------

def start_session(db: Session, user: User, days: int) -> str:
    token = secrets.token_urlsafe(32)
    db.add(WebSession(token_hash=token_hash(token), user_id=user.id, expires_at=utcnow() + timedelta(days=days)))
    db.commit()
    return token


def session_user(db: Session, token: str) -> User | None:
    row = db.scalar(select(WebSession).where(WebSession.token_hash == token_hash(token)))
    if row is None or row.expires_at < utcnow():
        return None
    return db.get(User, row.user_id)


def end_session(db: Session, token: str) -> None:
    db.execute(delete(WebSession).where(WebSession.token_hash == token_hash(token)))
    db.commit()


# ---- API tokens -------------------------------------------------------------------------------

def create_token(db: Session, user: User, name: str = "") -> str:
    check_text("token name", name)
    token, digest = new_api_token()
    db.add(ApiToken(user_id=user.id, token_hash=digest, name=name.strip()[:128]))
    db.commit()
    return token


def user_for_token(db: Session, token: str) -> User | None:
    row = db.scalar(select(ApiToken).where(ApiToken.token_hash == token_hash(token)))
    return row.user if row else None


def tokens_of(db: Session, user: User) -> list[ApiToken]:
    return list(db.scalars(select(ApiToken).where(ApiToken.user_id == user.id).order_by(ApiToken.id)))


def delete_token(db: Session, user: User, token_id: int) -> None:
    db.execute(delete(ApiToken).where(ApiToken.id == token_id, ApiToken.user_id == user.id))
    db.commit()
