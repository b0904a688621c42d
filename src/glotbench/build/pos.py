"""Parts of speech for cloze items: MM-Eval §3.5 groups (nouns with pronouns, adjectives with
adverbs), from a vocabulary file or, for Czech, from MorphoDiTa with the MorfFlex dictionary.

A vocabulary file is TSV ``word<TAB>pos`` (a header line ``word<TAB>pos`` is allowed); pos is a
name such as noun, pronoun, adjective, adverb (or n, pron, adj, adv, UD's NOUN/PRON/ADJ/ADV/PROPN);
other parts of speech are read and ignored (the paper uses only these four).

MorphoDiTa without a tagger model cannot pick one analysis in context, so a Czech word counts
only when all its dictionary analyses (guesser off) fall in one group: "je" (verb "být" or
pronoun "on") is never blanked nor offered as a distractor; words the dictionary lacks are skipped.
"""

from __future__ import annotations

import re
from pathlib import Path

from glotbench.errors import DataError

NOMINAL, MODIFIER = "noun/pronoun", "adjective/adverb"
_GROUP = {
    "noun": NOMINAL, "n": NOMINAL, "propn": NOMINAL, "pronoun": NOMINAL, "pron": NOMINAL, "pn": NOMINAL,
    "adjective": MODIFIER, "adj": MODIFIER, "a": MODIFIER, "adverb": MODIFIER, "adv": MODIFIER, "d": MODIFIER,
}
# PDT positional tag, first character (MorfFlex): N noun, P pronoun, A adjective, D adverb
_PDT = {"N": NOMINAL, "P": NOMINAL, "A": MODIFIER, "D": MODIFIER}
def _form(tag: str) -> tuple:
    """The part of a PDT tag a distractor must share with the answer under --agree."""
    if tag[:1] in "NP":
        return ("N", tag[3], tag[4])  # number, case
    if tag[:1] == "A":
        return ("A", tag[2], tag[3], tag[4])  # gender, number, case
    return (tag[:1],)


_EDGE = re.compile(r"^([^\w]*)(.*?)([^\w]*)$", re.S)


def split_token(token: str) -> tuple[str, str, str]:
    """``„Praze,“`` -> ``("„", "Praze", ",“")``: leading punctuation, word, trailing punctuation."""
    m = _EDGE.match(token)
    return m.group(1), m.group(2), m.group(3)


class VocabPos:
    """POS from a ``word<TAB>pos`` vocabulary; the vocabulary is also the distractor pool."""

    name = "vocabulary"

    def __init__(self, path: Path):
        self.path = Path(path)
        self.groups: dict[str, str] = {}
        try:
            lines = self.path.read_text(encoding="utf-8-sig").splitlines()
        except FileNotFoundError:
            raise DataError(f"{self.path}: no such file") from None
        for n, line in enumerate(lines, 1):
            if not line.strip() or line.startswith("#"):
                continue
            parts = line.split("\t")
            if len(parts) < 2 or not parts[0].strip() or not parts[1].strip():
                raise DataError(f"{self.path}:{n}: expected word<TAB>pos, got {line[:60]!r}")
            word, pos = parts[0].strip(), parts[1].strip().lower()
            if n == 1 and (word.lower(), pos) == ("word", "pos"):
                continue
            group = _GROUP.get(pos)
            if group:
                self.groups.setdefault(word, group)
        if not self.groups:
            raise DataError(f"{self.path}: field 'pos': no noun, pronoun, adjective or adverb in the vocabulary")

    def group(self, word: str) -> str | None:
        return self.groups.get(word) or self.groups.get(word.lower())

    def same(self, a: str, b: str) -> bool:
        """Whether two words count as the same word (a distractor must differ from the answer)."""
        return a.casefold() == b.casefold()

    def pool(self, sentences: list[str]) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for w, g in sorted(self.groups.items()):
            out.setdefault(g, []).append(w)
        return out


class CzechPos:
    """POS from MorphoDiTa + MorfFlex (glotbench.languages.cs_morpho); the distractor pool is every
    unambiguous word form of the kept sentences."""

    name = "morphodita"

    def __init__(self):
        from glotbench.languages.cs_morpho import get_morpho

        self.morpho = get_morpho()
        if not self.morpho.available:
            raise DataError("--language cs needs the ufal.morphodita package and the MorfFlex dictionary "
                            "(czech_bench/morphology/czech-morfflex/*.dict under the data root, or "
                            "$GLOTBENCH_MORPHODITA_DICT)")
        self._cache: dict[str, tuple[str | None, frozenset, frozenset]] = {}

    def _analyze(self, word: str) -> tuple[str | None, frozenset, frozenset]:
        if word not in self._cache:
            out = self.morpho.analyses(word)
            groups = {_PDT.get(tag[:1]) for _, tag in out}
            lemmas = frozenset(lemma.casefold() for lemma, _ in out)
            ok = len(out) > 0 and len(groups) == 1 and None not in groups and word.isalpha()
            self._cache[word] = (groups.pop() if ok else None, lemmas, frozenset(_form(tag) for _, tag in out))
        return self._cache[word]

    def agrees(self, a: str, b: str) -> bool:
        """``--agree``: some analysis of each has the same form: nouns and pronouns the same number
        and case, adjectives the same gender, number and case, adverbs any adverb. A distractor in
        another case could be ruled out by grammar alone; this keeps the item about meaning."""
        return bool(self._analyze(a)[2] & self._analyze(b)[2])

    def group(self, word: str) -> str | None:
        return self._analyze(word)[0]

    def same(self, a: str, b: str) -> bool:
        """Forms of one lemma count as the same word: "Praha" is no distractor for "Praze"."""
        return a.casefold() == b.casefold() or bool(self._analyze(a)[1] & self._analyze(b)[1])

    def pool(self, sentences: list[str]) -> dict[str, list[str]]:
        words: dict[str, str] = {}
        for s in sentences:
            for tok in s.split():
                w = split_token(tok)[1]
                if w and w.casefold() not in words:
                    words[w.casefold()] = w
        out: dict[str, list[str]] = {}
        for low in sorted(words):
            w = words[low]
            cand = low if self.group(low) else w  # sentence-initial capitals: prefer the lower-case form
            g = self.group(cand)
            if g:
                out.setdefault(g, []).append(cand)
        return out
