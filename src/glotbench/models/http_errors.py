"""Map the OpenAI / Anthropic SDK exceptions onto glotbench's two model error classes.

Both SDKs share one shape (``APITimeoutError`` < ``APIConnectionError``; ``APIStatusError`` with
``status_code``), so one function serves both. Retrying is the engine's job: backends build their
clients with ``max_retries=0`` and only classify.
"""

from __future__ import annotations

from glotbench.errors import AuthModelError, PermanentModelError, TransientModelError


def _one_line(text: object, limit: int = 300) -> str:
    s = " ".join(str(text).split())
    return s if len(s) <= limit else s[: limit - 3] + "..."


def _url_of(exc: BaseException, fallback: str) -> str:
    req = getattr(exc, "request", None)
    try:
        return str(req.url) if req is not None else fallback
    except Exception:  # noqa: BLE001  (some exceptions carry a request without a URL)
        return fallback


def map_sdk_error(exc: BaseException, sdk, *, url: str, what: str):
    """Return the glotbench error for an SDK exception (``sdk`` is the ``openai`` or ``anthropic`` module).

    ``url`` is the server's base URL, used when the exception does not carry the request URL;
    ``what`` names the model (``openai:gpt-4o@https://...``). Returns None for foreign exceptions.
    """
    where = _url_of(exc, url)
    if isinstance(exc, sdk.APITimeoutError):
        return TransientModelError(f"{what}: request to {where} timed out")
    if isinstance(exc, sdk.APIConnectionError):
        cause = exc.__cause__ or exc.__context__
        detail = f" ({type(cause).__name__}: {_one_line(cause, 120)})" if cause else ""
        return TransientModelError(f"{what}: cannot reach {where}{detail}", connection=True)
    if isinstance(exc, sdk.APIStatusError):
        status = exc.status_code
        body = _one_line(getattr(exc, "message", "") or exc)
        msg = f"{what}: HTTP {status} from {where}: {body}"
        if status == 429 or status >= 500 or status == 408:
            headers = getattr(getattr(exc, "response", None), "headers", None) or {}
            return TransientModelError(msg, retry_after=parse_retry_after(headers.get("retry-after")))
        if status in (401, 403):
            return AuthModelError(msg)
        return PermanentModelError(msg)
    if isinstance(exc, getattr(sdk, "APIResponseValidationError", ())):  # a 200 of the wrong shape
        return TransientModelError(f"{what}: response from {where} is malformed: {_one_line(exc)}")
    if isinstance(exc, sdk.APIError):
        return PermanentModelError(f"{what}: API error from {where}: {_one_line(exc)}")
    return None


# ---------------------------------------------------------------- raw HTTP helpers (aiohttp backends)
MAX_RETRY_AFTER_HEADER = 24 * 3600.0  # a larger value is nonsense: the engine caps what it waits anyway


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header: delta-seconds or an HTTP date; None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    try:
        secs = float(value)
    except ValueError:
        from email.utils import parsedate_to_datetime
        import time

        try:
            secs = parsedate_to_datetime(value).timestamp() - time.time()
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
    if secs != secs:  # NaN
        return None
    return max(0.0, min(secs, MAX_RETRY_AFTER_HEADER))


def server_message(raw: bytes) -> str:
    """The server's own error text from a JSON error body (``{"error": {"message": ...}}``,
    ``{"error": "..."}``, ``{"message": ...}``, ``{"detail": ...}``), else the body's start."""
    import json

    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return raw[:300].decode("utf-8", "replace")
    if isinstance(data, dict):
        err = data.get("error")
        if isinstance(err, dict):
            msg = err.get("message") or err.get("msg") or err
            return str(msg)
        for k in ("error", "message", "detail"):
            if data.get(k):
                return str(data[k])
    return _one_line(raw[:300].decode("utf-8", "replace"))


def same_origin(a: str, b: str) -> bool:
    """Same scheme, host and port (a redirect may move the path, never the server)."""
    from urllib.parse import urlsplit

    pa, pb = urlsplit(a), urlsplit(b)
    default = {"http": 80, "https": 443}
    return (pa.scheme, pa.hostname, pa.port or default.get(pa.scheme)) == (pb.scheme, pb.hostname, pb.port or default.get(pb.scheme))


async def read_capped(resp, limit: int, *, what: str) -> bytes:
    """The body of an aiohttp response, refused past ``limit`` bytes, so a huge answer never sits in
    memory whole. An uncompressed body with a ``Content-Length`` within the cap is read in one go (the
    common case, cheapest); a compressed one (its length is before decompression) or one without a
    length is read in chunks and counted."""
    declared = resp.content_length
    if declared is not None and declared > limit:
        raise PermanentModelError(f"{what} is {declared} bytes, over the {limit}-byte response cap "
                                  f"(raise it with model_args max_response_bytes)")
    if declared is not None and resp.headers.get("Content-Encoding", "identity").lower() == "identity":
        return await resp.read()  # the parser stops at Content-Length, so the check above is the cap
    chunks, size = [], 0
    async for chunk in resp.content.iter_chunked(1 << 16):
        size += len(chunk)
        if size > limit:
            raise PermanentModelError(f"{what} exceeded the {limit}-byte response cap while streaming "
                                      f"(raise it with model_args max_response_bytes)")
        chunks.append(chunk)
    return b"".join(chunks)
