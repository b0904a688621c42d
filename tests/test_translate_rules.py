"""The rules `glotbench translate` applies around each string (Czech-Bench §5.2)."""

from __future__ import annotations

from glotbench.translate import rules
from glotbench.translate.pipeline import _walk, split_sentences


def test_numbers_and_formulas_are_left_alone():
    for s in ["42", "3.14", "(2 + 3) * 4", "10 %", "1,000", "−5"]:
        assert rules.untouched(s), s
    for s in ["Mg", "x + 1", "2 apples"]:
        assert not rules.untouched(s), s


def test_overrides_only_into_czech():
    assert rules.override("I only", "cs") == "Pouze I"
    assert rules.override("True, False", "cs") == "pravda, nepravda"
    assert rules.override("I only", "en") is None
    assert rules.override("I and II", "cs") is None


def test_surname_fix():
    assert rules.surname_fix("Xia", "Xiaová", "cs") == "Xia"
    assert rules.surname_fix("Novak", "Nováková", "cs") == "Novak"
    assert rules.surname_fix("the Xia dynasty", "dynastie Xiaová", "cs") is None  # two words: kept
    assert rules.surname_fix("Xia", "Xiaová", "en") is None


def test_repetition_guard():
    out, note = rules.repetition_guard("Mg", "MgMgMgMgMgMg")
    assert out == "Mg" and note
    out, note = rules.repetition_guard("Hello.", "Ahoj.")
    assert out == "Ahoj." and note is None
    out, note = rules.repetition_guard("Hi.", "x" * 3 + " ".join(f"slovo{i}" for i in range(30)))
    assert out == "Hi." and "runaway" in note


def test_sentences_and_fields():
    assert split_sentences("Weng earns $12 an hour. She worked 50 minutes. How much did she earn?") == [
        "Weng earns $12 an hour.", "She worked 50 minutes.", "How much did she earn?"]
    rec = {"question": "Q?", "choices": {"text": ["a", "b"], "label": ["A", "B"]}, "n": 3}
    got = [(c[k]) for c, k in _walk(rec, "choices.text[*]")] + [c[k] for c, k in _walk(rec, "question")]
    assert got == ["a", "b", "Q?"]
    assert list(_walk(rec, "n")) == [] and list(_walk(rec, "missing.x")) == []
