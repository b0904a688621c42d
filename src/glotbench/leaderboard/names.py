"""Checks on free text that other people will see (user, team and model names, metadata)."""

from __future__ import annotations

import unicodedata

# Cc: control characters; Cf: format characters (RTL/LTR overrides U+202A-202E, U+2066-2069,
# zero-width joiners, the BOM); Co/Cs/Cn: private use, surrogates, unassigned; Zl/Zp: line breaks.
REFUSED_CATEGORIES = {"Cc", "Cf", "Co", "Cs", "Cn", "Zl", "Zp"}


def bad_characters(text: str, allow_newlines: bool = False) -> list[str]:
    """The code points of ``text`` that must not be shown to others, as ``U+XXXX`` strings."""
    bad = []
    for ch in text:
        if allow_newlines and ch in "\n\r\t":
            continue
        if unicodedata.category(ch) in REFUSED_CATEGORIES:
            bad.append(f"U+{ord(ch):04X}")
    return sorted(set(bad))


def name_key(name: str) -> str:
    """The form two names are compared in: 'Boss', 'boss' and 'BOSS' are one name."""
    return unicodedata.normalize("NFKC", name).casefold()


ECHO_LIMIT = 60  # characters of a client's input an error message repeats (issue 48: a 3 MB task name came back whole)


def shown(value: object, limit: int = ECHO_LIMIT) -> str:
    """``repr`` of what a client sent, cut to its first ``limit`` characters (with how long it was):
    an error message names the input without echoing megabytes of it."""
    text = value if isinstance(value, str) else str(value)
    if len(text) <= limit:
        return repr(text) if isinstance(value, str) else text
    return f"{text[:limit]!r}... ({len(text)} characters)"
