"""Regexes a file supplies (a judge's ``reply.regex``, lm-eval's ``regex_replace``), run on text
nobody vetted (model output, records) with a time bound.

The ``regex`` package (its default VERSION0 keeps Python ``re``'s syntax and semantics, backreferences
and lookarounds included, which RE2 refuses) takes ``timeout=`` on every matching call and raises
``TimeoutError`` when a pattern backtracks past it; :class:`RegexTimeout` is that, named. A judge
counts a timed-out reply as unreadable (docs/untrusted-files.md). The bound is per call, in seconds:
``GLOTBENCH_REGEX_TIMEOUT_S`` (default 1).
"""

from __future__ import annotations

import os
import re

import regex

DEFAULT_TIMEOUT_S = 1.0


class RegexTimeout(Exception):
    """A file's regex ran past the time bound on one text."""


def timeout_s() -> float:
    try:
        value = float(os.environ.get("GLOTBENCH_REGEX_TIMEOUT_S", DEFAULT_TIMEOUT_S))
    except ValueError:
        return DEFAULT_TIMEOUT_S
    return value if value > 0 else DEFAULT_TIMEOUT_S


def compile(pattern: str, ignore_case: bool = False) -> regex.Pattern:  # noqa: A001 - as re.compile
    """``pattern`` compiled as ``re`` reads it (raises ``regex.error``, a ``re.error`` look-alike)."""
    return regex.compile(pattern, regex.V0 | (regex.IGNORECASE if ignore_case else 0))


def check(pattern: str) -> tuple[int | None, str | None]:
    """(number of groups, None) or (None, why it is not a regular expression)."""
    try:
        return compile(pattern).groups, None
    except (regex.error, re.error, TypeError, ValueError) as err:
        return None, str(err)


def finditer(pattern: regex.Pattern, text: str) -> list:
    """Every match of ``pattern`` in ``text``, bounded; :class:`RegexTimeout` past the bound."""
    try:
        return list(pattern.finditer(text, timeout=timeout_s()))
    except TimeoutError:
        raise RegexTimeout(f"the regex took over {timeout_s():g} s on this text") from None


def search(pattern: regex.Pattern, text: str):
    try:
        return pattern.search(text, timeout=timeout_s())
    except TimeoutError:
        raise RegexTimeout(f"the regex took over {timeout_s():g} s on this text") from None


def sub(pattern: str, repl, string: str, count: int = 0) -> str:
    try:
        return compile(pattern).sub(repl, string, count=count, timeout=timeout_s())
    except TimeoutError:
        raise RegexTimeout(f"regex {pattern[:40]!r} took over {timeout_s():g} s") from None
