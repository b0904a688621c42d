"""Text helpers shared by the extractors: normalisation and script-aware word patterns.

Python's ``\\b`` treats CJK characters as word characters, so "答案是C" has no boundary before
"C". Here a *word character* is a letter or digit of an alphabetic script (Latin, Greek,
Cyrillic) or a digit; CJK characters never glue onto a Latin label or number.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable

from glotbench.languages import LanguagePack

# Letters and digits of alphabetic scripts (Latin incl. accented, Greek, Cyrillic) and ASCII digits.
WORD_CHARS = "0-9A-Za-z\u00aa\u00b5\u00ba\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f\u0370-\u03ff\u0400-\u052f\u1e00-\u1eff"
WORD = f"[{WORD_CHARS}]"
NOT_BEFORE = f"(?<!{WORD})"  # no word character just before
NOT_AFTER = f"(?!{WORD})"  # no word character just after

_WORD_RE = re.compile(WORD)

# Full-width ASCII (Ａ, １, ：, （) to ASCII; U+2212 minus and the ideographic space too.
_WIDTH = {chr(c): chr(c - 0xFEE0) for c in range(0xFF01, 0xFF5F)}
_WIDTH.update({"\u2212": "-", "\u3000": " "})
_WIDTH_TABLE = str.maketrans(_WIDTH)
_WIDE = re.compile("[\uff01-\uff5e\u2212\u3000]")  # the keys of _WIDTH


def fold_width(text: str) -> str:
    """Map full-width ASCII forms to ASCII ("Ａ" → "A", "１２３" → "123"); nothing else changes."""
    if _WIDE.search(text) is None:
        return text  # nothing to map (``translate`` looks every character of a non-ASCII text up in the table)
    return text.translate(_WIDTH_TABLE)


def is_word_char(ch: str) -> bool:
    return bool(ch) and bool(_WORD_RE.fullmatch(ch))


def _body(word: str) -> str:
    return r"\s+".join(re.escape(p) for p in word.split())  # inner spaces: any run of whitespace


def _sides(word: str) -> tuple[str, str]:
    return (NOT_BEFORE if is_word_char(word[:1]) else "", NOT_AFTER if is_word_char(word[-1:]) else "")


def word_pattern(word: str) -> str:
    """A regex for ``word`` (case-insensitive) that does not match inside a longer alphabetic word.

    Inner spaces match any run of whitespace. Boundaries are only required on the sides where the
    word itself starts or ends with an alphabetic character, so CJK words glue to anything.
    """
    left, right = _sides(word)
    return f"{left}(?i:{_body(word)}){right}"


def words_alternation(words: Iterable[str]) -> str:
    """One non-capturing group matching any of ``words``, longest first. Empty input never matches.

    It matches exactly what ``(?:word_pattern(w1)|word_pattern(w2)|...)`` matches, but neighbouring
    words that need the same boundaries share them: ``L(?i:w1|w2)R`` instead of
    ``L(?i:w1)R|L(?i:w2)R``. The boundaries are zero-width and tried at the same position, so the
    engine tries the same words in the same order either way; spelling the big boundary classes once
    per run instead of twice per word made the choice extractor's patterns 4-8x faster to compile
    (docs/performance.md; tests/test_word_alternation.py diffs the two forms)."""
    uniq = sorted({w.strip() for w in words if w and w.strip()}, key=len, reverse=True)
    if not uniq:
        return "(?!)"
    runs: list[tuple[tuple[str, str], list[str]]] = []  # (boundaries, bodies) of consecutive words
    for w in uniq:
        sides = _sides(w)
        if runs and runs[-1][0] == sides:
            runs[-1][1].append(_body(w))
        else:
            runs.append((sides, [_body(w)]))
    return "(?:" + "|".join(f"{left}(?i:{'|'.join(bodies)}){right}" for (left, right), bodies in runs) + ")"


_NORM_CACHE: dict[int, tuple[LanguagePack, dict[str, str]]] = {}  # the pack is kept so its id stays its own
_NORM_CACHE_MAX = 50_000


def normalize(text: str, pack: LanguagePack) -> str:
    """Normalise ``text`` for comparison, as the pack's ``normalization`` settings say (memoised per
    pack: option texts are normalised again for every answer, and this was an engine hot spot)."""
    entry = _NORM_CACHE.get(id(pack))
    if entry is None:  # a pack's first text (its tuple and dict were made on every call before)
        entry = _NORM_CACHE.setdefault(id(pack), (pack, {}))
    cache = entry[1]
    out = cache.get(text)
    if out is None:
        if len(cache) >= _NORM_CACHE_MAX:
            cache.clear()
        out = cache[text] = _normalize(text, pack)
    return out


class _ByCategory(dict):
    """A ``str.translate`` table filled on first sight of each character: ``rule(char)`` gives what
    the character becomes (a string, or None to drop it). The same result as a per-character loop
    calling ``unicodedata.category``, which was most of the choice extractor's option normalisation
    (docs/performance.md; tests/test_normalize_table.py compares both on every pack)."""

    def __init__(self, rule):
        super().__init__()
        self._rule = rule

    def __missing__(self, code: int):
        if len(self) >= _TABLE_MAX:  # an output of every script at once: start again, stay bounded
            self.clear()
        out = self[code] = self._rule(chr(code))
        return out


_TABLE_MAX = 1 << 16


# Punctuation and symbols become spaces; combining marks (Mn) are dropped. A character kept as it
# is maps to its own code point.
_PUNCT_TO_SPACE = _ByCategory(lambda c: " " if unicodedata.category(c)[0] in "PS" else ord(c))
_DROP_MN = _ByCategory(lambda c: None if unicodedata.category(c) == "Mn" else ord(c))


@functools.lru_cache(maxsize=64)
def _fold_table(pairs: tuple[tuple[str, str], ...]) -> dict[int, str]:
    """``str.translate`` table of a pack's ``fold`` (ё -> е), upper-case forms too (ё -> е, Ё -> Е)."""
    table = {}
    for a, b in pairs:
        table[ord(a)] = b
        if len(a.upper()) == 1 and a.upper() != a:
            table.setdefault(ord(a.upper()), b.upper())
    return table


