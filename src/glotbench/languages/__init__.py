"""Language packs: the per-language words and rules extraction and scoring need.

    >>> from glotbench.languages import get_pack
    >>> get_pack("hun").decimal_separator
    ','

``get_pack`` accepts ISO 639-1 codes (``hu``), ISO 639-3 / 639-2 codes (``hun``, ``ces``, ``cze``,
``zho``, ``mon``, ``khk``, ``eng``), English names, and BCP-47 tags whose first subtag is one of
those (``hu-HU``, ``zh_CN``, ``mn-Cyrl``). An unknown code raises :class:`UnknownLanguageError`
(there is no silent English fallback: extraction with the wrong words would score wrongly without
telling anyone). Add a language by writing a YAML file; see docs/adding-a-language-pack.md.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from glotbench.languages.pack import (
    LanguagePack,
    LanguagePackError,
    Normalization,
    UnknownLanguageError,
    load_pack,
)

__all__ = [
    "LanguagePack",
    "LanguagePackError",
    "Normalization",
    "UnknownLanguageError",
    "available_languages",
    "get_pack",
    "load_pack",
]

PACK_DIR = Path(__file__).resolve().parent


def available_languages() -> list[str]:
    """ISO 639-1 codes of the built-in packs, sorted."""
    return sorted(p.stem for p in PACK_DIR.glob("*.yaml"))


@cache
def _all_packs() -> dict[str, LanguagePack]:
    packs: dict[str, LanguagePack] = {}
    for code in available_languages():
        path = PACK_DIR / f"{code}.yaml"
        pack = load_pack(path)
        if pack.code != code:
            raise LanguagePackError(f"{path}: field 'code': {pack.code!r} does not match the file name {code!r}")
        packs[code] = pack
    return packs


@cache
def _alias_index() -> dict[str, str]:
    index: dict[str, str] = {}
    for code, pack in _all_packs().items():
        for key in (code, *pack.aliases, pack.name):
            index[key.casefold().replace("_", "-")] = code
    return index


def get_pack(code: str | LanguagePack) -> LanguagePack:
    """The built-in pack for ``code`` (a pack passes through); UnknownLanguageError if there is none."""
    if isinstance(code, LanguagePack):
        return code
    key = str(code).strip().casefold().replace("_", "-")
    index = _alias_index()
    found = index.get(key) or index.get(key.split("-", 1)[0])
    if found is None:
        raise UnknownLanguageError(
            f"no language pack for {code!r} (available: {', '.join(available_languages())}; "
            "add one as src/glotbench/languages/<code>.yaml)"
        )
    return _all_packs()[found]
