"""Multiple-choice extraction: any label set, any pack language; None rather than a wrong label."""

from __future__ import annotations

import json

import pytest

from glotbench.errors import DataError
from glotbench.extract import extract_choice
from glotbench.paths import resolve_data_file

LAT = ["A", "B", "C", "D"]
LAT5 = ["A", "B", "C", "D", "E"]
CYR = ["А", "Б", "В", "Г"]  # Cyrillic
DIG = ["1", "2", "3", "4", "5"]


def _mm_eval(name: str, n: int = 80) -> list[dict]:
    path = resolve_data_file(f"mm_eval/{name}_eval.json")
    if not path.exists():
        pytest.skip(f"MM-Eval data not found ({path}); see shared/data/README.md")
    return json.loads(path.read_text(encoding="utf-8"))[:n]


# ------------------------------------------------------------------ bare labels
@pytest.mark.parametrize("out", ["C", "C.", "(C)", "**C**", "C)", " C\n", "[C]", "**(C)**", "C: Paris", "C) Rome", "Ｃ"])
def test_bare_label_forms(out):
    assert extract_choice(out, LAT, None, "en") == "C"


@pytest.mark.parametrize(
    "out, lang, want",
    [
        # English
        ("Answer: A", "en", "A"),
        ("The answer is (B).", "en", "B"),
        ("**Final answer:** D", "en", "D"),
        ("The correct option is C because the others are wrong.", "en", "C"),
        ("A good answer is C", "en", "C"),  # article "A" is not the label
        ("A correct answer would be D.", "en", "D"),
        ("B is correct.", "en", "B"),
        ("A is correct.", "en", "A"),
        ("(B) is the correct answer", "en", "B"),
        ("The answer is not A. The answer is (C).", "en", "C"),
        ("Answer: B\nWait, actually the answer is D.", "en", "D"),  # last statement wins
        ("So the final answer is $\\boxed{C}$.", "en", "C"),
        ("Let me think. Paris is the capital.\n\nB", "en", "B"),  # a label-only line
        # Hungarian
        ("A helyes válasz: B", "hu", "B"),
        ("A helyes válasz a C, mert a többi nem illik a mondatba.", "hu", "C"),
        ("A helyes válasz az A.", "hu", "A"),
        ("A válasz: A", "hu", "A"),
        ("A B.", "hu", "B"),  # article + label
        ("A válasz a B-t jelöli.", "hu", "B"),  # Hungarian suffix after a hyphen
        ("Szerintem a helyes válasz a D) lehetőség.", "hu", "D"),
        ("Végső válasz: **C**", "hu", "C"),
        ("A B a helyes válasz.", "hu", "B"),
        ("Válaszom: A", "hu", "A"),
        # Czech
        ("Odpověď: D", "cs", "D"),
        ("Správná odpověď je C.", "cs", "C"),
        ("Odpověď je (B), protože ostatní možnosti nedávají smysl.", "cs", "B"),
        ("A proto je správná odpověď B", "cs", "B"),  # "A" = "and"
        ("Správná možnost: E", "cs", "E"),
        ("E je správně.", "cs", "E"),
        # Chinese
        ("答案是C", "zh", "C"),
        ("答案：B", "zh", "B"),
        ("正确答案为D。", "zh", "D"),
        ("故选B。", "zh", "B"),
        ("C是正确答案", "zh", "C"),
        ("我认为答案应该是A，因为其他选项都不符合。", "zh", "A"),
        ("选项A不对，B是正确的。", "zh", "B"),
        ("答案是B项", "zh", "B"),
        # Mongolian with Latin labels (MM-Eval's layout)
        ("Хариулт: B", "mn", "B"),
        ("Зөв хариулт бол C.", "mn", "C"),
        ("Хариулт нь D", "mn", "D"),
        # Russian
        ("Ответ: B", "ru", "B"),
        ("Правильный ответ — C.", "ru", "C"),
        ("Я думаю, что верный вариант B, хотя вариант A тоже кажется разумным.", "ru", "B"),
        ("Окончательный ответ: **D**", "ru", "D"),
        ("В этом случае ответ C", "ru", "C"),  # "В" = "in", not Latin B's look-alike
        ("C является правильным ответом.", "ru", "C"),
        ("Вариант B правильный.", "ru", "B"),
        ("Не A, а D.", "ru", "D"),  # "not A but D"
        ("B неверно, правильно C.", "ru", "C"),
        ("Ответ: B. Подождите, D.", "ru", "D"),  # self-correction
        ("И поэтому ответ D", "ru", "D"),  # "И" = "and"
        # English answer inside a non-English task
        ("Answer: B", "hu", "B"),
        ("The answer is D", "mn", "D"),
    ],
)
def test_answer_statements(out, lang, want):
    labels = LAT5 if lang == "cs" else LAT
    assert extract_choice(out, labels, None, lang) == want


