import pytest

from glotbench.benchmarks.openhueval.common import breakdown
from glotbench.benchmarks.openhueval import proverb_rea as pr
from glotbench.paths import resolve_data_file


@pytest.fixture(scope="module")
def records():
    if not resolve_data_file(pr.DATA_FILE).is_file():
        pytest.skip(f"OpenHuEval data not found ({pr.DATA_FILE} under the data root)")
    return pr.load()


@pytest.fixture(scope="module")
def rec(records):
    return next(r for r in records if r["source_info"]["proverb"] == "Aki á-t mond, mondjon bé-t is.")


def test_load_and_context(records, rec):
    assert len(records) == 1135
    multi = pr.join_context(rec["context"])
    assert multi == "\n".join(t.strip() for t in rec["context"] if t)
    single = next(r for r in records if len(r["context"]) == 1)
    assert pr.join_context(single["context"]) == single["context"][0]


def test_2cq_prompts_both_orders(rec):
    reqs = pr.build_2cq_prompts(rec)
    assert [r["order"] for r in reqs] == ["correct_first", "flipped"] and [r["gold"] for r in reqs] == ["1", "2"]
    cor, wrong = pr.correct_option(rec), pr.wrong_option(rec)
    assert f"Option 1: {cor}\nOption 2: {wrong}" in reqs[0]["prompt"]
    assert f"Option 1: {wrong}\nOption 2: {cor}" in reqs[1]["prompt"]
    assert "'Aki á-t mond, mondjon bé-t is.'" in reqs[0]["prompt"]
    hu = pr.build_2cq_prompts(rec, "hu")[0]["prompt"]
    assert f"1. lehetőség: {cor}" in hu and "{" + "context}" not in hu


@pytest.mark.parametrize("out,parsed", [
    ("1", "1"), ("Option 2", "2"), (" 2\n", "2"),
    ("1 or 2", ""), ("12", ""), ("I cannot decide", ""), ("", ""),
    ("<think>Option 1 vs option 2... the second fits.</think>2", "2"),
])
def test_parse_2cq_digit_rule(out, parsed):
    assert pr.parse_2cq(out) == parsed


@pytest.mark.parametrize("first,flipped,outcome", [
    ("1", "2", "correct"),
    ("1", "1", "incorrect"),         # position bias: right once only
    ("2", "1", "incorrect"),
    ("1", "1 or 2", "fail_parse"),  # both digits: parse failure wins over a wrong answer
    ("2", "", "fail_parse"),
])
def test_2cq_item_needs_both_orders(rec, first, flipped, outcome):
    it = pr.score_2cq(rec, {"correct_first": first, "flipped": flipped})
    assert it.metadata["outcome"] == outcome
    assert it.values["correct"] == (outcome == "correct")
    assert it.metadata["hu_specific_dim"] == "language"


def test_2cq_summary_and_missing_order(records, rec):
    items = [pr.score_2cq(r, {"correct_first": "1", "flipped": o}) for r, o in zip(records[:4], ["2", "2", "1", "x"])]
    s = pr.summarize_2cq(items)
    assert (s["accuracy"], s["incorrect_ratio"], s["fail_parse_ratio"], s["n_items"]) == (0.5, 0.25, 0.25, 4)
    assert breakdown(items, "hu_specific_dim", pr.summarize_2cq)["language"]["accuracy"] == 0.5
    with pytest.raises(Exception, match="flipped"):
        pr.score_2cq(rec, {"correct_first": "1"})


@pytest.mark.parametrize("lang,start", [("en", "You are a language expert"), ("hu", "Ön magyar nyelvi szakértő")])
def test_oe_prompt(rec, lang, start):
    p = pr.build_oe_prompt(rec, lang)
    assert p.startswith(start) and pr.join_context(rec["context"]) in p and "{" + "hu_text}" not in p


def test_oe_judge_messages(rec):
    msgs = pr.build_oe_judge_messages(rec, "<think>hmm</think>Ha elkezdted, csináld végig.")
    assert [m["role"] for m in msgs] == ["system", "user"]
    user = msgs[1]["content"]
    assert "[The start of Hungarian saying]\nAki á-t mond, mondjon bé-t is.\n" in user
    assert f"[The start of the first analysis]\n{pr.correct_option(rec)}\n" in user
    assert "[The start of the second analysis]\nHa elkezdted, csináld végig.\n" in user
    assert "<think>" not in user
    en = pr.build_oe_judge_messages(rec, "x", reference="en_expl")[1]["content"]
    assert rec["source_info"]["en_expl"] in en


@pytest.mark.parametrize("reply,verdict", [
    ("YES", "correct"), ("Yes.", "correct"), ("NO", "incorrect"),
    ("Yes, there is no difference", "unclear"), ("I am not sure", "incorrect"), ("", "unclear"),
])
def test_oe_verdict_substring_rule(reply, verdict):
    assert pr.parse_oe_verdict(reply) == verdict


def test_oe_summary(rec):
    items = [pr.score_oe(rec, v) for v in ("YES", "NO", "maybe", "YES")]
    s = pr.summarize_oe(items)
    assert (s["accuracy"], s["incorrect_ratio"], s["unclear_ratio"]) == (0.5, 0.25, 0.25)
