"""Seeded perturbations of an item's input text (``glotbench run --perturb NAME[,NAME]``).

Each perturbation maps one text to another; a run applies the named ones, in the order given, to
the text fields its prompt shows (never the reference) before any request is built. Random ones
(``typos``, ``whitespace``) draw from ``random.Random`` seeded with the run's seed, the task, the item
and the perturbation, so a rerun perturbs the same way. Which apply to a language is the language
pack's ``perturbations`` field (docs/perturbations.md):

* ``strip_diacritics``: Unicode NFD, combining marks (category Mn) removed, NFC again
  (``příliš žluťoučký`` -> ``prilis zlutoucky``; how people type Czech and Hungarian without them).
* ``translit``: Cyrillic -> Latin by a named standard, per language: Mongolian by MNS 5217:2012
  (the Mongolian national standard), Russian by ISO 9:1995 = GOST 7.79-2000 system A.
* ``zh_t2s`` / ``zh_s2t``: traditional -> simplified Chinese and back with OpenCC's own tables
  (``opencc``, PyPI's official wheel: extra ``zh``).
* ``typos`` (``typos:RATE``, default 0.05): each letter, with probability RATE, is replaced by a
  key next to it on the language's keyboard (case kept): Czech and Hungarian QWERTZ, with their
  accented letters, the Mongolian Cyrillic and Russian ЙЦУКЕН keyboards, else US QWERTY
  (prompts/keyboards.py).
* ``case``: the whole text lower-cased (HELM's lowercase perturbation).
* ``whitespace``: each space becomes 1 to 3 spaces, drawn at random (HELM's extra-space perturbation).
"""

from __future__ import annotations

import random
import unicodedata
from collections.abc import Callable

from glotbench.errors import GlotbenchError
from glotbench.prompts.keyboards import layout_for

DEFAULT_TYPO_RATE = 0.05

# MNS 5217:2012 (Mongolian Cyrillic -> Latin), lower case; upper case follows the letter's case.
MNS_5217 = {
    "а": "a", "б": "b", "в": "v", "г": "g", "д": "d", "е": "ye", "ё": "yo", "ж": "j", "з": "z", "и": "i",
    "й": "i", "к": "k", "л": "l", "м": "m", "н": "n", "о": "o", "ө": "ö", "п": "p", "р": "r", "с": "s",
    "т": "t", "у": "u", "ү": "ü", "ф": "f", "х": "kh", "ц": "ts", "ч": "ch", "ш": "sh", "щ": "sh", "ъ": "i",
    "ы": "y", "ь": "i", "э": "e", "ю": "yu", "я": "ya",
}
# ISO 9:1995 = GOST 7.79-2000 system A (one Latin letter per Cyrillic letter, reversible), Russian letters.
ISO_9 = {
    "а": "a", "б": "b", "в": "v", "г": "g", "д": "d", "е": "e", "ё": "ë", "ж": "ž", "з": "z", "и": "i",
    "й": "j", "к": "k", "л": "l", "м": "m", "н": "n", "о": "o", "п": "p", "р": "r", "с": "s", "т": "t",
    "у": "u", "ф": "f", "х": "h", "ц": "c", "ч": "č", "ш": "š", "щ": "ŝ", "ъ": "ʺ", "ы": "y", "ь": "ʹ",
    "э": "è", "ю": "û", "я": "â",
}
TRANSLIT = {"mn": ("MNS 5217:2012", MNS_5217), "ru": ("ISO 9:1995 / GOST 7.79-2000 system A", ISO_9)}

# US QWERTY neighbours of each letter (same row and the rows above and below): the typos of a
# language without a layout of its own (prompts/keyboards.py has Czech's, Hungarian's, Mongolian's and Russian's)
QWERTY_NEIGHBOURS: dict[str, str] = layout_for(None)[1]


def strip_diacritics(text: str) -> str:
    decomposed = unicodedata.normalize("NFD", text)
    return unicodedata.normalize("NFC", "".join(c for c in decomposed if unicodedata.category(c) != "Mn"))


def transliterate(text: str, language: str) -> str:
    """``text``'s Cyrillic letters in Latin by ``language``'s standard (:data:`TRANSLIT`)."""
    table = TRANSLIT[language][1]
    out = []
    for i, ch in enumerate(text):
        low = ch.lower()
        if low not in table:
            out.append(ch)
            continue
        latin = table[low]
        if ch != low:  # upper case: a whole word in capitals keeps a digraph in capitals (ШУ -> SHU, Шу -> Shu)
            near = [c for c in (text[i - 1] if i else "", text[i + 1] if i + 1 < len(text) else "") if c.isalpha()]
            latin = latin.upper() if near and all(c.isupper() for c in near) else latin[:1].upper() + latin[1:]
        out.append(latin)
    return "".join(out)


