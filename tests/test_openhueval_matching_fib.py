import json

import pytest

from glotbench.benchmarks.openhueval.common import breakdown
from glotbench.benchmarks.openhueval import matching_fib as mf
from glotbench.paths import resolve_data_file


@pytest.fixture(scope="module")
def records():
    if not resolve_data_file(mf.DATA_FILE).is_file():
        pytest.skip(f"OpenHuEval data not found ({mf.DATA_FILE} under the data root)")
    return mf.load()


@pytest.fixture(scope="module")
def rec(records):
    # The 9-blank history question quoted in SOURCE.md.
    return next(r for r in records if r["answer"][:3] == ["#0#A", "#1#F", "#2#C"] and len(r["answer"]) == 9)


def answer_json(ans):
    return json.dumps({"answer": ans}, ensure_ascii=False)


def test_loads_all_records_and_blanks(records):
    assert len(records) == 278
    assert sum(len(r["answer"]) for r in records) == 2525


@pytest.mark.parametrize("lang,marker", [("en", "You are a native Hungarian teacher"), ("hu", "Egy magyar anyanyelvű tanár vagy")])
def test_prompt_has_one_shot_and_the_record(rec, lang, marker):
    p = mf.build_prompt(rec, lang)
    assert p.startswith(marker)
    assert "Janus Pannonius" in p  # the 1-shot example
    assert rec["question"] in p
    assert str(rec["options"]) in p  # OpenCompass inserts str(list)
    assert "{question}" not in p and "{options}" not in p and "{hu_specific_dim}" not in p
    assert f" {rec['hu_specific_dim']}" in p


def test_unknown_prompt_lang_is_one_line_error(rec):
    with pytest.raises(Exception) as err:
        mf.build_prompt(rec, "cs")
    assert "\n" not in str(err.value) and "'cs'" in str(err.value)


def test_all_right_with_text_around_json(rec):
    out = "Sure! Here is my answer:\n" + answer_json(rec["answer"]) + "\nHope this helps."
    it = mf.score(rec, out)
    assert it.values == {"blank_correct": 9.0, "blank_total": 9.0, "question_correct": 1.0, "parse_failed": 0.0}
    assert it.metadata["hu_specific_dim"] == "history"


def test_fewer_blanks_than_asked_are_wrong(rec):
    it = mf.score(rec, answer_json(rec["answer"][:5]))
    assert it.values["blank_correct"] == 5 and it.values["blank_total"] == 9
    assert it.values["question_correct"] == 0
    assert it.metadata["blanks"] == [True] * 5 + [False] * 4
    assert it.metadata["n_returned"] == 5


def test_one_wrong_blank_fails_the_question(rec):
    ans = list(rec["answer"])
    ans[4] = "#4#Z"
    it = mf.score(rec, answer_json(ans))
    assert it.values["blank_correct"] == 8 and it.values["question_correct"] == 0


def test_no_json_counts_every_blank_wrong(rec):
    it = mf.score(rec, "#0#A, #1#F, #2#C")
    assert it.pred is None and it.values["parse_failed"] == 1
    assert it.values["blank_correct"] == 0 and it.values["blank_total"] == 9


def test_wrong_key_gives_empty_answer(rec):
    it = mf.score(rec, json.dumps({"answers": rec["answer"]}))
    assert it.pred == [] and it.values["blank_correct"] == 0 and it.values["parse_failed"] == 0


def test_braces_before_the_answer_and_think_traces(rec):
    out = "Options look like {A, B}. " + answer_json(rec["answer"])
    assert mf.score(rec, out).values["question_correct"] == 1
    # The reference's \{.*?\} stops at the first "}" and fails here.
    assert mf.score(rec, out, reference_regex=True).values["parse_failed"] == 1
    thought = "<think>maybe {\"answer\": [\"#0#B\"]}</think>" + answer_json(rec["answer"])
    assert mf.score(rec, thought).values["question_correct"] == 1


def test_reference_regex_matches_on_plain_answers(rec):
    out = "Answer:\n" + json.dumps({"answer": rec["answer"]}, indent=4)
    assert mf.score(rec, out, reference_regex=True).values["question_correct"] == 1


def test_summary_and_breakdown(records):
    lang = next(r for r in records if r["hu_specific_dim"] == "language")
    hist = next(r for r in records if r["hu_specific_dim"] == "history")
    items = [mf.score(lang, answer_json(lang["answer"])), mf.score(hist, answer_json(hist["answer"][:1]))]
    s = mf.summarize(items)
    nb = len(lang["answer"]) + len(hist["answer"])
    assert s["n_blanks"] == nb
    assert s["blank_accuracy"] == pytest.approx((len(lang["answer"]) + 1) / nb)
    assert s["question_accuracy"] == 0.5
    by = breakdown(items, "hu_specific_dim", mf.summarize)
    assert by["language"]["question_accuracy"] == 1.0 and by["history"]["question_accuracy"] == 0.0
