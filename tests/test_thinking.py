import json
from pathlib import Path

import pytest

from glotbench.benchmarks.openhueval import thinking as th
from glotbench.errors import DataError
from glotbench.paths import resolve_data_file

FIXTURE = Path(__file__).parent / "fixtures" / "thinking_responses.jsonl"


@pytest.fixture(scope="module")
def records():
    recs = [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert all(r["provenance"].startswith("hand-written") for r in recs)
    return recs


@pytest.fixture
def templates():
    if not resolve_data_file(th.ANALYSIS_DIR).is_dir():
        pytest.skip("OpenHuEval analysis templates not found under the data root")


def test_split_trace_forms():
    assert th.split_trace("<think>a b</think> answer") == ("a b", "answer")
    assert th.split_trace("reasoning here</think>final") == ("reasoning here", "final")  # R1: tag in prompt
    assert th.split_trace("<think>cut off by the limit") == ("cut off by the limit", "")
    assert th.split_trace("final", reasoning="separate trace") == ("separate trace", "final")
    assert th.split_trace("no trace") == ("", "no trace")


def test_approx_tokens_counts_cjk_characters():
    assert th.approx_token_count("这是 a test") == 4
    assert th.approx_token_count("Petőfi  Sándor\nKiskőrösön") == 3


def test_split_thoughts_only_at_sentence_starts():
    trace = "I think A. Wait, maybe B. We wait for nothing here.\nAlternatively C.\nHmm. D"
    assert th.split_thoughts(trace, ["Wait", "Alternatively", "Hmm"]) == [
        "I think A.", "Wait, maybe B. We wait for nothing here.", "Alternatively C.", "Hmm. D"]
    assert th.split_thoughts("Várjunk, ez más. Várj! Nem.", ["Várj", "Várjunk"]) == ["Várjunk, ez más.", "Várj! Nem."]
    assert th.split_thoughts("", ["Wait"]) == []


def test_markers_come_from_language_packs_or_fallback():
    assert th.reflection_markers("hu") and th.reflection_markers("en")
    assert th.reflection_markers("xx") == []


def test_analyze_fixture_exact_counts(records):
    rep = th.analyze(records, prompt_lang="hu", markers=th.FALLBACK_REFLECTION_MARKERS["hu"] + th.FALLBACK_REFLECTION_MARKERS["en"])
    c, i, n, a = rep["CORRECT"], rep["INCORRECT"], rep["NOT_ATTEMPTED"], rep["ALL"]
    # Traces: t1 54 words / 2 thoughts, t2 20 / 1, t3 52 / 3, t4 44 / 3, t5 40 / 3; t6 has none.
    assert (c["n_responses"], c["mean_tokens"], c["mean_thoughts"], c["n_segments"]) == (2, 37, 1.5, 3)
    assert (i["n_responses"], i["mean_tokens"], i["mean_thoughts"], i["n_segments"]) == (2, 48, 3, 6)
    assert (n["n_responses"], n["n_without_trace"], n["mean_tokens"], n["mean_thoughts"]) == (1, 1, 40, 3)
    assert (a["n_responses"], a["n_without_trace"], a["n_segments"]) == (5, 1, 12)
    # t1's first thought quotes the Hungarian question and translates it: the one ETI segment.
    assert (c["n_eti"], c["n_pivot_only"], c["n_prompt_only"], c["n_undetermined"]) == (1, 1, 1, 0)
    assert c["eti_share"] == pytest.approx(1 / 3)
    # t4's "Hmm. Maybe 1231." is too short to judge.
    assert (i["n_eti"], i["n_pivot_only"], i["n_undetermined"]) == (0, 5, 1)
    assert (n["n_prompt_only"], n["eti_share"]) == (3, 0.0)
    assert a["eti_share"] == pytest.approx(1 / 11) and a["undetermined_share"] == pytest.approx(1 / 12)


def test_analyze_options(records):
    rep = th.analyze(records, count_tokens=len, markers=[])
    assert rep["ALL"]["mean_thoughts"] == 1
    t2 = next(r for r in records if r["id"] == "t2")
    assert rep["CORRECT"]["mean_tokens"] != 37 and rep["CORRECT"]["mean_tokens"] > 100  # characters now
    assert "eti_share" not in th.analyze([t2], prompt_lang="en")["ALL"]
    seg = th.analyze([dict(t2, segments=["egy", "kettő"])], detect_language=False)["CORRECT"]
    assert seg["mean_thoughts"] == 2 and "n_eti" not in seg
    with pytest.raises(DataError, match="field 'outcome'"):
        th.analyze([{"id": "x", "outcome": "RIGHT", "response": "a"}])


def test_names_do_not_make_english_hungarian():
    assert th.classify_segment("No, his family moved to Szabadszállás later, but he was born in Kiskőrös.", "hu") == "pivot_only"
    assert th.classify_segment("Wait, Kiskőrös?", "hu") == "undetermined"


def test_fib_split_prompt_and_parse(templates):
    req = th.build_fib_split_request("<think>Okay, blank #0# is A.</think>")
    assert req.rstrip().endswith("[input thinking process content]\n<think>Okay, blank #0# is A.</think>\n[Your segmentation results]")
    reply = """{
    'segment':[
        {'text': "Okay, I need to fill the blanks.", 'categoty': "Introduction"},
        {'text': "Blank #0# is 'A' because...", 'categoty': "Reasoning"}
    ]
}"""
    assert th.parse_segments(reply) == [
        {"text": "Okay, I need to fill the blanks.", "category": "Introduction"},
        {"text": "Blank #0# is 'A' because...", "category": "Reasoning"}]
    # Broken JSON (a doubled comma, as in the template's own example) still yields the pairs.
    broken = '{"segment": [{"text": "a \\"b\\"",, "category": "Summary"}]}'
    assert th.parse_segments(broken) == [{"text": 'a "b"', "category": "Summary"}]


def test_classification_prompt(templates):
    req = th.build_fib_classification_request(["A.x"], ["#0#A"], ["#0#A"], [{"text": "t", "category": "Reasoning"}])
    assert '"std_ans": [\n    "#0#A"' in req and "{Raw_Seg}" not in req


def test_simpleqa_shift_pipeline(templates):
    trace = "Szerintem Budapest. De lehet, hogy Debrecen. However, the capital is Budapest. But I am sure."
    req = th.build_shift_expression_request("Hol van a Parlament?", trace)
    assert '"question": "Hol van a Parlament?"' in req and "<answer>" not in req
    lang, exprs = th.parse_shift_expressions('```json\n{"language": "Hungarian", "shift_expression": ["De", "However", "But"]}\n```')
    assert lang == "Hungarian" and exprs == ["De", "However", "But"]
    marked, offsets = th.mark_shift_candidates(trace, exprs)
    assert marked == ("Szerintem Budapest. <shift_word_1>De<shift_word_1> lehet, hogy Debrecen. "
                      "<shift_word_2>However<shift_word_2>, the capital is Budapest. <shift_word_3>But<shift_word_3> I am sure.")
    assert "<input_text>" not in th.build_confirm_shift_request(marked)
    ids = th.parse_confirmed_shift_ids('{"shift_word_ids": [2, "1"]}')
    assert ids == [1, 2]
    assert th.split_at_shifts(trace, offsets, ids) == [
        "Szerintem Budapest.", "De lehet, hogy Debrecen.", "However, the capital is Budapest. But I am sure."]
    req3 = th.build_thought_assessment_request("Hol van a Parlament?", "De lehet, hogy Debrecen.", "Budapest")
    assert "Correct Answer A = Budapest" in req3
    assert th.parse_thought_assessment('{"expalanation": "ok", "confident_score": "2"}') == 2
    assert th.parse_thought_assessment('"confident_score": 1 trailing') == 1
    assert th.parse_thought_assessment("none") is None


def test_unknown_template_is_one_line_error():
    with pytest.raises(DataError, match="unknown analysis template"):
        th.render_analysis_template("nope", {})