def _opencc(config: str) -> Callable[[str], str]:
    try:
        import opencc
    except ImportError:
        raise GlotbenchError(f"--perturb zh_{config}: needs OpenCC: pip install 'glotbench[zh]' "
                             "(no module 'opencc')") from None
    return opencc.OpenCC(f"{config}.json").convert


def typos(text: str, rng: random.Random, rate: float = DEFAULT_TYPO_RATE,
          near: dict[str, str] = QWERTY_NEIGHBOURS) -> str:
    """Each letter of ``near`` (a keyboard's neighbour map), with probability ``rate``, replaced by one
    of its neighbours (case kept)."""
    out = []
    for ch in text:
        low = ch.lower()
        if low in near and rng.random() < rate:
            sub = rng.choice(near[low])
            out.append(sub.upper() if ch.isupper() else sub)
        else:
            out.append(ch)
    return "".join(out)


def whitespace(text: str, rng: random.Random) -> str:
    return "".join(" " * rng.randint(1, 3) if ch == " " else ch for ch in text)


# name -> what it does (the names --perturb takes; a language pack's ``perturbations`` lists some)
PERTURBATIONS: dict[str, str] = {
    "strip_diacritics": "diacritics removed (Unicode NFD, combining marks dropped)",
    "translit": "Cyrillic -> Latin (mn: MNS 5217:2012; ru: ISO 9:1995 / GOST 7.79-2000 system A)",
    "zh_t2s": "traditional -> simplified Chinese (OpenCC t2s)",
    "zh_s2t": "simplified -> traditional Chinese (OpenCC s2t)",
    "typos": (f"keyboard-adjacent letter swaps at a rate (typos:RATE, default {DEFAULT_TYPO_RATE}; "
              "cs/hu: QWERTZ; mn, ru: Cyrillic)"),
    "case": "lower-cased",
    "whitespace": "each space made 1-3 spaces",
}


def parse(specs: list[str] | tuple[str, ...]) -> list[tuple[str, float | None]]:
    """``["typos:0.1", "case"]`` -> ``[("typos", 0.1), ("case", None)]``; an unknown name or a bad
    rate is one line naming the known ones."""
    out = []
    for raw in specs:
        for part in str(raw).split(","):
            part = part.strip()
            if not part:
                continue
            name, _, arg = part.partition(":")
            if name not in PERTURBATIONS:
                raise GlotbenchError(f"--perturb {part}: unknown perturbation {name!r}; known: {', '.join(PERTURBATIONS)}")
            rate = None
            if arg:
                if name != "typos":
                    raise GlotbenchError(f"--perturb {part}: only typos takes a value (typos:RATE)")
                try:
                    rate = float(arg)
                except ValueError:
                    rate = -1.0
                if not 0 < rate <= 1:
                    raise GlotbenchError(f"--perturb {part}: the typo rate must be a number in (0, 1], got {arg!r}")
            out.append((name, rate))
    return out


class Perturber:
    """The perturbations of one run, for one language: ``apply(text, key)`` perturbs ``text`` with
    a generator seeded by ``seed`` and ``key`` (the task and item)."""

    def __init__(self, specs: list[str] | tuple[str, ...], language: str, seed: int):
        self.steps = parse(specs)
        self.language = language
        self.seed = seed
        self._keyboard = layout_for(language)[1]  # the typos' neighbour map (prompts/keyboards.py)
        self._fns: dict[str, Callable[[str], str]] = {}
        for name, _ in self.steps:
            if name in ("zh_t2s", "zh_s2t"):
                self._fns[name] = _opencc(name[3:])
            if name == "translit" and language not in TRANSLIT:
                raise GlotbenchError(f"--perturb translit: no transliteration standard for language {language!r} "
                                     f"(known: {', '.join(sorted(TRANSLIT))})")

    def apply(self, text: str, key: str) -> str:
        for name, rate in self.steps:
            rng = random.Random(f"{self.seed}:{key}:{name}")
            if name == "strip_diacritics":
                text = strip_diacritics(text)
            elif name == "translit":
                text = transliterate(text, self.language)
            elif name in self._fns:
                text = self._fns[name](text)
            elif name == "typos":
                text = typos(text, rng, DEFAULT_TYPO_RATE if rate is None else rate, self._keyboard)
            elif name == "case":
                text = text.lower()
            elif name == "whitespace":
                text = whitespace(text, rng)
        return text
