"""The first JSON object in a model output.

Scans each ``{`` in order and returns the first one that starts a valid JSON object, whatever
surrounds it (prose, a ```json fence, a thinking block is the caller's to strip). Braces and
quotes inside strings are handled by the JSON decoder itself. When strict JSON fails, one small
repair is tried on the balanced ``{…}`` span: single-quoted strings → double-quoted, trailing
commas dropped, Python ``True/False/None`` → ``true/false/null``, ``//`` and ``/* */`` comments
dropped. Nothing else is guessed (no closing of truncated objects, no unquoted keys), so a broken
object gives None rather than a made-up one. An object nested inside a broken but closed outer
object is not returned in its place; inside a truncated (never closed) one, the first complete
inner object is.
"""

from __future__ import annotations

import json
from typing import Any

_DECODER = json.JSONDecoder()
MAX_STARTS = 100_000  # "{" positions tried before giving up (bounds the time on brace-heavy output)
_PY_LITERALS = {"True": "true", "False": "false", "None": "null"}


def _matching_braces(text: str) -> dict[int, int]:
    """For each ``{``, the index just past its closing ``}``, in one pass.

    Quotes open strings only inside braces (an apostrophe in the prose around an object is not a
    string), both quote kinds count, and braces inside strings are ignored.
    """
    match: dict[int, int] = {}
    stack: list[int] = []
    i, n, quote = 0, len(text), None
    while i < n:
        c = text[i]
        if quote:
            if c == "\\":
                i += 2
                continue
            if c == quote:
                quote = None
        elif c == "{":
            stack.append(i)
        elif c == "}":
            if stack:
                match[stack.pop()] = i + 1
        elif c in "\"'" and stack:
            quote = c
        i += 1
    return match


def _repair(src: str) -> str:
    """Rewrite JSON-ish text (single quotes, trailing commas, Python literals, comments) as JSON."""
    out: list[str] = []
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if c in "\"'":
            j, buf = i + 1, []
            while j < n and src[j] != c:
                if src[j] == "\\" and j + 1 < n:
                    nxt = src[j + 1]
                    buf.append("'" if nxt == "'" else "\\" + nxt)
                    j += 2
                    continue
                buf.append('\\"' if src[j] == '"' else src[j])
                j += 1
            out.append('"' + "".join(buf) + '"')
            i = j + 1
        elif src.startswith("//", i):
            while i < n and src[i] != "\n":
                i += 1
        elif src.startswith("/*", i):
            end = src.find("*/", i + 2)
            i = n if end < 0 else end + 2
        elif c == ",":
            j = i + 1
            while j < n and src[j].isspace():
                j += 1
            if j < n and src[j] in "}]":
                i += 1  # trailing comma
            else:
                out.append(c)
                i += 1
        elif c.isalpha():
            j = i
            while j < n and (src[j].isalnum() or src[j] == "_"):
                j += 1
            word = src[i:j]
            out.append(_PY_LITERALS.get(word, word))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def first_json_object(text: str | None) -> dict[str, Any] | None:
    """The first JSON object in ``text`` (strict, else lightly repaired); None if there is none."""
    if not text:
        return None
    match = _matching_braces(text)
    pos, tries = text.find("{"), 0
    while pos >= 0 and tries < MAX_STARTS:
        tries += 1
        try:
            value, _end = _DECODER.raw_decode(text, pos)
            if isinstance(value, dict):
                return value
        except (json.JSONDecodeError, RecursionError):
            pass
        end = match.get(pos)
        if end is not None:
            try:
                value = json.loads(_repair(text[pos:end]))
                if isinstance(value, dict):
                    return value
            except (json.JSONDecodeError, RecursionError):
                pass
            pos = text.find("{", end)  # do not return a piece of this broken object
        else:
            pos = text.find("{", pos + 1)
    return None