# ------------------------------------------------------------------ Cyrillic labels and homoglyphs
@pytest.mark.parametrize(
    "out, want",
    [
        ("Хариулт: В", "В"),
        ("В", "В"),
        ("Б.", "Б"),
        ("(Г)", "Г"),
        ("Зөв хариулт бол А", "А"),
        ("В бол зөв хариулт", "В"),
        ("B", "В"),  # Latin B typed for Cyrillic Ve
        ("Answer: A", "А"),  # Latin A for Cyrillic A
        ("D", None),  # no look-alike: never mapped by alphabet position
        ("C", None),  # Latin C looks like Cyrillic Es, which is not a label here
        ("В биш", None),  # "not В"
        ("Хариулт: Б эсвэл В", None),
    ],
)
def test_cyrillic_labels(out, want):
    assert extract_choice(out, CYR, None, "mn") == want


@pytest.mark.parametrize("out, want", [("Хариулт: В", "B"), ("С", "C"), ("А.", "A"), ("Б", None), ("Г", None)])
def test_cyrillic_look_alikes_for_latin_labels(out, want):
    assert extract_choice(out, LAT, None, "mn") == want


@pytest.mark.parametrize(
    "out, want",
    [
        ("Ответ: Б", "Б"),
        ("Правильный ответ — вариант В.", "В"),
        ("А неверно, правильный ответ Г.", "Г"),  # "А is wrong", then the answer
        ("Мой ответ: (А)", "А"),
        ("Ответ: Б и В", None),
        ("Ответ: Б или Г", None),
        ("Я не знаю.", None),
    ],
)
def test_russian_cyrillic_labels(out, want):
    assert extract_choice(out, CYR, None, "ru") == want
    assert extract_choice(out, CYR, None, "rus") == want  # the ISO 639-3 code finds the same pack


# ------------------------------------------------------------------ numeric labels
@pytest.mark.parametrize(
    "out, want",
    [("3", "3"), ("3.", "3"), ("Answer: 5", "5"), ("Odpověď: 2", "2"), ("(4)", "4"), ("1.5", None), ("12", None), ("Answer: 2 or 3", None)],
)
def test_numeric_labels(out, want):
    assert extract_choice(out, DIG, None, "cs" if "Odpověď" in out else "en") == want


# ------------------------------------------------------------------ ambiguity and precision
@pytest.mark.parametrize(
    "out, lang",
    [
        ("A or B", "en"),
        ("B or C", "en"),
        ("Answer: B, C", "en"),
        ("Answer: B/C", "en"),
        ("A helyes válasz a B vagy a C.", "hu"),
        ("A válasz: B és C", "hu"),
        ("Odpověď: B nebo C", "cs"),
        ("答案：A和B", "zh"),
        ("答案是A、C", "zh"),
        ("Хариулт: B эсвэл C", "mn"),
        ("Ответ: B или C", "ru"),
        ("Я не знаю.", "ru"),
        ("Bob likes cats.", "en"),
        ("I don't know.", "en"),
        ("A cat sat on the mat.", "en"),
        ("", "en"),
        ("Nem tudom.", "hu"),
    ],
)
def test_ambiguous_or_missing_gives_none(out, lang):
    assert extract_choice(out, LAT, None, lang) is None


def test_option_list_echo_is_not_a_leading_label():
    out = "A) Paris\nB) London\nC) Rome\nD) Berlin"
    assert extract_choice(out, LAT, ["Paris", "London", "Rome", "Berlin"], "en") is None
    assert extract_choice(out + "\n\nAnswer: C", LAT, ["Paris", "London", "Rome", "Berlin"], "en") == "C"


def test_label_and_text_that_disagree_give_none():
    opts = ["марсель", "парис", "сайхан", "лион"]
    assert extract_choice("B) марсель", LAT, opts, "mn") is None
    assert extract_choice("B) парис", LAT, opts, "mn") == "B"


# ------------------------------------------------------------------ thinking blocks
def test_thinking_is_stripped_before_extraction():
    out = "<think>Maybe A? Hmm, answer: A. Wait, no.</think>\nThe answer is B."
    assert extract_choice(out, LAT, None, "en") == "B"
    assert extract_choice("<think>Answer: A, surely", LAT, None, "en") is None  # cut off while thinking
    assert extract_choice("Várjunk... a válasz A.</think>A helyes válasz: C", LAT, None, "hu") == "C"


