"""Fixtures for the leaderboard tests: a fresh SQLite database, the app, users and HuLU tasks."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

pytest.importorskip("fastapi", reason="the leaderboard needs fastapi (pip install fastapi)")
pytest.importorskip("argon2", reason="the leaderboard needs argon2-cffi")

from lb_helpers import ADMIN, hulu_gold, hulu_path  # noqa: E402,F401


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'leaderboard.db'}"


@pytest.fixture
def sessions(db_url):
    from glotbench.leaderboard import service
    from glotbench.leaderboard.db import open_db

    maker = open_db(db_url)
    with maker() as db:
        service.create_user(db, *ADMIN, team="NYTK", is_admin=True)
    return maker


@pytest.fixture
def app(sessions, db_url):
    from glotbench.leaderboard.app import create_app

    return create_app(db_url, max_upload_bytes=200_000)


@pytest.fixture
def client_factory(app):
    from fastapi.testclient import TestClient

    clients = []

    def make():
        c = TestClient(app)
        clients.append(c)
        return c

    yield make
    for c in clients:
        c.close()


@pytest.fixture
def cola_task(sessions):
    """HuCOLA dev registered as task hulu.cola (gold from the real dev file)."""
    from glotbench.leaderboard import service

    with sessions() as db:
        service.add_task(db, "hulu.cola", service.load_gold_file(hulu_path("cola")), "mcc", title="HuCOLA (dev)")
    return hulu_gold("cola")
