"""The choice extractor's clean-answer look-up ("A", "B.", "(c)", "**D**" read once per label set and
pack, extract/choice.py _clean_forms) gives exactly the full reading: value and rule, on every
built-in pack, for label sets in several scripts, with option texts that are absent, ordinary,
equal to a label, or made of the forms' own marks; and on every choice case of the extraction
corpus, read in its own language and in every other pack. Also the shortcuts of the full reading
(per-option counts, compiled patterns, word look-aheads, has_cjk's class): each is what it replaced."""

from __future__ import annotations

from pathlib import Path

import pytest

from glotbench.extract import choice
from glotbench.extract.corpus import load_corpus
from glotbench.languages import available_languages, get_pack

CORPUS = Path(__file__).parent / "extraction_corpus" / "v1"
LABEL_SETS = [
    ["A", "B", "C", "D"], ["A", "B", "C", "D", "E"], ["A", "B"], ["a", "b", "c", "d"], ["1", "2", "3", "4"],
    ["А", "Б", "В", "Г"], ["А", "В", "С", "D"], ["A", "B", "C", "D", "E", "F", "G", "H", "I", "J"],
    ["甲", "乙", "丙", "丁"], ["I", "II", "III", "IV"], ["A", "B", "C", "10"],
]
OPTION_SETS = [
    None, "ordinary", "labels", "marks", "with_label_letter", "empty_and_blank", "negation_words",
]


def _options(kind, labels, pack):
    n = len(labels)
    if kind is None:
        return None
    if kind == "ordinary":
        return [f"option {i} text" for i in range(n)]
    if kind == "labels":  # an option text equal to a label (a True/False or letter answer list)
        return list(reversed(labels))
    if kind == "marks":
        return ([".", "**", ")", "(", "[", "]"] * 3)[:n]
    if kind == "with_label_letter":
        return [f"{lab}{lab}" if i % 2 else f"{lab}. x" for i, lab in enumerate(labels)]
    if kind == "empty_and_blank":
        return (["", " ", "yes", "no"] * 3)[:n]
    words = list(pack.negation_words) + list(pack.correction_words) + list(pack.answer_words) + ["no", "not"]
    return [words[i % len(words)] for i in range(n)]


def full(text, labels, options, pack):
    """explain_choice with the clean-answer look-up off (every answer read in full)."""
    real = choice._option_in
    choice._option_in = lambda answer, options: True
    try:
        return choice.explain_choice(text, labels, options, pack)
    finally:
        choice._option_in = real


def _clean_texts(labels):
    m = choice._matcher("en", tuple(labels))
    return sorted(m.clean)


def test_the_clean_forms_are_there():
    assert {"A", "A.", "A)", "(A)", "**A**", "[A]", "a", "(c)"} <= set(_clean_texts(["A", "B", "C", "D"]))
    # a label of two characters has none; a form whose text holds another variant is left out
    assert "10" not in _clean_texts(["1", "10"]) and "1" in _clean_texts(["1", "10"])
    assert not any(t.count("A") + t.count("А") > 1 for t in _clean_texts(["А", "A"]))


@pytest.mark.parametrize("code", available_languages())
def test_clean_answers_read_as_in_full_on_every_pack(code):
    pack = get_pack(code)
    checked = 0
    for labels in LABEL_SETS:
        choice._matcher.cache_clear()  # the look-up is filled afresh for each label set
        m = choice._matcher(pack.code, tuple(labels))
        texts = sorted(m.clean) + [f" {t}\n" for t in sorted(m.clean)] + ["<think>B?</think>A", "Ａ", "A\n\nB"]
        for kind in OPTION_SETS:
            options = _options(kind, labels, pack)
            for text in texts:
                want = full(text, labels, options, pack)
                got = choice.explain_choice(text, labels, options, pack)
                assert (got.value, got.rule) == (want.value, want.rule), (code, labels, kind, text)
                checked += 1
    assert checked > 1000
    assert any(v is not None and v is not choice._NOT_CLEAN for v in m.clean.values())  # the look-up was used


