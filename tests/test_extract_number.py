"""Number extraction: the final answer, in each language's number format."""

from __future__ import annotations

import json

import pytest

from glotbench.errors import DataError
from glotbench.extract import extract_number, numbers_match, parse_number
from glotbench.extract.number import chinese_numeral
from glotbench.paths import resolve_data_file


@pytest.mark.parametrize(
    "text, lang, want",
    [
        # Hungarian: decimal comma, space / no-break space / dot groups thousands
        ("A válasz: 1 234,5 Ft", "hu", 1234.5),
        ("A válasz: 1\u00a0234,5", "hu", 1234.5),
        ("Végeredmény: 1.234", "hu", 1234),  # thousands dot
        ("Összesen 1.000.000 forint.", "hu", 1_000_000),
        ("A megoldás 3,5 kg.", "hu", 3.5),
        ("A megoldás 3.5 kg.", "hu", 3.5),  # a decimal point still reads as one
        ("Tehát 16 - 3 - 4 = 9 tojást ad el, 9 * 2 = 18 dollárt keres.\nVálasz: 18", "hu", 18),
        ("A megoldás:\n\n42", "hu", 42),
        ("A válasz 18. Ellenőrzés: 2*9", "hu", 18),
        ("1.234,5", "hu", 1234.5),
        # Czech
        ("Odpověď: 12\u202f345,67 Kč", "cs", 12345.67),
        ("Celkem tedy 2 500 korun.", "cs", 2500),
        ("Odpověď: -5", "cs", -5),
        ("x = 1,5 a y = 2,25", "cs", 2.25),
        # English
        ("The total is 1,234,567.", "en", 1_234_567),
        ("1,234.5", "en", 1234.5),
        ("1.234", "en", 1.234),
        ("Answer: −3.5", "en", -3.5),
        ("Answer: 2 × 9 = 18 dollars", "en", 18),
        ("Answer: $1,250.50", "en", 1250.5),
        ("Final answer: 3, because 1,2,3 are the options", "en", 3),
        ("Natalia sold 48/2 = 24 clips in May.\nNatalia sold 48+24 = 72 clips.\n#### 72", "en", 72),
        ("So the answer is $\\boxed{\\frac{3}{4}}$.", "en", 0.75),
        ("\\boxed{1{,}234}", "en", 1234),
        ("\\boxed{-\\frac{1}{2}}", "en", -0.5),
        ("Subtract: 16-3", "en", 3),  # a hyphen after a digit is not a minus
        # Chinese: full-width digits, Chinese numerals
        ("答案是１２３", "zh", 123),
        ("答案：1,234.5元", "zh", 1234.5),
        ("所以答案是三百零五。", "zh", 305),
        ("答案是十八", "zh", 18),
        ("她每天赚 9 × 2 = 18 美元。", "zh", 18),
        ("答案是-7", "zh", -7),
        # Mongolian (CLDR mn): decimal point, comma groups thousands; spaces group too
        ("Хариулт: 18 доллар", "mn", 18),
        ("Хариулт: 70,000", "mn", 70_000),
        ("Хариулт: $1,596", "mn", 1596),
        ("Хариулт: 2.5 цаг", "mn", 2.5),
        ("Жанет өдөрт 16 - 3 - 4 = 9 өндөг зарна. 9 * 2 = 18 доллар.", "mn", 18),
        ("Тэр өдөр бүр 1 234 төгрөг олдог.", "mn", 1234),
        # Russian (CLDR ru): decimal comma, a no-break space groups thousands; plain spaces group too
        ("Ответ: 1 234,5", "ru", 1234.5),
        ("Ответ: 1\u00a0234,5 руб.", "ru", 1234.5),
        ("Итого 12\u202f345\u202f678 рублей.", "ru", 12_345_678),
        ("Ответ: 3,5 часа", "ru", 3.5),
        ("Ответ: 3.5 часа", "ru", 3.5),  # a decimal point still reads as one
        ("Ответ: 1,234", "ru", 1.234),  # a comma is the decimal mark, never a group
        ("Она продаёт 16 - 3 - 4 = 9 яиц в день, 9 * 2 = 18 долларов.\nОтвет: 18", "ru", 18),
    ],
)
def test_extract_number(text, lang, want):
    got = extract_number(text, lang)
    assert got is not None and got == pytest.approx(want), (text, got)


