"""words_alternation shares the word boundaries of neighbouring words (``L(?i:w1|w2)R``) instead of
spelling them around every word (``L(?i:w1)R|L(?i:w2)R``), which compiled 4-8x slower. The two
forms must match exactly the same text: diffed here on every pack's word lists, and through the
whole choice and number extractors (the extraction corpus and generated answers), against a plain
re-statement of the per-word form.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

import glotbench.extract.choice as choice_mod
import glotbench.extract.number as number_mod
from glotbench.extract.corpus import load_corpus, run_case
from glotbench.extract.text import word_pattern, words_alternation
from glotbench.languages import available_languages, get_pack

FIELDS = ("answer_words", "connectors", "option_words", "correct_words", "list_conjunctions", "negation_words",
          "wrong_words", "contrast_words", "correction_words", "yes_words", "no_words", "label_words")
CORPUS = Path(__file__).parent / "extraction_corpus" / "v1"
# what may stand right before or after a word: nothing, spaces, letters of several scripts, digits, CJK, marks
EDGES = ("", " ", "  ", "\n", "x", "é", "ő", "Ж", "ү", "7", "答", "是", "(", "**", ".", ",", "_", ":", "-", "'")


def reference_alternation(words) -> str:
    """The per-word form (glotbench before the change): every word with its own boundaries."""
    uniq = sorted({w.strip() for w in words if w and w.strip()}, key=len, reverse=True)
    if not uniq:
        return "(?!)"
    return "(?:" + "|".join(word_pattern(w) for w in uniq) + ")"


def _spellings(word: str) -> list[str]:
    out = {word, word.upper(), word.lower(), word.title(), word.swapcase()}
    if " " in word:
        out |= {word.replace(" ", "  "), word.replace(" ", "\n"), word.replace(" ", "")}
    return sorted(out)


def _texts(words: list[str], rng: random.Random, n_random: int = 400) -> list[str]:
    texts = []
    for w in words:
        for s in _spellings(w):
            texts += [f"{rng.choice(EDGES)}{s}{rng.choice(EDGES)}" for _ in range(4)]
            texts += [s[:-1], s[1:], s + s]  # cut short on either side, and glued to itself
    for _ in range(n_random):  # several words, one touching the next or not
        parts = [rng.choice(_spellings(rng.choice(words))) for _ in range(rng.randint(2, 5))]
        texts.append("".join(p + rng.choice(EDGES) for p in parts))
    return texts


def _spans(pattern: re.Pattern[str], text: str) -> list[tuple[int, int]]:
    return [m.span() for m in pattern.finditer(text)]


@pytest.mark.parametrize("code", available_languages())
def test_same_matches_as_the_per_word_form_on_every_word_list(code):
    pack, en = get_pack(code), get_pack("en")
    rng = random.Random(code)
    checked = 0
    for field in FIELDS:
        words = list(getattr(pack, field)) + (list(getattr(en, field)) if code != "en" else [])
        if not words:
            continue
        mine, ref = re.compile(words_alternation(words)), re.compile(reference_alternation(words))
        # followed by more pattern, the engine may come back into the alternation to try another word
        mine_t, ref_t = (re.compile(f"{p}(?:[ \t]*[A-D])") for p in (words_alternation(words), reference_alternation(words)))
        for text in _texts(words, rng):
            assert _spans(mine, text) == _spans(ref, text), (code, field, text)
            assert _spans(mine_t, text + " B") == _spans(ref_t, text + " B"), (code, field, text)
            checked += 1
    assert checked > 1000


def test_boundaries_are_shared_only_between_neighbours_that_need_the_same():
    # longest first: the CJK phrase (no boundaries) sits between two Latin words: three runs
    words = ["answer is", "最终的正确答案是", "válasz"]
    pat = words_alternation(words)
    assert pat.count("(?i:") == 3
    rx = re.compile(pat)
    assert [m.group(0) for m in rx.finditer("the ANSWER   is 最终的正确答案是x válaszok válasz")] == ["ANSWER   is", "最终的正确答案是", "válasz"]
    assert words_alternation([]) == "(?!)" and words_alternation(["  "]) == "(?!)"


def _generated_answers(code: str, labels: tuple[str, ...], options: tuple[str, ...], rng: random.Random) -> list[str]:
    pack, en = get_pack(code), get_pack("en")

    def word(field: str) -> str:
        pool = list(getattr(pack, field)) + list(getattr(en, field)) or [""]
        return rng.choice(_spellings(rng.choice(pool)))

    texts = []
    for _ in range(100):
        a, b = rng.choice(labels), rng.choice(labels)
        texts += [
            f"{word('answer_words')} {word('connectors')} {a}",
            f"{a} {word('correct_words')}",
            f"{word('negation_words')} {a}, {word('contrast_words')} {b}",
            f"{a} {word('list_conjunctions')} {b}",
            f"{a}. {word('correction_words')}, {b}",
            f"{word('option_words')} {a}: {word('yes_words')}. {b}: {word('no_words')}.",
            f"{rng.choice(options)}",
            f"{word('label_words')} {rng.choice(options)} {a}",
            f"**{a}**{rng.choice(EDGES)}{word('answer_words')}{rng.choice(EDGES)}{b}",
            f"{word('answer_words')}{rng.choice(EDGES)}{rng.randint(0, 2000)}",
        ]
    return texts


def _extract_all(cases, generated):
    out = [run_case(c) for c in cases]
    for code, labels, options, texts in generated:
        out += [choice_mod.explain_choice(t, labels, options, code) for t in texts]
        out += [number_mod.explain_number(t, code) for t in texts]
    return out


def test_the_extractors_read_every_answer_as_the_per_word_form_does(monkeypatch):
    cases = load_corpus(CORPUS)
    generated = []
    for code in available_languages():
        rng = random.Random(f"answers-{code}")
        for labels in (("A", "B", "C", "D"), ("А", "Б", "В", "Г")) + ((("1", "2", "3"),) if code == "en" else ()):
            options = tuple(f"{rng.choice(list(get_pack(code).yes_words) or ['x'])} {k}" for k in range(len(labels)))
            generated.append((code, labels, options, _generated_answers(code, labels, options, rng)))

    def fresh():
        choice_mod._matcher.cache_clear()
        number_mod._GRAMMARS.clear()

    fresh()
    mine = _extract_all(cases, generated)
    monkeypatch.setattr(choice_mod, "words_alternation", reference_alternation)
    monkeypatch.setattr(number_mod, "words_alternation", reference_alternation)
    fresh()
    try:
        ref = _extract_all(cases, generated)
    finally:
        monkeypatch.undo()
        fresh()
    assert len(mine) == len(ref) > 20_000
    diff = [(i, a, b) for i, (a, b) in enumerate(zip(mine, ref)) if a != b]
    assert not diff, diff[:5]
    # the answers exercise the rules, not just "none"
    rules = {e.rule for e in mine}
    assert {"choice:answer_phrase", "choice:correct_phrase", "choice:leading_label", "choice:contrast",
            "choice:self_correction", "choice:verdict_list"} <= rules, sorted(rules)
