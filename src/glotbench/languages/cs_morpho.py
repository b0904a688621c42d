"""Czech lemmas and word-formation roots with MorphoDiTa (PyPI ``ufal.morphodita``) and the
MorfFlex CZ 2.0 dictionary, for Czech-Bench's lemma- and root-level QA scoring.

``Morpho.analyze(text) -> (lemmas, roots)`` restates the reference's ``morpho_analyze``:
lowercase, whitespace tokens, ``rstrip(",.?!")`` each, MorphoDiTa's first analysis with the
guesser on (the lemma string as MorphoDiTa gives it, technical suffixes such as ``_;G`` or
``_^(*2)`` included, as the reference keeps them), each followed by one space.

Roots: the thesis replaces each lemma with the root of its DeriNet 2.0 word-formation tree,
looked up by the lemma string (a lemma carrying a technical suffix is not found there and stays
as it is). DeriNet's file is not available offline, but the MorfFlex model ships MorphoDiTa's
*derivator*, built from DeriNet 2.1: ``DerivationFormatter.newRootDerivationFormatter`` gives
the tree root of a lemma (``učitelů -> učitel -> učit``). Here a plain lemma gets the raw form
of that root; a lemma with a technical suffix is kept, as in the reference. It is DeriNet 2.1,
not 2.0: some trees differ (``hradní`` has root ``hradit`` in 2.1).

The dictionary: ``$GLOTBENCH_MORPHODITA_DICT``, else the first ``*.dict`` under
``czech_bench/morphology/czech-morfflex`` in the data root. Without it, or without
``ufal.morphodita``, ``available`` is False and the lemma and root levels are not reported.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from glotbench.paths import resolve_data_file

DICT_FOLDER = "czech_bench/morphology/czech-morfflex"


def find_dictionary() -> Path | None:
    env = os.environ.get("GLOTBENCH_MORPHODITA_DICT")
    if env:
        return Path(env) if Path(env).is_file() else None
    folder = resolve_data_file(DICT_FOLDER)
    found = sorted(folder.glob("*.dict")) if folder.is_dir() else []
    return found[0] if found else None


class Morpho:
    def __init__(self, path: Path | None):
        self.path = path
        self._m = self._d = None
        if path is None:
            return
        try:
            from ufal.morphodita import Morpho as _Morpho
        except ImportError:
            return
        self._m = _Morpho.load(str(path))
        if self._m is not None:
            self._d = self._m.getDerivator()

    @property
    def available(self) -> bool:
        return self._m is not None

    @property
    def has_roots(self) -> bool:
        return self._d is not None

    @lru_cache(maxsize=200_000)
    def lemma(self, word: str) -> str:
        """MorphoDiTa's first lemma for ``word`` (guesser on), technical suffixes kept."""
        from ufal.morphodita import TaggedLemmas

        out = TaggedLemmas()
        self._m.analyze(word, self._m.GUESSER, out)
        return out[0].lemma if len(out) else word

    @lru_cache(maxsize=200_000)
    def root(self, lemma: str) -> str:
        """The DeriNet 2.1 tree root of ``lemma`` (raw form); a suffixed lemma is kept as it is."""
        if self._d is None or self._m.rawLemma(lemma) != lemma:
            return lemma
        from ufal.morphodita import DerivationFormatter

        root = DerivationFormatter.newRootDerivationFormatter(self._d).formatDerivation(lemma)
        return self._m.rawLemma(root) if root else lemma

    def analyses(self, word: str) -> list[tuple[str, str]]:
        """Every dictionary analysis of ``word`` as (raw lemma, PDT positional tag), guesser off
        (``glotbench build cloze --language cs`` reads parts of speech from the tags)."""
        from ufal.morphodita import TaggedLemmas

        out = TaggedLemmas()
        self._m.analyze(word, self._m.NO_GUESSER, out)
        return [(self._m.rawLemma(x.lemma), x.tag) for x in out]

    def analyze(self, text: str) -> tuple[str, str]:
        tokens = [t.rstrip(",.?!") for t in text.lower().rstrip("\r\n").split()]
        lemmas = [self.lemma(t) for t in tokens]
        return "".join(x + " " for x in lemmas), "".join(self.root(x) + " " for x in lemmas)

    @lru_cache(maxsize=200_000)
    def lemmatize_token(self, token: str) -> str:
        """glotbench's own Czech lemma (the ``lemmatized`` step of
        :mod:`glotbench.scoring.extractive_qa`): lowercased raw lemma, technical suffixes dropped;
        a token that is itself one of its analyses' lemmas stays as it is (lowercase "praha" is
        the city, not the first analysis "práh"), else the first analysis."""
        from ufal.morphodita import TaggedLemmas

        out = TaggedLemmas()
        self._m.analyze(token, self._m.GUESSER, out)
        raws = [self._m.rawLemma(x.lemma).lower() for x in out]
        if not raws:
            return token.lower()
        return token.lower() if token.lower() in raws else raws[0]


@lru_cache(maxsize=1)
def get_morpho() -> Morpho:
    return Morpho(find_dictionary())


def lemmatizer_cs():
    """A token -> lemma function backed by MorphoDiTa, or None when it is not available."""
    m = get_morpho()
    return m.lemmatize_token if m.available else None
