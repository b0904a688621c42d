"""The normaliser's translate tables (extract/text.py) give what the per-character loop they
replaced gives: every code point, every normalisation setting, and the extraction corpus's texts."""

from __future__ import annotations

import itertools
import unicodedata
from pathlib import Path

import pytest
import yaml

from glotbench.extract import text as T
from glotbench.languages import get_pack
from glotbench.languages.pack import Normalization

CORPUS = Path(__file__).parent / "extraction_corpus" / "v1"


def loop_normalize(text: str, cfg: Normalization) -> str:
    """The per-character loop, as extract/text.py wrote it before the tables."""
    out = unicodedata.normalize(cfg.unicode_form, text)
    if cfg.lowercase:
        out = out.casefold()
    if cfg.fold:  # a letter read as another (ru: ё as е), its upper-case form as the other's
        out = "".join(cfg.fold[c] if c in cfg.fold else
                      cfg.fold[c.lower()].upper() if c != c.lower() and c.lower() in cfg.fold else c for c in out)
    if cfg.strip_diacritics:
        out = "".join(c for c in unicodedata.normalize("NFD", out) if unicodedata.category(c) != "Mn")
        out = unicodedata.normalize("NFC", out)
    if cfg.strip_punctuation:
        out = "".join(" " if unicodedata.category(c)[0] in "PS" else c for c in out)
    if cfg.collapse_whitespace:
        out = " ".join(out.split())
    return out


class _Pack:
    def __init__(self, cfg: Normalization):
        self.normalization = cfg


# the tables serve strip_punctuation and strip_diacritics: both, each with a composing and a
# decomposing form (the rest of the settings are untouched code)
SETTINGS = [Normalization(unicode_form=f, strip_punctuation=p, strip_diacritics=d, collapse_whitespace=w)
            for f, p, d, w in itertools.product(["NFKC", "NFD"], [True, False], [True, False], [True, False])
            if p or d]


def corpus_texts() -> list[str]:
    """Every string in the extraction corpus files (outputs, answers, option texts)."""
    texts: list[str] = []

    def walk(node) -> None:
        if isinstance(node, str):
            texts.append(node)
        elif isinstance(node, dict):
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    for f in sorted(CORPUS.glob("*.yaml")):
        walk(yaml.safe_load(f.read_text(encoding="utf-8")))
    return texts


EVERY_CODE_POINT = "".join(chr(c) for c in range(0x110000))


@pytest.mark.parametrize("cfg", SETTINGS, ids=lambda c: "-".join(str(v) for v in c.model_dump().values()))
def test_every_code_point_normalises_as_the_loop_did(cfg):
    pack = _Pack(cfg)
    assert T._normalize(EVERY_CODE_POINT, pack) == loop_normalize(EVERY_CODE_POINT, cfg)


def test_the_corpus_texts_normalise_as_the_loop_did():
    texts = corpus_texts()
    assert len(texts) > 100
    for code in ("en", "cs", "hu", "mn", "zh", "ru"):
        pack = get_pack(code)
        for t in texts:
            assert T._normalize(t, pack) == loop_normalize(t, pack.normalization), (code, t)


def test_a_table_stays_bounded(monkeypatch):
    monkeypatch.setattr(T, "_TABLE_MAX", 100)
    table = T._ByCategory(lambda c: " " if unicodedata.category(c)[0] in "PS" else ord(c))
    text = "".join(chr(c) for c in range(0x4E00, 0x4E00 + 1000)) + "!"
    assert text.translate(table) == text[:-1] + " "
    assert len(table) <= 100