def test_corpus_choice_cases_read_as_in_full_in_every_pack():
    cases = [c for c in load_corpus(CORPUS) if c.extractor == "choice"]
    assert len(cases) > 300
    settings = sorted({(c.labels, c.choices) for c in cases}, key=repr)
    for code in available_languages():
        choice._matcher.cache_clear()
        for c in cases:
            for options in (c.choices, None):
                want = full(c.text, c.labels, options, code)
                got = choice.explain_choice(c.text, c.labels, options, code)
                assert (got.value, got.rule) == (want.value, want.rule), (code, c.id, c.text, options)
        # each label set of the corpus in its clean forms, with each option list it comes with
        for labels, choices in settings:
            for text in sorted(choice._matcher(get_pack(code).code, labels).clean):
                for options in (choices, None):
                    want = full(text, labels, options, code)
                    got = choice.explain_choice(text, labels, options, code)
                    assert (got.value, got.rule) == (want.value, want.rule), (code, labels, text, options)


def test_a_clean_answer_an_option_text_takes_back_is_read_in_full():
    # "B" leads, but with the options absent a correction word would be read in it; with an option text
    # occurring in the answer the look-up is skipped and the answer read in full, as before.
    labels, options = ["A", "B", "C", "D"], ["A", "x", "y", "z"]
    assert choice._option_in("(A)", options) and not choice._option_in("(B)", options)
    assert choice._option_in("A", ["", " ", "A"]) and not choice._option_in("A", ["", " "])
    got = choice.explain_choice("(A)", labels, options, "en")
    want = full("(A)", labels, options, "en")
    assert (got.value, got.rule) == (want.value, want.rule)


def test_option_containment_kept_per_option_is_the_formula():
    # _contains_option keeps each option's _wordy; it says what the formula says on the corpus's
    # answers (normalised, as _match_option_text gets them) against every option list of the corpus
    from glotbench.extract.text import contains_phrase, normalize

    cases = [c for c in load_corpus(CORPUS) if c.extractor == "choice"]
    option_lists = {c.choices for c in cases if c.choices} | {("2", "1,5", "ab", "中文", "a b", "багамын доллар")}
    pack = get_pack("mn")
    seen = 0
    for c in cases:
        cand = normalize(c.text, pack)
        for options in option_lists:
            for o in (normalize(o, pack) for o in options):
                if o:
                    assert choice._contains_option(cand, o) == (choice._wordy(o) and contains_phrase(cand, o)), (cand, o)
                    seen += choice._contains_option(cand, o)
    assert seen > 0


def test_the_compiled_patterns_are_the_ones_built_per_call():
    import re

    m = choice._matcher("en", ("A", "B", "C", "D"))
    assert m.label_re.pattern == m.label
    assert m.final_bare.pattern == (f"(?<!\\d)[;；.。!！?？\\n][ \\t*_]*{choice._OPEN}{m.label}{choice._CLOSE}"
                                    "[ \\t.。!！]*$")
    assert m.final_bare.flags == re.compile(m.final_bare.pattern).flags


def _without_lookahead(pattern):
    import re

    assert pattern.pattern.startswith("(?=(?i:[")
    return re.compile(pattern.pattern[pattern.pattern.index("]))") + 3:], pattern.flags)


def test_the_word_lookaheads_change_no_match():
    # forward, tail, the first contrast pattern and correction start with a look-ahead for a word's first
    # character (choice._starts); without it they find the same matches, groups included, on every pack
    texts = [c.text for c in load_corpus(CORPUS) if c.extractor == "choice"]
    for code in available_languages():
        pack = get_pack(code)
        words = list(pack.answer_words) + list(pack.correction_words) + list(pack.negation_words)
        extra = [f"{w} A" for w in words] + [f"x{w.upper()} (B)." for w in words] + [f"{w.title()}: c" for w in words]
        for labels in (("A", "B", "C", "D"), ("А", "Б", "В", "Г")):
            m = choice._matcher(code, labels)
            for pat in (m.forward, m.tail, m.contrast[0], m.correction):
                plain = _without_lookahead(pat)
                for text in texts + extra:
                    got = [(h.span(), h.groupdict()) for h in pat.finditer(text)]
                    assert got == [(h.span(), h.groupdict()) for h in plain.finditer(text)], (code, pat.pattern[:40], text)


def test_a_words_first_character_passes_its_lookahead_in_any_case():
    # the look-ahead's class, matched case-insensitively as the words are, takes every character that a word's
    # first character takes (Latin, Greek, Cyrillic, CJK punctuation and full-width forms; the Kelvin sign, long s)
    import re

    codepoints = [chr(c) for c in (*range(0x3000), *range(0xFF00, 0xFFF0), 0x212A, 0x212B, 0x2126)]
    for code in available_languages():
        pack = get_pack(code)
        for field in ("answer_words", "correction_words", "negation_words"):
            words = choice._merged(pack, field)
            look = re.compile(choice._starts(words))
            for first in {w.strip()[0] for w in words if w.strip()}:
                lit = re.compile(f"(?i:{re.escape(first)})")
                for ch in codepoints:
                    if lit.match(ch):
                        assert look.match(ch), (code, field, first, ch)


