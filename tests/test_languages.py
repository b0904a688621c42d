"""Language packs: every built-in pack loads, is complete, and resolves from common codes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import ValidationError

from glotbench.errors import GlotbenchError
from glotbench.languages import (
    LanguagePack,
    LanguagePackError,
    UnknownLanguageError,
    available_languages,
    get_pack,
    load_pack,
)
from glotbench.languages.pack import Normalization

PACK_DIR = Path(__file__).resolve().parents[1] / "src" / "glotbench" / "languages"
DOC = Path(__file__).resolve().parents[1] / "docs" / "adding-a-language-pack.md"
# Fields that may be empty, as the docs say (no label-like letter is a common word in zh or mn).
MAY_BE_EMPTY = {"label_words", "extra_thousands_separators"}


def test_the_five_first_languages_are_available():
    assert set(available_languages()) >= {"hu", "cs", "zh", "mn", "en", "ru"}


@pytest.mark.parametrize("code", available_languages())
def test_every_pack_loads_and_every_field_is_filled(code):
    pack = load_pack(PACK_DIR / f"{code}.yaml")
    assert pack.code == code
    for name in LanguagePack.model_fields:
        value = getattr(pack, name)
        if name in MAY_BE_EMPTY:
            continue
        assert value not in ("", (), {}, None), f"{code}.yaml: field {name!r} is empty"
        if isinstance(value, tuple):
            blank_ok = name == "thousands_separators"  # a space is a real separator
            assert all(isinstance(v, str) and (v.strip() or (blank_ok and v)) for v in value), f"{code}.yaml: {name} has a blank entry"
    for set_name, labels in pack.option_label_sets.items():
        assert labels and len(set(labels)) == len(labels), set_name


@pytest.mark.parametrize("code", available_languages())
def test_yaml_boolean_words_stayed_strings(code):
    # YAML 1.1 reads bare no/yes/on/off as booleans; a pack must quote them.
    pack = get_pack(code)
    assert all(isinstance(w, str) for w in pack.yes_words + pack.no_words)


def test_every_field_is_documented():
    text = DOC.read_text(encoding="utf-8")
    fields = list(LanguagePack.model_fields) + list(Normalization.model_fields)
    missing = [f for f in fields if f"`{f}`" not in text]
    assert not missing, f"fields missing from {DOC.name}: {missing}"


@pytest.mark.parametrize(
    "given, code",
    [
        ("hu", "hu"), ("hun", "hu"), ("HU", "hu"), ("hu-HU", "hu"), ("Hungarian", "hu"), ("magyar", "hu"),
        ("cs", "cs"), ("ces", "cs"), ("cze", "cs"), ("cs_CZ", "cs"),
        ("zh", "zh"), ("zho", "zh"), ("chi", "zh"), ("zh-Hans", "zh"), ("zh_CN", "zh"), ("cmn", "zh"),
        ("mn", "mn"), ("mon", "mn"), ("khk", "mn"), ("mn-Cyrl", "mn"),
        ("en", "en"), ("eng", "en"), ("en-US", "en"),
        ("ru", "ru"), ("rus", "ru"), ("Russian", "ru"), ("русский", "ru"), ("ru-RU", "ru"), ("ru_RU", "ru"),
    ],
)  # fmt: skip
def test_get_pack_accepts_639_1_639_3_and_bcp47(given, code):
    assert get_pack(given).code == code


def test_get_pack_passes_a_pack_through_and_caches():
    hu = get_pack("hu")
    assert get_pack(hu) is hu
    assert get_pack("hun") is hu


def test_unknown_language_is_a_clear_one_line_error():
    with pytest.raises(UnknownLanguageError) as err:
        get_pack("xx")
    msg = str(err.value)
    assert "'xx'" in msg and "hu" in msg and "\n" not in msg
    assert isinstance(err.value, GlotbenchError)


def test_number_formats_follow_the_language():
    for code in ("hu", "cs", "ru"):
        pack = get_pack(code)
        assert pack.decimal_separator == ","
        assert {" ", "\u00a0", "\u202f"} <= set(pack.thousands_separators)
        assert ("." in pack.thousands_separators) == (code != "ru")  # hu/cs texts group with dots; Russian ones do not
    for code in ("en", "zh", "mn"):  # Mongolian per CLDR: "70,000" is seventy thousand
        pack = get_pack(code)
        assert pack.decimal_separator == "."
        assert "," in pack.thousands_separators


@pytest.mark.parametrize("code", ["hu", "cs", "zh", "mn", "en", "ru"])
def test_number_marks_come_from_cldr_via_babel(code):
    from babel.numbers import get_decimal_symbol, get_group_symbol

    from glotbench.languages.pack import SPACES

    pack = get_pack(code)
    assert pack.number_locale == code
    assert pack.decimal_separator == get_decimal_symbol(code)
    group = get_group_symbol(code)
    cldr = set(SPACES) if group in SPACES else {group}
    extra = set()
    for mark in pack.extra_thousands_separators:
        extra |= set(SPACES) if mark in SPACES else {mark}
    assert set(pack.thousands_separators) == cldr | extra
    text = (PACK_DIR / f"{code}.yaml").read_text(encoding="utf-8")
    assert "decimal_separator:" not in text and "thousands_separators:" not in text.replace("extra_thousands_separators:", "")


def test_a_pack_cannot_both_name_a_cldr_locale_and_write_the_marks(tmp_path):
    p = _write(tmp_path, _valid_yaml().replace('decimal_separator: "."', 'decimal_separator: "."\nnumber_locale: en'))
    with pytest.raises(LanguagePackError, match="number_locale"):
        load_pack(p)


    assert "chinese" in get_pack("zh").numeral_systems


def test_key_words_are_present():
    assert "a helyes válasz" in get_pack("hu").answer_words
    assert "odpověď" in get_pack("cs").answer_words
    assert "答案" in get_pack("zh").answer_words
    assert "хариулт" in get_pack("mn").answer_words
    assert get_pack("mn").label_set("cyrillic") == ("А", "Б", "В", "Г", "Д")
    assert "várjunk" in get_pack("hu").reflection_markers
    assert "等等" in get_pack("zh").reflection_markers
    assert "wait" in get_pack("en").reflection_markers
    assert "nem tudom" in get_pack("hu").refusal_phrases
    assert "мэдэхгүй" in get_pack("mn").refusal_phrases
    ru = get_pack("ru")
    assert {"ответ", "правильный ответ", "окончательный ответ"} <= set(ru.answer_words)
    assert ru.label_set("cyrillic") == ("А", "Б", "В", "Г", "Д") and ru.script == "Cyrl"
    assert "не знаю" in ru.refusal_phrases and "да" in ru.yes_words and "нет" in ru.no_words
    assert ru.normalization.strip_diacritics is False  # NFD would turn й into и


def test_unknown_label_set_names_the_pack_and_the_known_sets():
    with pytest.raises(LanguagePackError, match=r"'hu'.*'greek'.*latin"):
        get_pack("hu").label_set("greek")


def test_packs_are_frozen():
    with pytest.raises(ValidationError, match="frozen"):
        get_pack("en").decimal_separator = ","  # type: ignore[misc]


def _write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "xx.yaml"
    p.write_text(text, encoding="utf-8")
    return p


def _valid_yaml() -> str:
    """en.yaml with its number marks written out (a pack may do that instead of naming a CLDR locale)."""
    text = (PACK_DIR / "en.yaml").read_text(encoding="utf-8")
    return text.replace("number_locale: en\n", 'decimal_separator: "."\nthousands_separators: [",", "\\u00a0"]\n')


def test_bad_pack_errors_name_the_file_and_the_field(tmp_path):
    p = _write(tmp_path, _valid_yaml().replace('decimal_separator: "."', 'decimal_separator: ";"'))
    with pytest.raises(LanguagePackError) as err:
        load_pack(p)
    assert str(p) in str(err.value) and "decimal_separator" in str(err.value)
    assert "\n" not in str(err.value)


def test_unknown_field_is_rejected(tmp_path):
    p = _write(tmp_path, _valid_yaml() + "\nanswer_wrods: [x]\n")
    with pytest.raises(LanguagePackError, match="answer_wrods"):
        load_pack(p)


def test_bare_yaml_no_is_caught(tmp_path):
    p = _write(tmp_path, re.sub(r"no_words: .*", "no_words: [no, false]", _valid_yaml()))
    with pytest.raises(LanguagePackError, match="no_words"):
        load_pack(p)


def test_decimal_mark_cannot_also_group_thousands(tmp_path):
    p = _write(tmp_path, _valid_yaml().replace('thousands_separators: [","', 'thousands_separators: [".", ","'))
    with pytest.raises(LanguagePackError, match="decimal_separator"):
        load_pack(p)


def test_broken_yaml_and_missing_file(tmp_path):
    with pytest.raises(LanguagePackError, match=r"invalid YAML at line \d+"):
        load_pack(_write(tmp_path, "code: [unclosed\n"))
    with pytest.raises(LanguagePackError, match="cannot read"):
        load_pack(tmp_path / "nope.yaml")
