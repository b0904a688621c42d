"""Language packs: the per-language words and rules extraction and scoring need.

    >>> from glotbench.languages import get_pack
    >>> get_pack("hun").decimal_separator
    ','

``get_pack`` accepts ISO 639-1 codes (``hu``), ISO 639-3 / 639-2 codes (``hun``, ``ces``, ``cze``,
``zho``, ``mon``, ``khk``, ``rus``, ``eng``), English names, and BCP-47 tags whose first subtag is one of
those (``hu-HU``, ``zh_CN``, ``mn-Cyrl``). An unknown code raises :class:`UnknownLanguageError`
(there is no silent English fallback: extraction with the wrong words would score wrongly without
telling anyone). A pack is a YAML file here, or one a package ships: docs/adding-a-language-pack.md.
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
    """ISO 639-1 codes of the packs (built-in and installed), sorted."""
    return sorted(_all_packs())


def _checked(path: Path) -> LanguagePack:
    pack = load_pack(path)
    if pack.code != path.stem:
        raise LanguagePackError(f"{path}: field 'code': {pack.code!r} does not match the file name {path.stem!r}")
    return pack


@cache
def _all_packs() -> dict[str, LanguagePack]:
    return {path.stem: _checked(path) for path in sorted(PACK_DIR.glob("*.yaml"))}


def add_pack_file(path: Path) -> None:
    """A pack file an installed package ships (the catalog applies ``bench.language_pack(path)`` here);
    LanguagePackError (one line) for a broken file or a language that has a pack already."""
    pack = _checked(path)
    if pack.code in _all_packs():
        raise LanguagePackError(f"{path}: language {pack.code!r} already has a pack")
    _all_packs()[pack.code] = pack
    _alias_index.cache_clear()


@cache
def _alias_index() -> dict[str, str]:
    index: dict[str, str] = {}
    for code, pack in _all_packs().items():
        for key in (code, *pack.aliases, pack.name):
            index.setdefault(key.casefold().replace("_", "-"), code)  # a built-in name is never taken over
    return index


def get_pack(code: str | LanguagePack) -> LanguagePack:
    """The pack for ``code`` (a pack passes through); UnknownLanguageError if there is none."""
    if isinstance(code, LanguagePack):
        return code
    key = str(code).strip().casefold().replace("_", "-")
    index = _alias_index()
    found = index.get(key) or index.get(key.split("-", 1)[0])
    if found is None:
        from glotbench.registry import require_catalog

        require_catalog()  # the installed packs are added when the catalog is built: unknown only then
        raise UnknownLanguageError(
            f"no language pack for {code!r} (available: {', '.join(available_languages())}; "
            "a package adds one with bench.language_pack(path): docs/adding-a-language-pack.md)"
        )
    return _all_packs()[found]
