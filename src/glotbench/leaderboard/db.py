"""Engine and session factory for a database URL (SQLite by default, PostgreSQL by URL)."""

from __future__ import annotations

import secrets

from sqlalchemy import create_engine, event
from sqlalchemy.engine import Engine
from sqlalchemy.exc import ArgumentError, NoSuchModuleError, OperationalError
from sqlalchemy.orm import Session, sessionmaker

from glotbench.errors import GlotbenchError
from glotbench.leaderboard.schema import Base, Setting

DEFAULT_DB_URL = "sqlite:///glotbench-leaderboard.db"


class LeaderboardError(GlotbenchError):
    """A leaderboard operation that cannot be done (bad database URL, unknown task or user ...)."""


def make_engine(url: str) -> Engine:
    try:
        if url.startswith("sqlite"):
            # timeout: a writer waits up to 30 s for another's lock instead of failing with "database is locked"
            engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})

            @event.listens_for(engine, "connect")
            def _sqlite_pragmas(dbapi_conn, _record):  # foreign keys off by default in SQLite
                cur = dbapi_conn.cursor()
                cur.execute("PRAGMA foreign_keys=ON")
                if ":memory:" not in url and "mode=memory" not in url:
                    cur.execute("PRAGMA journal_mode=WAL")  # readers do not wait for a writer
                cur.close()
        else:
            engine = create_engine(url, pool_pre_ping=True)
    except (ArgumentError, NoSuchModuleError) as err:
        raise LeaderboardError(f"database URL {url!r} is not usable: {err}") from None
    except ModuleNotFoundError as err:
        raise LeaderboardError(f"database URL {url!r} needs the Python module {err.name!r} (for PostgreSQL: pip install 'psycopg[binary]')") from None
    return engine


def open_db(url: str) -> sessionmaker[Session]:
    """Connect, create missing tables, and return a session factory."""
    engine = make_engine(url)
    try:
        Base.metadata.create_all(engine)
    except OperationalError as err:
        raise LeaderboardError(f"cannot open database {engine.url.render_as_string(hide_password=True)}: {str(err.orig).strip().splitlines()[0]}") from None
    return sessionmaker(engine, expire_on_commit=False)


def get_secret_key(db: Session) -> str:
    """The cookie-signing key, generated once and kept in the database so restarts keep sessions."""
    row = db.get(Setting, "secret_key")
    if row is None:
        row = Setting(key="secret_key", value=secrets.token_urlsafe(48))
        db.add(row)
        db.commit()
    return row.value