@pytest.mark.parametrize(
    "text, lang",
    [
        ("no numbers here", "en"),
        ("3,5", "en"),  # decimal comma in English: ambiguous
        ("Хариулт: 2,5 цаг", "mn"),  # decimal comma in Mongolian (CLDR: ".") : ambiguous
        ("Ответ: 1,2,3", "ru"),
        ("Я не знаю.", "ru"),
        ("The answer is 1 234,5", "en"),  # not "1": digits the number did not take
        ("2024/05/16", "en"),
        ("2024.05.16", "hu"),  # a date, not a number
        ("H2O and km2", "en"),  # digits glued to letters are not numbers
        ("<think>so it is 5</think>", "en"),  # nothing after thinking
        ("<think>5 + 5 = 10, wait", "en"),  # cut off while thinking
        ("Nem tudom.", "hu"),
        ("", "zh"),
    ],
)
def test_no_number_or_ambiguous_gives_none(text, lang):
    assert extract_number(text, lang) is None


def test_thinking_numbers_are_ignored():
    assert extract_number("<think>maybe 12? no, 9*2 = 18</think>\nAnswer: 18", "en") == 18
    assert extract_number("so 7 wait 9</think>A válasz: 20", "hu") == 20


@pytest.mark.parametrize(
    "text, lang, want",
    [("18", "en", 18), ("1,234", "en", 1234), ("1 234,5", "hu", 1234.5), ("-2", "cs", -2), ("１２", "zh", 12), ("18 apples", "en", None), ("", "en", None)],
)
def test_parse_number_reads_exactly_one_number(text, lang, want):
    assert parse_number(text, lang) == want


@pytest.mark.parametrize(
    "s, want",
    [("十八", 18), ("三百零五", 305), ("一千零一", 1001), ("两万三千", 23000), ("十", 10), ("二〇二四", 2024), ("负七", -7), ("一万二千三百", 12300), ("三亿", 300_000_000), ("五十五十", None), ("abc", None)],
)
def test_chinese_numerals(s, want):
    assert chinese_numeral(s) == want


def test_numbers_match():
    assert numbers_match(18.0, "18")
    assert numbers_match(0.1 + 0.2, 0.3)
    assert not numbers_match(18.5, 18)
    assert not numbers_match(None, "18")
    assert numbers_match("1,234", 1234)
    assert numbers_match(1234.5, "1 234,5", pack="hu")
    assert numbers_match(100.0, 100.00005, rel_tol=1e-6)
    assert not numbers_match(100.0, 100.01, rel_tol=1e-6)
    with pytest.raises(DataError, match="'eighteen'"):
        numbers_match(18, "eighteen")


def test_mm_eval_reasoning_golds_and_mongolian_answers():
    path = resolve_data_file("mm_eval/reasoning_eval.json")
    if not path.exists():
        pytest.skip(f"MM-Eval data not found ({path}); see shared/data/README.md")
    records = json.loads(path.read_text(encoding="utf-8"))[:60]
    for rec in records:
        gold = rec["answer"]
        value = parse_number(gold)
        assert value is not None, gold
        # A Mongolian solution that restates numbers from the question, then gives the answer.
        out = f"{rec['question'][:120]} ... тооцоолбол.\nХариулт: {gold}"
        assert numbers_match(extract_number(out, "mn"), gold), (out, gold)
        big = int(value) * 1000 + 5
        spaced = f"{big:,}".replace(",", " ")
        assert extract_number(f"Хариулт: {spaced} төгрөг", "mn") == big
