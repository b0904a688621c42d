"""Map the OpenAI / Anthropic SDK exceptions onto glotbench's two model error classes.

Both SDKs share one shape (``APITimeoutError`` < ``APIConnectionError``; ``APIStatusError`` with
``status_code``), so one function serves both. Retrying is the engine's job: backends build their
clients with ``max_retries=0`` and only classify.
"""

from __future__ import annotations

from glotbench.errors import PermanentModelError, TransientModelError


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
        return TransientModelError(f"{what}: cannot reach {where}{detail}")
    if isinstance(exc, sdk.APIStatusError):
        status = exc.status_code
        body = _one_line(getattr(exc, "message", "") or exc)
        msg = f"{what}: HTTP {status} from {where}: {body}"
        if status == 429 or status >= 500 or status == 408:
            return TransientModelError(msg)
        return PermanentModelError(msg)
    if isinstance(exc, sdk.APIError):
        return PermanentModelError(f"{what}: API error from {where}: {_one_line(exc)}")
    return None
