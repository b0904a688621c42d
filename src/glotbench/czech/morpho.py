"""MorphoDiTa lemmas (MorfFlex CZ 2.0) for Czech-Bench's lemma-level QA scoring.

``Morpho.analyze(text)`` restates the reference's ``morpho_analyze``: lowercase, whitespace
tokens, ``rstrip(",.?!")`` each, the first lemma MorphoDiTa's ``analyze`` gives with the guesser
on (the raw lemma string, technical suffixes such as ``_^(...)`` included), each followed by a
space. Roots (DeriNet) are not available offline; ``has_roots`` is False.

The dictionary is looked up at ``GLOTBENCH_MORPHODITA_DICT`` or under the data root at
``czech_bench/morphology/czech-morfflex/*.dict``. Without it (or without ``ufal.morphodita``)
``available`` is False and the lemma level is left out of the results.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from glotbench.paths import resolve_data_file

DICT_GLOB = "czech_bench/morphology/czech-morfflex"


def find_dictionary() -> Path | None:
    env = os.environ.get("GLOTBENCH_MORPHODITA_DICT")
    if env and Path(env).is_file():
        return Path(env)
    folder = resolve_data_file(DICT_GLOB)
    if folder.is_dir():
        found = sorted(folder.glob("*.dict"))
        return found[0] if found else None
    return None


class Morpho:
    def __init__(self, path: Path | None):
        self.path = path
        self._m = None
        if path is not None:
            try:
                from ufal.morphodita import Morpho as _M
            except ImportError:
                return
            self._m = _M.load(str(path))
        self.has_roots = False

    has_roots = False

    @property
    def available(self) -> bool:
        return self._m is not None

    @lru_cache(maxsize=100_000)
    def lemma(self, word: str) -> str:
        from ufal.morphodita import TaggedLemmas

        out = TaggedLemmas()
        self._m.analyze(word, self._m.GUESSER, out)
        return out[0].lemma if len(out) else word

    def analyze(self, text: str) -> tuple[str, str]:
        tokens = [t.rstrip(",.?!") for t in text.lower().rstrip("\r\n").split()]
        lemmas = "".join(self.lemma(t) + " " for t in tokens)
        return lemmas, ""


@lru_cache(maxsize=1)
def get_morpho() -> Morpho:
    return Morpho(find_dictionary())
