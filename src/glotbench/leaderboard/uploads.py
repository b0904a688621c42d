"""Reading request bodies with a size limit enforced while reading (not after buffering it all) and
a deadline, so a client that sends half a body cannot hold a request open for ever. Callers read the
body while holding no database connection (see docs/leaderboard.md, "Hardening")."""

from __future__ import annotations

import asyncio

from starlette.datastructures import FormData, UploadFile
from starlette.requests import Request

FORM_OVERHEAD = 64 * 1024  # room for multipart headers and the other form fields


class TooLarge(Exception):
    pass


class TooSlow(Exception):
    pass


async def read_body(request: Request, limit: int) -> bytes:
    """The whole body, :class:`TooLarge` as soon as more than ``limit`` bytes arrive, or
    :class:`TooSlow` when it is not complete within the app's ``body_timeout_s``."""
    declared = request.headers.get("content-length")
    if declared and (len(declared) > 18 or (declared.isdigit() and int(declared) > limit)):
        raise TooLarge()
    buf = bytearray()

    async def pull():
        async for chunk in request.stream():
            buf.extend(chunk)
            if len(buf) > limit:
                raise TooLarge()

    try:
        async with asyncio.timeout(request.app.state.settings.body_timeout_s):
            await pull()
    except TimeoutError:
        raise TooSlow() from None
    return bytes(buf)


async def read_form(request: Request, limit: int, max_files: int = 2) -> FormData:
    """Parse a urlencoded or multipart form from a body read under ``limit``. ``max_files``: file
    fields the form has; a browser sends every file input, the empty ones too (the administrator's
    task form has four: gold, train, dev, test)."""
    body = await read_body(request, limit)
    sent = False

    async def receive():
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return await Request(request.scope, receive).form(max_files=max_files, max_fields=50)


async def file_bytes(form: FormData, name: str) -> bytes | None:
    value = form.get(name)
    if isinstance(value, UploadFile):
        return await value.read()
    return None
