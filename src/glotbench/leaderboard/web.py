"""Shared pieces of the web app: templates, the current user, CSRF, rendering, DB sessions."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import jinja2
from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse
from sqlalchemy.orm import Session

from glotbench.leaderboard.i18n import LANGS, translator
from glotbench.leaderboard.schema import User
from glotbench.leaderboard.security import csrf_ok, new_csrf_token

HERE = Path(__file__).parent
env = jinja2.Environment(loader=jinja2.FileSystemLoader(HERE / "templates"), autoescape=True,
                         trim_blocks=True, lstrip_blocks=True)
env.filters["date"] = lambda d: d.strftime("%Y-%m-%d") if d else ""
env.filters["datetime"] = lambda d: d.strftime("%Y-%m-%d %H:%M") if d else ""
env.filters["score"] = lambda v: f"{v:.4f}"


def get_db(request: Request) -> Iterator[Session]:
    with request.app.state.sessionmaker() as db:
        yield db


def current_user(request: Request, db: Session) -> User | None:
    uid = request.session.get("uid")
    return db.get(User, uid) if isinstance(uid, int) else None


def csrf_token(request: Request) -> str:
    if "csrf" not in request.session:
        request.session["csrf"] = new_csrf_token()
    return request.session["csrf"]


def check_csrf(request: Request, form) -> bool:
    return csrf_ok(request.session.get("csrf"), form.get("csrf_token"))


def render(request: Request, db: Session, name: str, status: int = 200, **ctx) -> HTMLResponse:
    lang = request.state.lang
    html = env.get_template(name).render(
        request=request, lang=lang, langs=LANGS, t=translator(lang), user=current_user(request, db),
        csrf=csrf_token(request), path=request.url.path, **ctx)
    return HTMLResponse(html, status_code=status)


def redirect(url: str) -> RedirectResponse:
    return RedirectResponse(url, status_code=303)


def safe_next(url: str | None) -> str:
    """Only local paths, so a crafted ?next= cannot send the user elsewhere."""
    if url and url.startswith("/") and not url.startswith("//") and "\\" not in url:
        return url
    return "/"
