"""JSON on the request path, through orjson where its output means exactly what the standard
library's would, and through the standard library everywhere else.

A judged run encodes every request three times (its cache key, the HTTP body, the journal row)
and decodes every answer: with ``json`` that was a fifth of the engine's CPU per item. orjson
encodes a 1 KB request in about a tenth of the time, but differs from ``json`` in a few places:

* ``NaN`` and infinities become ``null`` (``json`` writes ``NaN``): a number would silently become
  ``None`` on the way back;
* float spelling: ``1e-05`` is ``0.00001`` and ``1.5e-07`` is ``1.5e-7`` (the values are the same,
  but a cache key is a hash of the text);
* subclasses of ``float`` (numpy's) go to ``default`` instead of being written as numbers; integers
  past 64 bits, non-string dict keys and lone surrogates raise;
* reading, an integer past 64 bits comes back as a float; ``NaN``, ``1e400`` and lone surrogates
  raise.

So :func:`dumps`, :func:`dumps_bytes` and :func:`canonical_bytes` first walk the object: only exact ``str``/``int``/``float``/
``bool``/``None``/``list``/``tuple``/``dict`` values with finite floats (and, for a cache key, floats
whose ``repr`` has no exponent, which orjson spells identically: checked on four million floats)
take the fast path; anything else, or any orjson error, takes ``json``, so the text means the same
(and a cache key is byte-identical to :func:`json.dumps` with sorted keys: tests/test_json_codec.py).
:func:`loads` hands text with a run of 19 or more digits (a number that may not fit 64 bits) to
``json``, tries orjson on the rest and falls back to ``json`` for what orjson refuses: the same
values either way.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

_INT_MIN, _INT_MAX = -(1 << 63), (1 << 64) - 1
COMPACT = (",", ":")  # json.dumps separators of the text orjson writes
# A run of 19 digits (|n| >= 10**18) may be a number past 64 bits, which orjson reads as a float. Found by
# mapping every ASCII digit to "0" (bytes.translate, C speed) and searching for 19 zeros: a regex
# `[0-9]{19}` search did the same at ~14 ns a character, more than orjson's whole parse.
_DIGITS_TO_ZERO = bytes.maketrans(b"0123456789", b"0" * 10)
_LONG_RUN = b"0" * 19


def _float_ok(v: float, key_text: bool) -> bool:
    """Finite (``key_text``: and spelled without an exponent by ``repr``, which orjson spells the
    same: repr uses one exactly when the number is not 0 and outside [1e-4, 1e16))."""
    if key_text:
        return v == 0.0 or 1e-4 <= abs(v) < 1e16  # False for nan and inf too
    return v - v == 0.0  # False for nan and inf


def _plain(obj: Any, key_text: bool, tuples: bool = True) -> bool:
    """Whether orjson writes ``obj`` with the meaning (``key_text``: the exact text) ``json`` would
    (``tuples=False``: and a tuple anywhere is refused, see :func:`reads_back_same`).
    Scalars inside a container are checked inline (a function call per value was half the cost)."""
    t = type(obj)
    if t is dict:
        values = obj.values()
        for k in obj:
            if type(k) is not str:
                return False
    elif t is list or (t is tuple and tuples):
        values = obj
    else:
        values = (obj,)
    for v in values:
        tv = type(v)
        if tv is str or v is None or tv is bool:
            continue
        if tv is int:
            if not _INT_MIN <= v <= _INT_MAX:
                return False
        elif tv is float:
            if not _float_ok(v, key_text):
                return False
        elif tv is dict or tv is list or (tv is tuple and tuples):
            if not _plain(v, key_text, tuples):
                return False
        else:
            return False
    return True


def reads_back_same(obj: Any) -> bool:
    """Whether ``obj`` reads back from its JSON (:func:`loads` of :func:`dumps`) as the same values of the
    same types: exact ``str``/``int`` (64-bit)/finite ``float``/``bool``/``None``, lists and ``str``-keyed
    dicts of them (a tuple reads back as a list, an int key as a string, anything else as its ``str``)."""
    return _plain(obj, False, False)


def _fast(obj: Any, key_text: bool, option: int = 0) -> bytes | None:
    """orjson's bytes for ``obj`` where they mean what ``json``'s would (see :func:`_plain`), else None."""
    if _plain(obj, key_text):
        try:
            return orjson.dumps(obj, option=option)
        except (orjson.JSONEncodeError, TypeError):
            pass
    return None


def canonical_bytes(obj: Any) -> bytes:
    """UTF-8 of ``json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))``, the same
    bytes (what a cache key hashes: no round trip through ``str``)."""
    fast = _fast(obj, True, orjson.OPT_SORT_KEYS)
    return fast if fast is not None else json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode()


def dumps_bytes(obj: Any) -> bytes:
    """UTF-8 JSON of ``obj`` (an HTTP body): the values of ``json.dumps(obj, ensure_ascii=False)``."""
    fast = _fast(obj, False)
    return fast if fast is not None else json.dumps(obj, ensure_ascii=False).encode()


def dumps(obj: Any, separators: tuple[str, str] | None = None) -> str:
    """JSON text of ``obj`` (a journal row): the values of ``json.dumps(obj, ensure_ascii=False,
    default=str, separators=separators)``; compact where orjson writes it (``separators=COMPACT``:
    compact either way, as sample records are)."""
    fast = _fast(obj, False)
    return fast.decode() if fast is not None else json.dumps(obj, ensure_ascii=False, default=str, separators=separators)


def _utf8(obj: Any, option: int, **layout: Any) -> bytes:
    """orjson's bytes where they mean what ``json.dumps(obj, default=str, **layout)`` would, else that
    text as UTF-8; a text the standard library writes with a lone surrogate (no UTF-8 for it) is
    written with ``\\u`` escapes instead: the same values."""
    fast = _fast(obj, False, option)
    if fast is not None:
        return fast
    text = json.dumps(obj, ensure_ascii=False, default=str, **layout)
    try:
        return text.encode()
    except UnicodeEncodeError:
        return json.dumps(obj, ensure_ascii=True, default=str, **layout).encode()


def dumps_indented(obj: Any) -> bytes:
    """UTF-8 of ``json.dumps(obj, ensure_ascii=False, indent=2, default=str)`` (results.json): the same
    values, and where orjson writes it the same layout (with ``indent`` the standard library encodes
    in pure Python: 12 ms for a judged task's 250 KB results, orjson 0.4 ms)."""
    return _utf8(obj, orjson.OPT_INDENT_2, indent=2)


def dumps_utf8(obj: Any, separators: tuple[str, str] | None = None) -> bytes:
    """UTF-8 of :func:`dumps` (a journal row, bound as bytes: a 4 KB CJK text decoded to ``str`` and
    encoded again by sqlite3 cost ~14 us, orjson's encoding ~1)."""
    return _utf8(obj, 0, separators=separators)


def has_long_digit_run(data: bytes | bytearray) -> bool:
    """Whether ``data`` holds 19 ASCII digits in a row (what ``re.search(rb"[0-9]{19}", data)`` finds)."""
    return _LONG_RUN in data.translate(_DIGITS_TO_ZERO)


def loads(text: str | bytes) -> Any:
    """``json.loads(text)``: orjson where it parses the text, ``json`` where it refuses it."""
    if isinstance(text, str):
        try:
            data = text.encode()
        except UnicodeEncodeError:  # a lone surrogate, which orjson refuses too
            return json.loads(text)
    else:
        data = text
    if not has_long_digit_run(data):
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            pass
    return json.loads(text)
