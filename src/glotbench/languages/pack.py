"""The :class:`LanguagePack` model and its YAML loader.

A language pack is data: the words and rules that answer extraction, scoring and trace analysis
need for one language. Each built-in pack is one YAML file next to this module; every field is
described in ``docs/adding-a-language-pack.md``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)

from glotbench.errors import GlotbenchError
from glotbench.yamlfile import read_mapping, validate


class LanguagePackError(GlotbenchError):
    """A language pack YAML file is broken, or a language code is not known."""


class UnknownLanguageError(LanguagePackError):
    """No language pack exists for the requested code."""


Words = tuple[str, ...]

# Space-like group marks. CLDR writes U+00A0 or U+202F; models write any of these, so a pack whose
# CLDR group mark is one of them accepts all of them (and only between groups of three digits).
SPACES: Words = (" ", "\u00a0", "\u202f", "\u2009")


def cldr_number_symbols(locale: str) -> tuple[str, Words]:
    """``(decimal mark, group marks)`` of a CLDR locale, from babel's locale data."""
    from babel import Locale, UnknownLocaleError
    from babel.numbers import get_decimal_symbol, get_group_symbol

    try:
        Locale.parse(locale)
    except (UnknownLocaleError, ValueError) as err:
        raise ValueError(f"number_locale {locale!r} is not a CLDR locale ({err})") from None
    decimal, group = get_decimal_symbol(locale), get_group_symbol(locale)
    return decimal, (SPACES if group in SPACES else (group,))


