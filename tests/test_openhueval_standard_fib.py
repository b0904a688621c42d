import json

import pytest
from rapidfuzz import fuzz

from glotbench.benchmarks.openhueval.common import breakdown
from glotbench.benchmarks.openhueval import standard_fib as sf
from glotbench.paths import resolve_data_file


@pytest.fixture(scope="module")
def records():
    if not resolve_data_file(sf.DATA_FILE).is_file():
        pytest.skip(f"OpenHuEval data not found ({sf.DATA_FILE} under the data root)")
    return sf.load()


@pytest.fixture(scope="module")
def hussites(records):
    return next(r for r in records if "#3#menlevéllel;menlevél" in r["answers"])


def answers(*vals):
    return "Here you go: " + json.dumps({"answers": [f"#{i}#{v}" for i, v in enumerate(vals)]}, ensure_ascii=False) + " Done."


def test_loads_all_records(records):
    assert len(records) == 93
    assert sum(len(r["answers"]) for r in records) == 727


def test_prompts(hussites):
    en = sf.build_prompt(hussites, "en")
    assert en.startswith("The following questions are in Hungarian language on history")
    assert str(hussites["questions"]) in en and hussites["instruction"] in en
    hu = sf.build_prompt(hussites, "hu")  # glotbench's own translation
    assert hu.startswith("Az alábbi kérdések magyar nyelvűek") and str(hussites["questions"]) in hu
    assert "{" + "questions}" not in hu


def test_split_variants():
    assert sf.split_variants("#3#menlevéllel;menlevél") == ["menlevéllel", "menlevél"]
    assert sf.split_variants("#10#Prága") == ["Prága"]


def test_all_right_with_multi_variant_gold(hussites):
    it = sf.score(hussites, answers("Prága", "cseh", "bort", "menlevéllel", "konstanzi", "szekérvár"))
    assert it.values["blank_correct"] == 6 and it.values["question_correct"] == 1
    # Gold variants passed: 6 blanks, two of them with both variants above 70.
    assert it.values["variant_hits"] == 8


def test_every_gold_variant_must_pass(hussites):
    # "szekérvárral" is 86 against "szekérvár" but exactly 70 against "szekértábor": not > 70.
    assert sf.fuzzy_ratio("szekértábor", "szekérvárral") == 70
    it = sf.score(hussites, answers("Prága", "cseh", "bort", "menlevél", "konstanzi", "szekérvárral"))
    assert it.metadata["blanks"] == [True] * 5 + [False]
    assert it.values["question_correct"] == 0


def test_predicted_variants_take_the_best_match(hussites):
    it = sf.score(hussites, answers("Prága", "cseh", "bor", "menlevél", "konstanzi", "x;szekértábor"))
    assert it.values["question_correct"] == 1


def test_ratio_is_rounded_like_fuzzywuzzy():
    a, b = "a" * 31 + "b" * 26, "a" * 31
    assert 70 < fuzz.ratio(a, b) < 70.5
    assert sf.fuzzy_ratio(a, b) == 70
    assert sf.judge_blank([a], [b]) == (False, 0)


def test_fewer_blanks_and_parse_failure(hussites):
    it = sf.score(hussites, answers("Prága", "cseh"))
    assert it.metadata["blanks"] == [True, True, False, False, False, False]
    bad = sf.score(hussites, "Prága, cseh, bort")
    assert bad.values["parse_failed"] == 1 and bad.values["blank_total"] == 6 and bad.values["blank_correct"] == 0


def test_summary_reports_reference_quirk_and_breakdown(records, hussites):
    lang = next(r for r in records if r["hu_specific_dim"] == "language")
    gold_lang = [sf.split_variants(a)[0] for a in lang["answers"]]
    items = [
        sf.score(hussites, answers("Prága", "cseh", "bort", "menlevéllel", "konstanzi", "szekérvár")),
        sf.score(lang, answers(*gold_lang)),
    ]
    s = sf.summarize(items)
    assert s["blank_accuracy"] == 1.0 and s["question_accuracy"] == 1.0
    # The reference counts passing gold VARIANTS over blanks, so it can exceed 100%.
    assert s["blank_accuracy_reference"] > 1.0
    assert s["blank_accuracy_reference"] == pytest.approx(sum(i.values["variant_hits"] for i in items) / s["n_blanks"])
    by = breakdown(items, "hu_specific_dim", sf.summarize)
    assert set(by) == {"history", "language"}