def test_has_cjk_is_the_character_loop_on_every_code_point():
    from glotbench.extract.text import has_cjk

    def loop(text):  # extract/text.py's has_cjk before its compiled class
        return any("\u3400" <= c <= "\u9fff" or "\uf900" <= c <= "\ufaff" or "\u3040" <= c <= "\u30ff" for c in text)

    assert [c for c in range(0x110000) if has_cjk(chr(c)) != loop(chr(c))] == []
    assert has_cjk("答案是C") and has_cjk("x ひ") and not has_cjk("Хариулт: C") and not has_cjk("")


def test_fold_width_and_the_ideograph_count_are_what_they_replaced():
    from glotbench.extract import text as T

    every = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
    assert T.fold_width(every) == every.translate(T._WIDTH_TABLE)
    assert {chr(c) for c in range(0x110000) if T._WIDE.match(chr(c))} == set(T._WIDTH)
    assert T.fold_width("Хариулт: C") == "Хариулт: C" and T.fold_width("答案：Ｃ") == "答案:C"
    assert len(T._CJK_IDEOGRAPH.findall(every)) == sum(1 for c in every if "\u3400" <= c <= "\u9fff")


def test_explainer_is_explain_found_once():
    # Task.explain_extraction calls extract.explainer(extractor), made once per task; explain uses it too
    from glotbench.extract import Extraction, explain, explainer, get_extractor

    def old_explain(fn, text, *, sample, pack, **options):  # extract/result.py's explain before explainer
        twin = getattr(fn, "explain", None)
        if twin is not None:
            return twin(text, sample=sample, pack=pack, **options)
        return Extraction(fn(text, sample=sample, pack=pack, **options), getattr(fn, "__name__", "custom"))

    def shouty(text, *, sample, pack, **options):
        return text.upper() or None

    sample = {"labels": ["A", "B", "C", "D"], "choices": None}
    for fn, text in ((get_extractor("choice"), "Answer: C"), (get_extractor("number"), "Answer: 7"),
                     (get_extractor("text"), " hi "), (get_extractor("json"), '{"a": 1}'), (shouty, "x"),
                     (shouty, "")):
        want = old_explain(fn, text, sample=sample, pack="en")
        assert explainer(fn)(text, sample=sample, pack="en") == want == explain(fn, text, sample=sample, pack="en")
    assert explainer(shouty)("x", sample={}, pack="en") == Extraction("X", "shouty")


def test_answers_without_an_upper_case_label_read_as_in_full():
    # choice._has_label: an answer holding no character an upper-case label variant starts with skips the
    # patterns built on m.label; with the check off (every pattern run) the reading is the same
    real = choice._has_label
    texts = [c.text for c in load_corpus(CORPUS) if c.extractor == "choice"] + [
        "the answer is b", "\\boxed{c} but the answer is d", "the answer is a, \\boxed{b}", "answer: (c)",
        "Зөв хариулт бол «Дархан».", "хариулт: в", "答案是c", "the correct answer is b, not a", "b", "(c) correct",
        "i think c. actually, no: d.", "a: no. b: no. c: yes.", "option text only", "",
    ]
    option_lists = [None, ["Улаанбаатар", "Дархан", "Эрдэнэт", "Ховд"], ["the answer", "b", "c", "no"]]
    label_sets = [["A", "B", "C", "D"], ["А", "Б", "В", "Г"], ["1", "2", "3", "4"], ["A", "B", "C", "D", "E"]]
    skipped = 0
    for code in available_languages():
        for labels in label_sets:
            m = choice._matcher(get_pack(code).code, tuple(labels))
            for v in set(m.variant_to_label) - m.lower:
                assert m.label_start.match(v[0]), (code, labels, v)
            for options in option_lists:
                options = options[: len(labels)] if options else options
                if options and len(options) < len(labels):
                    options = options + [f"x{i}" for i in range(len(labels) - len(options))]
                for text in texts:
                    got = choice.explain_choice(text, labels, options, code)
                    choice._has_label = lambda m, answer: True
                    try:
                        want = choice.explain_choice(text, labels, options, code)
                    finally:
                        choice._has_label = real
                    assert (got.value, got.rule) == (want.value, want.rule), (code, labels, options, text)
                    skipped += not real(m, text)
    assert skipped > 1000
