"""Extractive QA scoring: EM, bag-of-words F1, SQuAD 2.0 no-answer, lemmatised step."""

from __future__ import annotations

import re
import string

import pytest

from glotbench.errors import DataError
from glotbench.scoring.extractive_qa import (
    item_values,
    normalize_answer,
    score_answer,
    score_extractive_qa,
    squad_normalize,
)
from glotbench.scoring.metrics import ScoredItem, get_metric


def test_squad_profile_is_the_official_normalisation():
    assert squad_normalize("The  Cat, sat!") == "cat sat"
    # The official function strips English articles whatever the language: Czech "a" (and) goes.
    assert normalize_answer("Petr a Pavel", "cs", profile="squad") == "petr pavel"
    assert normalize_answer("Petr a Pavel", "cs") == "petr pavel"  # squad is the default
    assert normalize_answer("Petr a Pavel", "cs", profile="lenient") == "petr a pavel"
    # ... and only ASCII punctuation, so Czech quotes stay.
    assert normalize_answer("„Praha“", "cs", profile="squad") == "„praha“"
    assert normalize_answer("„Praha“ – město…", "cs", profile="lenient") == "praha město"
    assert normalize_answer("„Praha“ – město…", "cs", profile="glotbench") == "praha město"  # old name


def _reference_normalize_answer(s):
    """SQuAD v1.1 evaluate-v1.1.py / HF evaluate ``normalize_answer``, re-stated."""

    def remove_articles(text):
        return re.sub(r"\b(a|an|the)\b", " ", text)

    def white_space_fix(text):
        return " ".join(text.split())

    def remove_punc(text):
        exclude = set(string.punctuation)
        return "".join(ch for ch in text if ch not in exclude)

    def lower(text):
        return text.lower()

    return white_space_fix(remove_articles(remove_punc(lower(s))))


NORMALISER_CASES = [
    "U.S.", "US", "don't", "dont", "twenty-one", "twenty one", "„Praha“", "Praha", "The Cat, sat!",
    "Petr a Pavel", "an apple", "A Duna", "  Karlův   most ", "most Karla IV.", "28. října 1918",
    "$1,000", "(Budapest)", "Mount Everest's height", "e-mail", "北京", "Улаанбаатар", "",
]


@pytest.mark.parametrize("text", NORMALISER_CASES)
def test_default_normaliser_is_squads_exactly(text):
    assert len(NORMALISER_CASES) == 22
    assert normalize_answer(text, "cs") == _reference_normalize_answer(text)
    assert normalize_answer(text, "en") == _reference_normalize_answer(text)
    assert score_answer(text, ["U.S."], "cs") == score_answer(text, ["U.S."], "cs", profile="squad")


def test_default_profile_differs_from_lenient_on_the_four_audit_cases():
    # SQuAD deletes punctuation; the lenient profile turns it into a space.
    assert normalize_answer("U.S.") == "us" and normalize_answer("U.S.", profile="lenient") == "u s"
    assert normalize_answer("don't") == "dont" and normalize_answer("don't", profile="lenient") == "don t"
    assert normalize_answer("twenty-one") == "twentyone"
    assert normalize_answer("„Praha“", "cs") == "„praha“" and normalize_answer("„Praha“", "cs", profile="lenient") == "praha"
    with pytest.raises(ValueError, match="lenient"):
        normalize_answer("x", profile="loose")


def test_articles_per_language():
    assert normalize_answer("The Danube", "en", profile="lenient") == "danube"
    assert normalize_answer("A Duna az ország folyója", "hu", profile="lenient") == "duna ország folyója"
    assert normalize_answer("egy", "hu", profile="lenient") == "egy"  # numeral "one", kept


def test_bag_of_words_f1_hand_computed():
    # pred {hlavní, město, praha} vs gold {praha}: P = 1/3, R = 1, F1 = 2*(1/3)/(4/3) = 0.5
    assert score_answer("hlavní město Praha", ["Praha"], "cs") == (0.0, pytest.approx(0.5))
    # pred {karlův, most} vs gold {most, karla, iv}: overlap 1, P = 1/2, R = 1/3, F1 = 0.4
    assert score_answer("Karlův most", ["most Karla IV."], "cs")[1] == pytest.approx(0.4)
    # repeated tokens count with multiplicity: pred {a, a}, gold {a}: P=1/2, R=1 -> 2/3
    assert score_answer("x x", ["x"], "cs")[1] == pytest.approx(2 / 3)


