"""JSON parsing with limits, for every body a client sends (uploads, gold files, review bodies).

Python's ``json`` recurses once per nesting level (100k ``[`` raise RecursionError) and turns an
integer literal of more than 4,300 digits into a ValueError; both used to escape as HTTP 500.
:func:`loads` checks the nesting depth before parsing and refuses long integer literals, raising
:class:`JSONLimitError` (a ValueError) with a sentence a user can act on."""

from __future__ import annotations

import json
import re

MAX_DEPTH = 32
MAX_INT_DIGITS = 64
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


class JSONLimitError(ValueError):
    pass


def nesting_depth(text: str, stop_at: int) -> int:
    """The deepest ``[``/``{`` nesting of ``text`` (strings skipped), stopping early past ``stop_at``."""
    depth = deepest = 0
    for m in _TOKENS.finditer(text):
        c = m.group()
        if c in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > stop_at:
                    break
        elif c in "]}":
            depth -= 1
    return deepest


def loads(text: str, max_depth: int = MAX_DEPTH, max_int_digits: int = MAX_INT_DIGITS):
    """``json.loads`` that raises :class:`JSONLimitError` for too deep nesting or too long numbers
    and ``json.JSONDecodeError`` for malformed text."""
    if nesting_depth(text, max_depth) > max_depth:
        raise JSONLimitError(f"The JSON is nested too deeply: the limit is {max_depth} levels.")

    def parse_int(s: str) -> int:
        if len(s.lstrip("-")) > max_int_digits:
            raise JSONLimitError(f"A number in the JSON is too long: the limit is {max_int_digits} digits.")
        return int(s)

    def parse_float(s: str) -> float:
        if len(s) > max_int_digits + 32:
            raise JSONLimitError(f"A number in the JSON is too long: the limit is {max_int_digits} digits.")
        return float(s)

    try:
        return json.loads(text, parse_int=parse_int, parse_float=parse_float)
    except RecursionError:  # belt and braces: the depth check above should have caught it
        raise JSONLimitError(f"The JSON is nested too deeply: the limit is {max_depth} levels.") from None
