"""Shared pieces of the web app: templates, the current user, CSRF, rendering, DB sessions.

Database rule (see docs/leaderboard.md, "Hardening"): an ``async`` endpoint never touches the
database itself; it reads the request body holding no connection and hands every query to a
worker thread (:func:`in_db`), which opens a session, does the work, renders and closes it."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterator

import jinja2
from fastapi import Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, RedirectResponse
from markupsafe import Markup
from sqlalchemy.orm import Session

from glotbench.leaderboard import accounts
from glotbench.leaderboard.i18n import LANGS, translator
from glotbench.leaderboard.schema import User
from glotbench.leaderboard.security import csrf_ok, new_csrf_token

HERE = Path(__file__).parent
env = jinja2.Environment(loader=jinja2.FileSystemLoader(HERE / "templates"), autoescape=True,
                         trim_blocks=True, lstrip_blocks=True)
env.filters["date"] = lambda d: d.strftime("%Y-%m-%d") if d else ""
env.filters["datetime"] = lambda d: d.strftime("%Y-%m-%d %H:%M") if d else ""


@jinja2.pass_context
def _score(ctx, v) -> str:
    """A score rounded to the configured number of decimals (``glotbench serve --score-digits``)."""
    if v is None:
        return "–"
    return f"{v:.{ctx.get('digits', 3)}f}"


env.filters["score"] = _score


def _direction(metric: str) -> str:
    from glotbench.leaderboard.scoring import direction

    return direction(metric)


env.globals["direction"] = _direction  # "higher" / "lower" is better, the metric's declared direction


def _markdown(text: str) -> Markup:
    """Administrator-written Markdown as HTML; raw HTML in it is escaped, not passed through."""
    from markdown_it import MarkdownIt

    return Markup(MarkdownIt("commonmark", {"html": False}).enable("table").render(text or ""))


env.filters["markdown"] = _markdown


def get_db(request: Request) -> Iterator[Session]:
    with request.app.state.sessionmaker() as db:
        yield db


async def in_db(request: Request, fn: Callable[..., Any], *args) -> Any:
    """Run ``fn(db, *args)`` in a worker thread with a fresh session, closed afterwards."""
    def work():
        with request.app.state.sessionmaker() as db:
            return fn(db, *args)
    return await run_in_threadpool(work)


def client_address(request: Request) -> str | None:
    """The client's network address: the TCP peer, unless the peer is one of the trusted proxies
    (``glotbench serve --trusted-proxy``, default none): then the right-most address of
    ``X-Forwarded-For`` that is not itself a trusted proxy (what the nearest untrusted hop said it
    was; anything to its left the client may have written). A header from any other peer, loopback
    included, is ignored: 28 registrations with 28 forged headers count as one address
    (docs/leaderboard.md on per-address limits)."""
    peer = request.client.host if request.client else None
    trusted = request.app.state.settings.trusted_networks()
    if peer is None or not trusted or not _in(peer, trusted):
        return peer
    hops = [h.strip() for h in ",".join(request.headers.getlist("x-forwarded-for")).split(",") if h.strip()]
    for hop in reversed(hops):
        if not _valid_ip(hop):
            return peer  # a hop that is not an address: the chain cannot be read, keep the proxy's own
        if not _in(hop, trusted):
            return hop
    return hops[0] if hops else peer


def _valid_ip(text: str) -> bool:
    import ipaddress

    try:
        ipaddress.ip_address(text)
        return True
    except ValueError:
        return False


def _in(address: str, networks) -> bool:
    import ipaddress

    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in net for net in networks)


def current_user(request: Request, db: Session) -> User | None:
    """The user of the server-side session named by the cookie (``None`` once it was ended)."""
    cached = request.state._state.get("user_in")
    if cached is not None and cached[0] is db:  # looked up once per DB session (objects stay attached)
        return cached[1]
    sid = request.session.get("sid")
    user = accounts.session_user(db, sid) if isinstance(sid, str) else None
    request.state.user_in = (db, user)
    return user


def login_session(request: Request, db: Session, user: User) -> None:
    request.session.clear()  # a fresh session (and CSRF token) after login
    request.session["sid"] = accounts.start_session(db, user, request.app.state.settings.session_days)
    request.state.user_in = (db, user)


def logout_session(request: Request, db: Session) -> None:
    sid = request.session.get("sid")
    if isinstance(sid, str):
        accounts.end_session(db, sid)
    request.session.clear()
    request.state.user_in = (db, None)


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
        csrf=csrf_token(request), path=request.url.path, digits=request.app.state.settings.score_digits, **ctx)
    return HTMLResponse(html, status_code=status)


def redirect(url: str) -> RedirectResponse:
    return RedirectResponse(url, status_code=303)


def safe_next(url: str | None) -> str:
    """Only local paths, so a crafted ?next= cannot send the user elsewhere."""
    if url and url.startswith("/") and not url.startswith("//") and "\\" not in url:
        return url
    return "/"
