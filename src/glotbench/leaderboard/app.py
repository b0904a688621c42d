"""The leaderboard web application: ``create_app(db_url, settings)`` returns a FastAPI app."""

from __future__ import annotations

from dataclasses import replace

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.staticfiles import StaticFiles
from starlette.middleware.sessions import SessionMiddleware

from glotbench.leaderboard import api, pages
from glotbench.leaderboard.config import DEFAULT_MAX_UPLOAD_BYTES, Settings
from glotbench.leaderboard.db import DEFAULT_DB_URL, get_secret_key, open_db
from glotbench.leaderboard.i18n import COOKIE, choose_lang
from glotbench.leaderboard.web import HERE

CSP = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"


def create_app(db_url: str = DEFAULT_DB_URL, secret_key: str | None = None,
               max_upload_bytes: int | None = None, https_only: bool | None = None,
               settings: Settings | None = None) -> FastAPI:
    settings = settings or Settings()
    if max_upload_bytes is not None:
        settings = replace(settings, max_upload_bytes=max_upload_bytes)
    if https_only is not None:
        settings = replace(settings, https_only=https_only)
    Session = open_db(db_url)
    if not secret_key:
        with Session() as db:
            secret_key = get_secret_key(db)
    app = FastAPI(title="glotbench leaderboard", docs_url=None, redoc_url=None, openapi_url="/api/openapi.json")
    app.state.sessionmaker = Session
    app.state.settings = settings
    app.state.max_upload_bytes = settings.max_upload_bytes

    @app.middleware("http")
    async def language_and_headers(request: Request, call_next):
        query_lang = request.query_params.get("lang")
        request.state.lang = choose_lang(query_lang, request.cookies.get(COOKIE), request.headers.get("accept-language"))
        response = await call_next(request)
        if query_lang == request.state.lang:
            response.set_cookie(COOKIE, request.state.lang, max_age=365 * 24 * 3600, samesite="lax", httponly=True)
        response.headers.setdefault("Content-Security-Policy", CSP)
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("X-Frame-Options", "DENY")
        response.headers.setdefault("Referrer-Policy", "same-origin")
        return response

    @app.exception_handler(RequestValidationError)
    async def bad_parameters(request: Request, exc: RequestValidationError):
        # e.g. an id that is not an integer in range: one line per field, never the raw input echoed
        problems = [f"{'.'.join(str(x) for x in e.get('loc', ()))}: {e.get('msg', 'invalid')}" for e in exc.errors()]
        return JSONResponse({"detail": problems}, status_code=422)

    # added last so it runs first: the (signed) cookie carries only the server-side session id and the CSRF token
    app.add_middleware(SessionMiddleware, secret_key=secret_key, session_cookie="glotbench_session",
                       same_site="lax", https_only=settings.https_only, max_age=settings.session_days * 24 * 3600)
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")
    app.include_router(api.router)
    app.include_router(pages.router)
    return app


__all__ = ["create_app", "DEFAULT_MAX_UPLOAD_BYTES"]
