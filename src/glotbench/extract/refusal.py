"""Refusal detection: did the model decline or say it does not know?"""

from __future__ import annotations

from glotbench.extract.text import find_phrases
from glotbench.extract.thinking import strip_thinking
from glotbench.languages import LanguagePack, get_pack


def is_refusal(text: str | None, pack: LanguagePack | str, *, include_english: bool = True) -> bool:
    """True when the answer (thinking removed) contains one of the pack's refusal phrases.

    English phrases are checked too unless ``include_english`` is False (models often refuse in
    English). Matching is case-insensitive and whole-word for alphabetic scripts.
    """
    pack = get_pack(pack)
    answer, _trace = strip_thinking(text or "")
    phrases = list(pack.refusal_phrases)
    if include_english and pack.code != "en":
        phrases += list(get_pack("en").refusal_phrases)
    return bool(find_phrases(answer, phrases))