# ------------------------------------------------------------------ option text matching
@pytest.mark.parametrize(
    "out, want",
    [
        ("парис", "B"),
        ("Парис.", "B"),
        ("Хариулт: парис", "B"),
        ("Францын нийслэл бол Парис.", "B"),
        ("марсель эсвэл парис", None),  # two options named
        ("Берлин", None),
    ],
)
def test_option_text_matching(out, want):
    assert extract_choice(out, LAT, ["марсель", "парис", "сайхан", "лион"], "mn") == want


def test_longer_option_shadows_its_own_substring():
    opts = ["багамын доллар", "британийн фунт", "евро", "ам.доллар"]
    assert extract_choice("багамын доллар", LAT, opts, "mn") == "A"
    assert extract_choice("Ам. доллар", LAT, opts, "mn") == "D"


def test_chinese_and_czech_option_text():
    assert extract_choice("北京", LAT, ["上海", "北京", "广州", "深圳"], "zh") == "B"
    assert extract_choice("答案是北京。", LAT, ["上海", "北京", "广州", "深圳"], "zh") == "B"
    opts = ["čtverec, kruh, trojúhelník", "trojúhelník, kruh, čtverec", "kruh, trojúhelník, čtverec"]
    assert extract_choice("Odpověď: trojúhelník, kruh, čtverec", ["A", "B", "C"], opts, "cs") == "B"


def test_hungarian_proverb_options():
    opts = ["ha te kezdted, viseld tetteid következményeit!", 'Ha azt mondod "a", mondd "b".']
    assert extract_choice("Ha te kezdted, viseld tetteid következményeit!", ["1", "2"], opts, "hu") == "1"
    assert extract_choice("A helyes válasz: 2", ["1", "2"], opts, "hu") == "2"


# ------------------------------------------------------------------ real MM-Eval items
@pytest.mark.parametrize("level", ["semantics", "knowledge", "syntax"])
def test_mm_eval_real_items(level):
    look_alike = {"A": "А", "B": "В", "C": "С"}
    wrong = []
    for i, rec in enumerate(_mm_eval(level)):
        labels = [c["label"] for c in rec["choices"]]
        opts = [c["text"] for c in rec["choices"]]
        gold = rec["answerKey"]
        text = opts[labels.index(gold)]
        if sum(o == text for o in opts) > 1:
            continue  # the data repeats this option: no text can pick it
        outputs = [text, f"Хариулт: {text}", f"{gold}. {text}", f"Хариулт: {gold}", f"**{gold}**"]
        if gold in look_alike:
            outputs.append(f"Хариулт: {look_alike[gold]}")
        for out in outputs:
            got = extract_choice(out, labels, opts, "mn")
            if got != gold:
                wrong.append((i, out, got, gold))
    assert not wrong, wrong[:5]


def test_mm_eval_semantics_filled_sentence():
    # A model that writes the whole completed sentence back: option text inside it.
    for rec in _mm_eval("semantics", 40):
        labels = [c["label"] for c in rec["choices"]]
        opts = [c["text"] for c in rec["choices"]]
        sentence = rec["question"].replace("_", opts[labels.index(rec["answerKey"])])
        got = extract_choice(sentence, labels, opts, "mn")
        assert got in (rec["answerKey"], None), (sentence, got)


def test_mm_eval_wrong_option_text_is_never_read_as_gold():
    for rec in _mm_eval("knowledge", 60):
        labels = [c["label"] for c in rec["choices"]]
        opts = [c["text"] for c in rec["choices"]]
        for lab, text in zip(labels, opts):
            got = extract_choice(text, labels, opts, "mn")
            assert got in (lab, None), (text, got, lab)


# ------------------------------------------------------------------ bad calls
def test_bad_label_lists_are_data_errors():
    with pytest.raises(DataError, match="labels"):
        extract_choice("A", [], None, "en")
    with pytest.raises(DataError, match="repeats"):
        extract_choice("A", ["A", "A"], None, "en")
    with pytest.raises(DataError, match="choices"):
        extract_choice("A", ["A", "B"], ["x"], "en")


def test_truncated_echo_of_the_option_list_is_not_an_answer():
    """Real SmolLM2 output on MM-Eval syntax: it echoes the options and is cut at the token limit."""
    from glotbench.extract.choice import extract_choice

    opts = ["уу? сайн байна", "байна сайн уу?", "сайн байна уу?", "уу? байна сайн"]
    assert extract_choice("A. уу? сайн та сайн, байна\nB.", list("ABCD"), opts, "mn") is None
    # a bare label after the echo is still read
    assert extract_choice("A. уу? сайн байна\nB. байна сайн уу?\n\nC", list("ABCD"), opts, "mn") == "C"
