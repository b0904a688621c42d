"""How long a download may take, and what its failures are called.

Every network call of ``glotbench data`` (and of a run that fetches) is bounded:

* ``GLOTBENCH_FETCH_CONNECT_S`` (default 10): seconds to open a connection;
* a deadline per file of ``GLOTBENCH_FETCH_BASE_S`` (default 30) + its declared size /
  ``GLOTBENCH_FETCH_MIN_RATE`` (bytes per second, default 50,000): a stalled server, or one that
  drips a byte every 20 s, ends there (a file of unknown size: ``GLOTBENCH_FETCH_UNSIZED_S``, default
  600); resolving a Hub revision gets the base deadline;
* a body is read only up to its declared size (plus one chunk): a server that sends more is cut.

The same names are documented in docs/data.md.
"""

from __future__ import annotations

import os

from glotbench.errors import DataError

CHUNK = 64 * 1024  # bytes read at a time: a body longer than declared writes at most this much more


def _env_float(name: str, default: float) -> float:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise DataError(f"${name}={raw!r}: expected a number") from None
    if value <= 0:
        raise DataError(f"${name}={raw!r}: expected a positive number")
    return value


def connect_s() -> float:
    return _env_float("GLOTBENCH_FETCH_CONNECT_S", 10.0)


def base_s() -> float:
    return _env_float("GLOTBENCH_FETCH_BASE_S", 30.0)


def min_rate() -> float:
    return _env_float("GLOTBENCH_FETCH_MIN_RATE", 50_000.0)


def deadline_s(size: int | None) -> float:
    """Seconds a file of ``size`` bytes may take, start to end."""
    if size is None:
        return _env_float("GLOTBENCH_FETCH_UNSIZED_S", 600.0)
    return base_s() + size / min_rate()


FIXES = ("to run without fetching: --offline with GLOTBENCH_DATA=<a folder holding the data>; or point "
         "HF_ENDPOINT / GLOTBENCH_GITHUB_RAW / GLOTBENCH_URL_MIRROR at a mirror (docs/data.md)")


def cause(err: BaseException) -> str:
    """What went wrong, in words a user acts on: no network, refused, timeout (from any exception
    httpx, requests or huggingface_hub raise; the text is checked, as their types differ)."""
    text = f"{type(err).__name__}: {err}".lower()
    if isinstance(err, TimeoutError) or "timeout" in text or "timed out" in text:
        return "timeout"
    if "refused" in text:
        return "connection refused"
    if any(s in text for s in ("name or service not known", "temporary failure in name resolution", "nodename nor",
                               "getaddrinfo", "name resolution", "network is unreachable", "no route to host",
                               "offlinemodeisenabled")):
        return "no network"
    if "connecterror" in text or "connectionerror" in text or "connection" in text:
        return "cannot connect"
    return type(err).__name__


class NetworkError(DataError):
    """A fetch that failed on the way (timeout, no network, refused), not on what was served: the
    other files of the same host are not tried in the same pull (``host`` names it)."""

    def __init__(self, message: str, host: str = ""):
        super().__init__(message)
        self.host = host