class Normalization(BaseModel):
    """How text is normalised before comparing an output with an option or a reference."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    unicode_form: Literal["NFC", "NFKC", "NFD", "NFKD"] = "NFKC"
    lowercase: bool = True
    strip_punctuation: bool = True
    strip_diacritics: bool = False
    collapse_whitespace: bool = True
    # letters compared as another, after case-folding (ru: ё as е, which writers often type for it);
    # each key one character. Left out of the pack's fingerprint while empty (engine/fingerprint.py).
    fold: dict[str, str] = Field(default_factory=dict)

    @field_validator("fold")
    @classmethod
    def _one_letter_keys(cls, v: dict[str, str]) -> dict[str, str]:
        bad = [k for k in v if len(k) != 1]
        if bad:
            raise ValueError(f"fold: each key must be one character (got {', '.join(map(repr, bad))})")
        return v


class LanguagePack(BaseModel):
    """Per-language words and rules. Frozen: share one instance freely."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    code: str = Field(description="ISO 639-1 code, lower case (hu, cs, zh, mn, en).")
    aliases: Words = Field(description="Other codes accepted by get_pack: ISO 639-3 / 639-2/B, English name.")
    name: str = Field(description="English name of the language.")
    native_name: str = Field(description="The language's name in itself.")
    script: str = Field(description="ISO 15924 script code of the usual writing system (Latn, Hans, Cyrl).")
    answer_words: Words = Field(description="Phrases that introduce a final answer ('a helyes válasz', '答案').")
    connectors: Words = Field(description="Words that may stand between an answer phrase and the label ('is', 'az', 'je', '是', 'бол').")
    option_words: Words = Field(description="Words for 'option' that may surround a label ('opció', 'možnost', '选项').")
    correct_words: Words = Field(description="Adjectives meaning 'correct', for 'B is correct' statements.")
    list_conjunctions: Words = Field(description="'or' / 'and' words; two labels joined by one make an ambiguous answer.")
    negation_words: Words = Field(description="Negations; a label next to one is not taken as the answer ('not', 'nem', 'биш', '不').")
    wrong_words: Words = Field(default=(), description="Words saying an option is wrong ('incorrect', 'špatně', '错误', 'буруу'); "
                               "a label they follow ('B is incorrect') is not the answer.")
    contrast_words: Words = Field(default=(), description="'but' / 'rather' words of 'not A but C' ('hanem', 'ale', '而是', 'харин').")
    correction_words: Words = Field(default=(), description="Words that open a self-correction ('wait', 'actually', 'počkat', '等等'); "
                                    "a label right after one is the answer at that point ('B. Wait, D.').")
    label_words: Words = Field(description="Label-like letters that are ordinary words (articles, conjunctions) when a word follows.")
    option_label_sets: dict[str, Words] = Field(description="Named option label sets in common use, e.g. latin: [A, B, C, D, E].")
    number_locale: str | None = Field(
        default=None,
        description="CLDR locale whose number symbols (decimal mark, group mark) the pack uses, read with babel. "
        "Built-in packs set this instead of writing the marks by hand.",
    )
    extra_thousands_separators: Words = Field(
        default=(), description="Group marks in common use beyond CLDR's one (each documented in the pack with why)."
    )
    decimal_separator: Literal[",", "."] = Field(description="The decimal mark of the language (from CLDR when number_locale is set).")
    thousands_separators: Words = Field(description="Characters that group thousands (space, U+00A0, U+202F, '.', ','); "
                                        "from CLDR plus extra_thousands_separators when number_locale is set.")
    numeral_systems: Words = Field(description="Numeral systems read by number extraction: 'arabic', optionally 'chinese'.")
    refusal_phrases: Words = Field(description="Phrases by which a model declines or says it does not know.")
    reflection_markers: Words = Field(description="Words that open a new 'thought' in a reasoning trace ('wait', 'várjunk', '等等').")
    yes_words: Words = Field(description="Words meaning yes / true.")
    no_words: Words = Field(description="Words meaning no / false.")
    normalization: Normalization = Field(default_factory=Normalization, description="Text normalisation settings.")
    perturbations: Words = Field(default=(), description="The `run --perturb` names that apply to text in this language "
                                 "(strip_diacritics, translit, zh_t2s, zh_s2t, typos, case, whitespace); a run that "
                                 "asks for another is refused before any request (docs/perturbations.md).")

    @model_validator(mode="before")
    @classmethod
    def _numbers_from_cldr(cls, data):
        if not isinstance(data, dict) or not data.get("number_locale"):
            return data
        for key in ("decimal_separator", "thousands_separators"):
            if key in data:
                raise ValueError(f"{key} comes from CLDR when number_locale is set: remove it "
                                 "(extra group marks go in extra_thousands_separators)")
        decimal, groups = cldr_number_symbols(str(data["number_locale"]))
        extra = list(data.get("extra_thousands_separators") or ())
        for mark in extra:
            groups += SPACES if mark in SPACES else (mark,)
        return {**data, "decimal_separator": decimal, "thousands_separators": tuple(dict.fromkeys(groups))}

    @field_validator("code")
    @classmethod
    def _code_is_two_letters(cls, v: str) -> str:
        if len(v) != 2 or not v.isalpha() or not v.islower():
            raise ValueError("must be a lower-case ISO 639-1 code of two letters")
        return v

    @field_validator("option_label_sets")
    @classmethod
    def _label_sets_nonempty(cls, v: dict[str, Words]) -> dict[str, Words]:
        for set_name, labels in v.items():
            if not labels:
                raise ValueError(f"label set {set_name!r} is empty")
            if len(set(labels)) != len(labels):
                raise ValueError(f"label set {set_name!r} repeats a label")
        return v

    @field_validator("numeral_systems")
    @classmethod
    def _known_numerals(cls, v: Words) -> Words:
        unknown = set(v) - {"arabic", "chinese"}
        if unknown:
            raise ValueError(f"unknown numeral systems {sorted(unknown)} (known: arabic, chinese)")
        return v

    @model_validator(mode="after")
    def _separators_distinct(self) -> LanguagePack:
        if self.decimal_separator in self.thousands_separators:
            raise ValueError(f"decimal_separator {self.decimal_separator!r} is also a thousands separator")
        return self

    def label_set(self, name: str) -> Words:
        """The option labels of the named set (``latin``, ``digits``, ``cyrillic`` ...)."""
        try:
            return self.option_label_sets[name]
        except KeyError:
            raise LanguagePackError(
                f"language pack {self.code!r}: no option label set {name!r} (has: {', '.join(self.option_label_sets)})"
            ) from None


def load_pack(path: str | Path) -> LanguagePack:
    """Read and validate one pack file. Errors are one line naming the file and the field."""
    path = Path(path)
    return validate(LanguagePack, read_mapping(path, "language pack", LanguagePackError), path, LanguagePackError)
