"""Word counts for "tokens per word", a quick measure of how expensive a language is for a
tokenizer.

A word is a run of letters, combining marks and digits, allowing inner hyphens and apostrophes
(``Kossuth-díj``, ``česko-slovenský``, ``don't``) and inner ``.``/``,`` between digits
(``3,14``, ``1.5``). That covers Latin script with diacritics (Hungarian ő ű, Czech ě ř ů) and
Cyrillic, including the Mongolian letters ө and ү. Text is NFC-normalised first.

Chinese and Japanese do not separate words with spaces, so each Han / kana character counts as
one word (so "tokens per word" there reads as tokens per character); Latin words and numbers
inside such text still count as words.
"""

from __future__ import annotations

import re
import unicodedata

_CJK_CHARS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ffff"
_CJK = re.compile(f"[{_CJK_CHARS}]")
# A letter/digit/mark unit, excluding CJK (those are handled one by one) and the underscore.
_UNIT = rf"(?:(?![{_CJK_CHARS}])[^\W_]|[\u0300-\u036f])"
_WORD = re.compile(rf"{_UNIT}+(?:(?:[-'’]|(?<=\d)[.,](?=\d)){_UNIT}+)*")


def words(text: str) -> list[str]:
    """Words of ``text`` (see the module docstring); CJK characters one per entry."""
    text = unicodedata.normalize("NFC", text)
    out: list[str] = []
    pos = 0
    for m in _CJK.finditer(text):
        out.extend(_WORD.findall(text[pos : m.start()]))
        out.append(m.group())
        pos = m.end()
    out.extend(_WORD.findall(text[pos:]))
    return out


def count_words(text: str) -> int:
    return len(words(text))