def test_multiple_golds_take_the_max():
    golds = ["v roce 1918", "1918", "28. října 1918"]
    em, f1 = score_answer("1918", golds, "cs")
    assert (em, f1) == (1.0, 1.0)
    em, f1 = score_answer("října 1918", golds, "cs")
    # best: "28 října 1918": overlap 2, P = 1, R = 2/3 -> 0.8
    assert em == 0.0 and f1 == pytest.approx(0.8)


def test_raw_step_keeps_case_and_punctuation():
    assert score_answer("Praha.", ["praha"], "cs", step="raw") == (0.0, 0.0)
    assert score_answer("Praha.", ["praha"], "cs", step="normalized") == (1.0, 1.0)


def test_squad_v2_no_answer_convention():
    # empty gold list: only an empty / "-" prediction is right
    assert score_answer("-", [], "cs") == (1.0, 1.0)
    assert score_answer("", [], "cs") == (1.0, 1.0)
    assert score_answer(None, [], "cs") == (1.0, 1.0)
    assert score_answer("Praha", [], "cs") == (0.0, 0.0)
    # answerable question, model abstains: wrong
    assert score_answer("-", ["Praha"], "cs") == (0.0, 0.0)
    # golds that normalise to nothing count as "no answer" (SQuAD v2 script)
    assert score_answer("-", ["."], "cs") == (1.0, 1.0)
    # custom no-answer strings
    assert score_answer("nincs válasz", [], "hu", no_answer_strings=("-", "", "nincs válasz")) == (1.0, 1.0)


def test_lemmatized_step_czech():
    # "v Praze" (locative) vs gold "Praha": the forms differ until lemmatised
    assert score_answer("v Praze", ["Praha"], "cs", step="normalized") == (0.0, 0.0)
    em, f1 = score_answer("v Praze", ["Praha"], "cs", step="lemmatized")
    assert em == 0.0 and f1 == pytest.approx(2 / 3)
    assert score_answer("Karlově univerzitě", ["Karlova univerzita"], "cs", step="lemmatized")[1] >= 0.5
    assert score_answer("mosty", ["most"], "cs", step="lemmatized") == (1.0, 1.0)


def test_lemmatized_step_hungarian():
    assert score_answer("Budapesten", ["Budapest"], "hu", step="normalized") == (0.0, 0.0)
    assert score_answer("Budapesten", ["Budapest"], "hu", step="lemmatized") == (1.0, 1.0)
    assert score_answer("a házakban", ["ház"], "hu", step="lemmatized") == (1.0, 1.0)


def test_report_per_step_and_no_answer_detection():
    preds = ["v Praze", "-", "Brno", "1918"]
    golds = [["Praha"], [], ["Ostrava"], ["v roce 1918", "1918"]]
    rep = score_extractive_qa(preds, golds, "cs")
    assert list(rep.steps) == ["raw", "normalized", "lemmatized"]
    em_n, f1_n = rep.steps["normalized"]
    assert em_n == pytest.approx(0.5) and f1_n == pytest.approx(0.5)
    em_l, f1_l = rep.steps["lemmatized"]
    assert em_l == pytest.approx(0.5) and f1_l == pytest.approx((2 / 3 + 1 + 0 + 1) / 4)
    assert rep.no_answer["accuracy"] == 1.0 and rep.no_answer["macro_f1"] == 1.0
    assert rep.to_dict()["steps"]["raw"]["exact_match"] == pytest.approx(0.5)


def test_report_without_lemmatiser_says_so():
    rep = score_extractive_qa(["Улаанбаатар"], [["Улаанбаатар"]], "mn")
    assert "lemmatized" not in rep.steps and "mn" in rep.notes[0]
    assert rep.steps["normalized"] == (1.0, 1.0)
    zh = score_extractive_qa(["北京市"], [["北京"]], "zh")  # per-character tokens: P=2/3, R=1
    assert zh.steps["normalized"][1] == pytest.approx(0.8)


def test_item_values_feed_registered_metrics():
    items = [
        ScoredItem(gold=["Praha"], pred="v Praze", values=item_values("v Praze", ["Praha"], "cs")),
        ScoredItem(gold=["Brno"], pred="Brno", values=item_values("Brno", ["Brno"], "cs")),
    ]
    assert items[0].values["no_answer_gold"] == 0.0
    assert get_metric("exact_match")(items) == pytest.approx(0.5)
    assert get_metric("bow_f1_lemma")(items) == pytest.approx((2 / 3 + 1) / 2)
    assert get_metric("bow_f1_raw")(items) == pytest.approx(0.5)


def test_bad_input():
    with pytest.raises(DataError, match="2 predictions but 1"):
        score_extractive_qa(["a", "b"], [["a"]], "cs")
    with pytest.raises(DataError, match="item 0: field 'golds'"):
        score_extractive_qa(["a"], ["a"], "cs")
