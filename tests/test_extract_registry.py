"""The extractor registry: one signature, named from task YAML."""

from __future__ import annotations

import pytest

from glotbench.errors import DataError, TaskSpecError
from glotbench.extract import EXTRACTORS, get_extractor, is_refusal, register_extractor
from glotbench.languages import get_pack

MC = {"labels": ["A", "B", "C", "D"], "choices": ["марсель", "парис", "сайхан", "лион"]}


def test_registered_names():
    assert {"choice", "number", "json", "text"} <= set(EXTRACTORS)


def test_uniform_signature():
    mn = get_pack("mn")
    assert get_extractor("choice")("Хариулт: В", sample=MC, pack=mn) == "B"
    assert get_extractor("choice")("парис", sample=MC, pack="mn") == "B"
    assert get_extractor("choice")("???", sample=MC, pack=mn) is None
    assert get_extractor("number")("Хариулт: 1 234.5", sample={}, pack=mn) == 1234.5  # CLDR mn: decimal point
    assert get_extractor("json")('<think>{"x": 0}</think> ok {"a": 1}', sample={}, pack=mn) == {"a": 1}
    assert get_extractor("json")('{"a": 1}', sample={}, pack=mn, required_keys=["a", "b"]) is None
    assert get_extractor("text")("<think>hm</think>\n  Budapest \n", sample={}, pack=mn) == "Budapest"
    assert get_extractor("text")("<think>hm</think>\n\nBudapest\nmert...", sample={}, pack=mn, first_line=True) == "Budapest"
    assert get_extractor("text")("<think>only thinking", sample={}, pack=mn) is None


def test_bad_names_options_and_samples():
    with pytest.raises(TaskSpecError, match="unknown extractor 'letters'.*choice"):
        get_extractor("letters")
    with pytest.raises(TaskSpecError, match="unknown options"):
        get_extractor("number")("1", sample={}, pack="en", strict=True)
    with pytest.raises(DataError, match="labels"):
        get_extractor("choice")("A", sample={"choices": ["x"]}, pack="en")


def test_register_extractor():
    def upper(text, *, sample, pack, **options):
        return text.upper() or None

    register_extractor("test_upper", upper)
    try:
        assert get_extractor("test_upper")("ab", sample={}, pack="en") == "AB"
        with pytest.raises(ValueError, match="already registered"):
            register_extractor("test_upper", lambda *a, **k: None)
    finally:
        EXTRACTORS.pop("test_upper", None)


@pytest.mark.parametrize(
    "text, lang, want",
    [
        ("Sajnos nem tudom a választ.", "hu", True),
        ("Nem tudományos kérdés, a válasz 5.", "hu", False),
        ("Nevím.", "cs", True),
        ("我不知道这个问题的答案。", "zh", True),
        ("Би мэдэхгүй байна.", "mn", True),
        ("Я не знаю.", "ru", True),
        ("К сожалению, у меня нет информации об этом.", "ru", True),
        ("Не могу ответить на этот вопрос.", "ru", True),
        ("Знаю: ответ B.", "ru", False),
        ("Он не знал ответа сразу, но ответ B.", "ru", False),  # "не знал" is not "не знаю"
        ("I don't know.", "hu", True),  # English refusals count in every language
        ("Paris.", "en", False),
        ("<think>I don't know... oh wait</think> Paris", "en", False),
    ],
)
def test_is_refusal(text, lang, want):
    assert is_refusal(text, lang) is want
