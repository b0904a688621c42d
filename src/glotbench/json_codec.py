"""JSON for cache keys, journal rows, HTTP bodies and results.json: the standard library's ``json``.

One rule per use, so the bytes of a cache key never depend on what a value holds:

* :func:`canonical_bytes`: what a request's cache key is the sha256 of, keys sorted, compact, UTF-8
  (every journal ever written was keyed this way; tests/test_json_codec.py pins one key);
* :func:`dumps_utf8`: a journal row (``default=str``; a lone surrogate, which has no UTF-8, is
  written with ``\\u`` escapes: the same value);
* :func:`dumps_indented`: results.json.
"""

from __future__ import annotations

import json
from typing import Any

COMPACT = (",", ":")  # the separators of sample records (samples.jsonl splices them in as they are)


def canonical_bytes(obj: Any) -> bytes:
    """UTF-8 of ``json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))``."""
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=COMPACT).encode()


def dumps_bytes(obj: Any) -> bytes:
    """UTF-8 JSON of ``obj`` (an HTTP body)."""
    return json.dumps(obj, ensure_ascii=False).encode()


def dumps(obj: Any, separators: tuple[str, str] | None = None) -> str:
    """JSON text of ``obj`` (``default=str``: a value JSON has no type for is written as its text)."""
    return json.dumps(obj, ensure_ascii=False, default=str, separators=separators)


def _utf8(obj: Any, **layout: Any) -> bytes:
    text = json.dumps(obj, ensure_ascii=False, default=str, **layout)
    try:
        return text.encode()
    except UnicodeEncodeError:  # a lone surrogate: escaped, the same value
        return json.dumps(obj, ensure_ascii=True, default=str, **layout).encode()


def dumps_indented(obj: Any) -> bytes:
    """UTF-8 of ``json.dumps(obj, ensure_ascii=False, indent=2, default=str)`` (results.json)."""
    return _utf8(obj, indent=2)


def dumps_utf8(obj: Any, separators: tuple[str, str] | None = None) -> bytes:
    """UTF-8 of :func:`dumps` (a journal row)."""
    return _utf8(obj, separators=separators)


def loads(text: str | bytes) -> Any:
    """``json.loads``: big integers stay exact, ``NaN`` reads back as written."""
    return json.loads(text)