def _normalize(text: str, pack: LanguagePack) -> str:
    cfg = pack.normalization
    out = unicodedata.normalize(cfg.unicode_form, text)
    if cfg.lowercase:
        out = out.casefold()
    if cfg.fold:
        out = out.translate(_fold_table(tuple(cfg.fold.items())))
    if cfg.strip_diacritics:
        out = unicodedata.normalize("NFD", out).translate(_DROP_MN)
        out = unicodedata.normalize("NFC", out)
    if cfg.strip_punctuation:
        # Punctuation and symbols become spaces, so "ам.доллар" and "ам. доллар" compare equal.
        out = out.translate(_PUNCT_TO_SPACE)
    if cfg.collapse_whitespace:
        out = " ".join(out.split())
    return out


_CJK = re.compile("[\u3400-\u9fff\uf900-\ufaff\u3040-\u30ff]")  # CJK ideographs, compatibility ideographs, kana


def has_cjk(text: str) -> bool:
    return _CJK.search(text) is not None


def contains_phrase(haystack: str, needle: str) -> bool:
    """``needle`` occurs in ``haystack`` as whole words (plain substring for CJK text). Both normalised."""
    if not needle:
        return False
    if has_cjk(needle):
        return needle in haystack
    return f" {needle} " in f" {haystack} "


def count_phrase(haystack: str, needle: str) -> int:
    if not needle:
        return 0
    if has_cjk(needle):
        return haystack.count(needle)
    return f" {haystack} ".count(f" {needle} ")


def find_phrases(text: str, phrases: Iterable[str]) -> list[re.Match[str]]:
    """Non-overlapping matches of any of ``phrases`` in ``text`` (case-insensitive, script-aware)."""
    return list(re.finditer(words_alternation(phrases), text))


_CJK_IDEOGRAPH = re.compile("[\u3400-\u9fff]")
_QUESTION_LINE = re.compile(r"[?？](?:\s|$)")


def cut_continuation(text: str) -> str:
    """A base model answers, then writes the next example itself: " 12 bolts\n\nA 100-lb bag …?\n
    Answer: 100 boxes". When the first paragraph is short (at most 6 words / 16 CJK characters)
    and a later line asks a question, only the first paragraph is the answer."""
    stripped = text.strip()
    head, sep, tail = stripped.partition("\n\n")
    if not sep or not head.strip():
        return text
    cjk = len(_CJK_IDEOGRAPH.findall(head))
    if len(head.split()) > 6 or cjk > 16:
        return text
    if any(_QUESTION_LINE.search(line) for line in tail.splitlines()):
        return head
    return text
