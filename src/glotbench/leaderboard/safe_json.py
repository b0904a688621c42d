"""JSON parsing with limits, for every body a client sends (uploads, gold files, review bodies).

Python's ``json`` recurses once per nesting level (100k ``[`` raise RecursionError) and turns an
integer literal of more than 4,300 digits into a ValueError; both used to escape as HTTP 500.
:func:`loads` checks the nesting depth before parsing and refuses long integer literals, raising
:class:`JSONLimitError` (a ValueError) with a sentence a user can act on.

The depth check is a linear scan: a regular expression that matches one character finds the next
quote or bracket, and a string's rest is skipped with possessive quantifiers (``*+``, Python 3.11),
which never backtrack, so every character is looked at a bounded number of times. A regex that matched whole strings (``"(?:[^"\\]|\\.)*"``) was quadratic on an unterminated
run of escaped quotes (``'"' + '\\"' * 20000``: 108 s for 40 KB, holding the GIL). A ``deadline``
(a :func:`time.monotonic` value) bounds the work of one request on top of that."""

from __future__ import annotations

import json
import re
import time

MAX_DEPTH = 32
MAX_INT_DIGITS = 64
_SPECIAL = re.compile(r'[\[\]{}"]')  # one character per match
_STRING_REST = re.compile(r'(?:[^"\\]++|\\.)*+"', re.S)  # possessive: no backtracking, linear
_CHECK_EVERY = 4096  # tokens between two looks at the clock


class JSONLimitError(ValueError):
    pass


class JSONTimeLimitError(JSONLimitError):
    pass


def _over_time(deadline: float | None) -> None:
    if deadline is not None and time.monotonic() > deadline:
        raise JSONTimeLimitError("The JSON took too long to read: send a smaller or simpler file.")


def nesting_depth(text: str, stop_at: int, deadline: float | None = None) -> int:
    """The deepest ``[``/``{`` nesting of ``text`` (strings skipped), stopping early past ``stop_at``.
    Linear in ``len(text)``: every character is looked at a bounded number of times. An
    unterminated string ends the scan (the parser then reports the malformed JSON)."""
    depth = deepest = 0
    pos, n, steps = 0, len(text), 0
    find, string_rest = _SPECIAL.search, _STRING_REST.match
    while pos < n:
        m = find(text, pos)
        if m is None:
            break
        c, pos = m.group(), m.end()
        steps += 1
        if steps % _CHECK_EVERY == 0:
            _over_time(deadline)
        if c == '"':
            m = string_rest(text, pos)
            if m is None:  # unterminated: json.loads reports it
                return deepest
            pos = m.end()
        elif c in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > stop_at:
                    break
        elif c in "]}":
            depth -= 1
    return deepest


def loads(text: str, max_depth: int = MAX_DEPTH, max_int_digits: int = MAX_INT_DIGITS,
          max_chars: int | None = None, deadline: float | None = None):
    """``json.loads`` that raises :class:`JSONLimitError` for too deep nesting, too long numbers,
    more than ``max_chars`` characters or work past ``deadline`` (``time.monotonic()``), and
    ``json.JSONDecodeError`` for malformed text."""
    if max_chars is not None and len(text) > max_chars:
        raise JSONLimitError(f"The JSON is too large: the limit is {max_chars:,} characters.")
    if nesting_depth(text, max_depth, deadline) > max_depth:
        raise JSONLimitError(f"The JSON is nested too deeply: the limit is {max_depth} levels.")
    _over_time(deadline)

    def parse_int(s: str) -> int:
        if len(s.lstrip("-")) > max_int_digits:
            raise JSONLimitError(f"A number in the JSON is too long: the limit is {max_int_digits} digits.")
        return int(s)

    def parse_float(s: str) -> float:
        if len(s) > max_int_digits + 32:
            raise JSONLimitError(f"A number in the JSON is too long: the limit is {max_int_digits} digits.")
        return float(s)

    try:
        doc = json.loads(text, parse_int=parse_int, parse_float=parse_float)
    except RecursionError:  # belt and braces: the depth check above should have caught it
        raise JSONLimitError(f"The JSON is nested too deeply: the limit is {max_depth} levels.") from None
    _over_time(deadline)
    return doc
