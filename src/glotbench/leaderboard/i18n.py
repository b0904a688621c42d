"""Hungarian and English UI strings (all in ``translations.json``) and the language choice:
``?lang=hu|en`` wins and is remembered in the ``lang`` cookie; then the cookie; then the
browser's Accept-Language; then English."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Callable

LANGS = ("en", "hu")
DEFAULT_LANG = "en"
COOKIE = "lang"


@lru_cache(maxsize=1)
def strings() -> dict[str, dict[str, str]]:
    return json.loads((Path(__file__).with_name("translations.json")).read_text(encoding="utf-8"))


def translator(lang: str) -> Callable[..., str]:
    table, fallback = strings().get(lang, {}), strings()[DEFAULT_LANG]

    def t(key: str, **kw) -> str:
        text = table.get(key) or fallback.get(key) or _untranslated(key)
        return text.format(**kw) if kw else text

    return t


def _untranslated(key: str) -> str:
    """A key with no string: a metric's own name for ``metric_<name>`` (any registered metric can
    be a task's metric; the common ones have translated names), else the key itself."""
    return key[len("metric_"):] if key.startswith("metric_") else key


def choose_lang(query_lang: str | None, cookie_lang: str | None, accept_language: str | None) -> str:
    for cand in (query_lang, cookie_lang):
        if cand in LANGS:
            return cand
    for part in (accept_language or "").split(","):
        code = part.split(";")[0].strip().lower()[:2]
        if code in LANGS:
            return code
    return DEFAULT_LANG
