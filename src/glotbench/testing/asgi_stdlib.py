"""Serve an ASGI app with the standard library alone (asyncio streams, HTTP/1.1, one request per
connection), so ``python -m glotbench.testing.stub_openai`` runs where uvicorn (the ``serve``
extra) is not installed. It is for the stub's loopback tests and docs recipes, not for production:
no TLS, no chunked request bodies, no pipelining; each response ends with ``Connection: close``.
"""

from __future__ import annotations

import asyncio
from urllib.parse import unquote

MAX_HEADER_BYTES = 64 << 10


async def _handle(app, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
        writer.close()
        return
    lines = head.decode("latin-1").split("\r\n")
    try:
        method, target, _version = lines[0].split(" ", 2)
    except ValueError:
        writer.close()
        return
    headers = []
    length = 0
    for line in lines[1:]:
        if not line:
            continue
        name, _, value = line.partition(":")
        headers.append((name.strip().lower().encode("latin-1"), value.strip().encode("latin-1")))
        if name.strip().lower() == "content-length":
            length = int(value.strip() or 0)
    body = await reader.readexactly(length) if length else b""
    path, _, query = target.partition("?")
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method.upper(),
             "scheme": "http", "path": unquote(path), "raw_path": path.encode("latin-1"),
             "query_string": query.encode("latin-1"), "headers": headers, "root_path": "",
             "server": writer.get_extra_info("sockname")[:2], "client": writer.get_extra_info("peername")[:2]}
    sent_body = False

    async def receive():
        nonlocal sent_body
        if not sent_body:
            sent_body = True
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.Event().wait()  # the client stays connected until the response is done
        return {"type": "http.disconnect"}

    async def send(message):
        if message["type"] == "http.response.start":
            out = [f"HTTP/1.1 {message['status']} X".encode("latin-1")]
            for k, v in message.get("headers", []):
                if k.lower() != b"connection":
                    out.append(k + b": " + v)
            out.append(b"connection: close")
            writer.write(b"\r\n".join(out) + b"\r\n\r\n")
        elif message["type"] == "http.response.body":
            writer.write(message.get("body", b""))
            await writer.drain()

    try:
        await app(scope, receive, send)
        await writer.drain()
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        writer.close()


def serve(app, host: str = "127.0.0.1", port: int = 8765) -> None:
    """Serve ``app`` on ``host:port`` until interrupted."""

    async def main() -> None:
        server = await asyncio.start_server(lambda r, w: _handle(app, r, w), host, port, limit=MAX_HEADER_BYTES)
        async with server:
            await server.serve_forever()

    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
