"""CSV cells that a spreadsheet will not run as formulas (CSV/formula injection, the OWASP rule): a
text cell starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a leading
``'``, which spreadsheets show as text. Numbers are left as numbers (``-0.5`` stays a number).
Every CSV glotbench writes goes through :func:`cell`; readers of our own sheets undo it with
:func:`uncell`."""

from __future__ import annotations

from typing import Any

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def cell(v: Any) -> Any:
    if isinstance(v, str) and v.startswith(FORMULA_START):
        return "'" + v
    return v


def uncell(v: str) -> str:
    """The text :func:`cell` was given (a sheet read back)."""
    if v.startswith("'") and v[1:].startswith(FORMULA_START):
        return v[1:]
    return v
