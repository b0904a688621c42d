"""Keyboard layouts for the ``typos`` perturbation: which letters sit next to each letter.

A layout is its rows of keys, top (digits) to bottom, each row a string aligned so that the key at
index i of one row is nearest the keys at i-1, i and i+1 of the rows above and below (the stagger
of a real keyboard, simplified as the US QWERTY map always was); ``" "`` marks a key that types no
letter (a digit, a sign), which is never a typo's result. A row may start left of the others
(``offset``: Hungarian's ``í`` left of ``y``). Only the unshifted letters count; case is kept by
the caller.

Built in, by language: Czech QWERTZ (ČSN 36 9050: ``ěščřžýáíé`` on the digit row, ``ú`` after
``p``, ``ů`` after ``l``), Hungarian QWERTZ (MSZ 7795.3, 102 keys: ``öüó`` after ``9``, ``őú`` after
``p``, ``éáű`` after ``l``, ``í`` left of ``y``), Mongolian Cyrillic (the Mongolian standard
keyboard as xkeyboard-config's ``symbols/mn`` lays it out: ``е щ`` after ``0``, then the rows
``фцужэнгшүзкъ``, ``йыбөахролдп``, ``ячёсмитьвю``), Russian ЙЦУКЕН (GOST 6431-90, as xkeyboard-config's
``symbols/ru`` "basic" lays it out: ``ё`` left of ``1``, then the rows ``йцукенгшщзхъ``, ``фывапролджэ``,
``ячсмитьбю``); any other language the US QWERTY letters.
"""

from __future__ import annotations

from functools import lru_cache

# language -> (layout name, rows as (offset, keys))
LAYOUTS: dict[str, tuple[str, tuple[tuple[int, str], ...]]] = {
    "cs": ("Czech QWERTZ (ČSN 36 9050)",
           ((0, " ěščřžýáíé"), (0, "qwertzuiopú"), (0, "asdfghjklů"), (0, "yxcvbnm"))),
    "hu": ("Hungarian QWERTZ (MSZ 7795.3, 102 keys)",
           ((0, "         öüó"), (0, "qwertzuiopőú"), (0, "asdfghjkléáű"), (-1, "íyxcvbnm"))),
    "mn": ("Mongolian Cyrillic (the Mongolian standard keyboard)",
           ((0, "          ещ"), (0, "фцужэнгшүзкъ"), (0, "йыбөахролдп"), (0, "ячёсмитьвю"))),
    # ё is the key left of 1 (TLDE): the digit row's index i is the key AE(i+1), so ё is at -1
    "ru": ("Russian ЙЦУКЕН (GOST 6431-90)",
           ((-1, "ё"), (0, "йцукенгшщзхъ"), (0, "фывапролджэ"), (0, "ячсмитьбю"))),
}
US_QWERTY = ("US QWERTY", ((0, "qwertyuiop"), (0, "asdfghjkl"), (0, "zxcvbnm")))


def neighbours(rows: tuple[tuple[int, str], ...]) -> dict[str, str]:
    """Each letter of ``rows`` -> the letters next to it: left and right in its row, and the three
    nearest in the rows above and below."""
    grid = [{offset + i: ch for i, ch in enumerate(keys) if ch != " "} for offset, keys in rows]
    out: dict[str, str] = {}
    for r, row in enumerate(grid):
        for c, ch in row.items():
            near = [row[j] for j in (c - 1, c + 1) if j in row]
            for other in (r - 1, r + 1):
                if 0 <= other < len(grid):
                    near += [grid[other][j] for j in (c - 1, c, c + 1) if j in grid[other]]
            out[ch] = "".join(near)
    return out


@lru_cache(maxsize=None)
def layout_for(language: str | None) -> tuple[str, dict[str, str]]:
    """(the layout's name, its neighbour map) for ``language``'s typists (US QWERTY when none is built in)."""
    name, rows = LAYOUTS.get(language or "", US_QWERTY)
    return name, neighbours(rows)
