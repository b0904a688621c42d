"""Each headline number follows the benchmark's reference code: ours is diffed against a plain
re-statement of the reference rule on the same outputs (the audit's cases: HuStandardFIB B acc.
106.60, the FIB JSON reading on all 278 HuMatchingFIB items, both judge-reply parsers), and
glotbench's variant is reported beside it under its own name."""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest

from glotbench.engine.aggregate import summarise_task
from glotbench.models.base import GenResult
from glotbench.paths import resolve_data_file
from glotbench.tasks.registry import resolve


from test_factuality_task import hu_task


def need(rel: str) -> None:
    if not resolve_data_file(rel).is_file():
        pytest.skip(f"benchmark data not found ({rel} under the data root)")


def summary(t, records):
    return summarise_task(records, t.metric_names("generate"), t.spec.slice_by, len(records), n_boot=20)


def scored_records(t, samples, outputs):
    recs = []
    for s, text in zip(samples, outputs):
        sc = t.score(s, [GenResult(text=text)], mode="generate")
        recs.append({"status": "scored", "gold": s.target, "pred": sc.pred, "values": sc.values,
                     "metadata": s.metadata, "detail": sc.detail})
    return recs


# ---------------------------------------------------------------- plain re-statements of the reference

def ref_json(pred: str) -> dict:
    """OpenCompass FIB evaluators: first {...} (non-greedy), strict json.loads, {} on failure."""
    match = re.search(r"\{.*?\}", pred.strip(), re.DOTALL)
    if not match:
        return {}
    try:
        return json.loads(match.group(0).strip().replace("\\xa0", ""))
    except json.JSONDecodeError:
        return {}


def ref_matching_fib(preds, golds):
    blank_correct = blank_total = question_correct = 0
    for pred, gold in zip(preds, golds):
        model_ans = ref_json(pred).get("answer", [])
        ok = True
        for idx, ans in enumerate(gold):
            blank_total += 1
            if idx < len(model_ans) and model_ans[idx] == ans:
                blank_correct += 1
            else:
                ok = False
        question_correct += ok
    return blank_correct / blank_total, question_correct / len(golds)


def fuzz_ratio(a: str, b: str) -> int:
    from rapidfuzz import fuzz

    return round(fuzz.ratio(a, b))


def ref_standard_fib_scores(preds, golds):
    """HuStandardFIBEvaluator.score: blank_correct += 1 per gold VARIANT that passes, over blanks."""
    blank_correct = blank_total = question_correct = 0
    for pred, gold in zip(preds, golds):
        std_ans = [re.sub(r"#\d+#", "", a).split(";") for a in gold]
        model_ans = [re.sub(r"#\d+#", "", a).split(";") for a in ref_json(pred).get("answers", [])]
        ok = True
        for idx, ans_list in enumerate(std_ans):
            blank_total += 1
            if idx >= len(model_ans):
                ok = False
                continue
            for ans in ans_list:
                best = max(model_ans[idx], key=lambda m: fuzz_ratio(ans, m))
                if fuzz_ratio(ans, best) > 70:
                    blank_correct += 1
                else:
                    ok = False
        question_correct += ok
    return blank_correct / blank_total, question_correct / len(golds)


# ---------------------------------------------------------------- FIB

def test_matching_fib_json_reading_on_all_278_items():
    need("openhueval/HuMatchingFIB.jsonl")
    t = resolve(["openhueval.hu_matchingfib"])[0]
    samples = t.samples()
    assert len(samples) == 278 and t.reference_regex  # the reference reader is the default
    golds = [s.target for s in samples]
    # Python-style answers (single quotes, trailing comma): the reference reads nothing.
    pythonic = ["Válasz: {'answer': [" + ", ".join(f"'{a}'" for a in g) + ",]}" for g in golds]
    # Well-formed but with a brace in the prose before the object: the reference's \{.*?\} fails too.
    braces = ["Lásd {a szöveget}: " + json.dumps({"answer": g}) for g in golds]
    plain = [json.dumps({"answer": g[:-1] + ["#x#Z"]}) for g in golds]  # last blank wrong
    for outputs, expect_ref, expect_repaired in ((pythonic, 0.0, 1.0), (braces, 0.0, 1.0), (plain, None, None)):
        summ = summary(t, scored_records(t, samples, outputs))["metrics"]
        ref_b, ref_q = ref_matching_fib(outputs, golds)
        assert summ["blank_accuracy"]["value"] == pytest.approx(ref_b, abs=1e-6)
        assert summ["question_accuracy"]["value"] == pytest.approx(ref_q, abs=1e-6)
        if expect_ref is not None:
            assert ref_b == expect_ref
            assert summ["blank_accuracy_repaired"]["value"] == expect_repaired
            assert summ["question_accuracy_repaired"]["value"] == expect_repaired
    assert ref_q == 0.0 and summ["blank_accuracy_repaired"]["value"] == pytest.approx(ref_b, abs=1e-6)


def test_standard_fib_b_acc_is_the_reference_per_variant_count():
    need("openhueval/HuStandardFIB.jsonl")
    t = resolve(["openhueval.hu_standardfib"])[0]
    samples = t.samples()
    golds = [s.target for s in samples]
    assert t.spec.metrics[0] == "blank_accuracy_reference"  # the headline B acc.
    # The audit's case: every blank answered with its FIRST accepted variant only. The reference
    # counts each gold variant that passes (106.60, over 100%); glotbench's per-blank "every variant"
    # rule gives 95.60; an "any variant" rule would give 100.00.
    first = [json.dumps({"answers": [re.sub(r"#\d+#", "", a).split(";")[0] for a in g]}, ensure_ascii=False)
             for g in golds]
    summ = summary(t, scored_records(t, samples, first))["metrics"]
    ref_b, ref_q = ref_standard_fib_scores(first, golds)
    assert summ["blank_accuracy_reference"]["value"] == pytest.approx(ref_b, abs=1e-6)
    assert round(100 * ref_b, 2) == 106.60 and round(100 * summ["blank_accuracy"]["value"], 2) == 95.60
    assert summ["question_accuracy"]["value"] == pytest.approx(ref_q, abs=1e-6)
    # All variants given: the reference counts every one of them (118.71), per blank 100.
    every = [json.dumps({"answers": list(g)}, ensure_ascii=False) for g in golds]
    summ = summary(t, scored_records(t, samples, every))["metrics"]
    ref_b, ref_q = ref_standard_fib_scores(every, golds)
    assert summ["blank_accuracy_reference"]["value"] == pytest.approx(ref_b, abs=1e-6) and ref_b > 1.18
    assert summ["blank_accuracy"]["value"] == 1.0 and summ["question_accuracy"]["value"] == pytest.approx(ref_q)


def test_table5_shows_the_reference_b_acc_and_the_variant_row():
    from glotbench.benchmarks.openhueval import table5

    def entry(metrics):
        return {"metrics": {k: {"value": v, "ci95": [v, v]} for k, v in metrics.items()}, "slices": {}}

    results = {"model": {"model_id": "m"}, "tasks": {
        "openhueval.hu_standardfib": entry({"blank_accuracy_reference": 1.066, "blank_accuracy": 0.956,
                                            "question_accuracy": 0.5, "question_accuracy_repaired": 0.6}),
        "openhueval.hu_matchingfib": entry({"blank_accuracy": 0.0, "question_accuracy": 0.0,
                                            "blank_accuracy_repaired": 1.0, "question_accuracy_repaired": 1.0})}}
    labels, rows = table5.table5_rows(results)
    cols = [f"{c.group} {c.label}" for c in table5.COLUMNS]
    assert labels[:2] == ["m", table5.VARIANT_LABEL]
    head, variant = dict(zip(cols, rows[0])), dict(zip(cols, rows[1]))
    assert head["HuStandardFIB B acc."].startswith("106.60") and variant["HuStandardFIB B acc."] == "95.60"
    assert head["HuMatchingFIB B acc."].startswith("0.00") and variant["HuMatchingFIB B acc."] == "100.00"


# ---------------------------------------------------------------- judge replies

JUDGE_REPLIES = [
    "A", "B", "C", "答案：A", "CORRECT", "INCORRECT", "The answer is B.", "我认为是正确的", "",
    "<think>Could be A or B</think>B", "A:\nB:\nC:", "not attempted", "结论：错误", "b",
]


def ref_abc(reply: str) -> str:
    m = re.search(r"(A|B|C)", reply)
    return m.group(0) if m else "C"


def test_chinese_simpleqa_reference_rule_every_item_counted(data_root):
    t = resolve(["chinese_simpleqa"])[0]
    s = t.samples(limit=1)[0]
    recs = []
    for reply in JUDGE_REPLIES:
        v = t.parse_judgment(s, 0, reply)
        sc = t.score_judged(s, [GenResult(text="x")], [v])
        recs.append({"status": "scored", "gold": s.target, "pred": sc.pred, "values": sc.values,
                     "metadata": s.metadata, "detail": sc.detail})
    # the reference rule, except the one documented deviation: a reply echoing the label list
    # ("A:\nB:\nC:") chose nothing and is a judge error (out of the denominator), never CORRECT
    echoes = {"A:\nB:\nC:"}
    counted = [r for r in JUDGE_REPLIES if r not in echoes]
    letters = Counter(ref_abc(r) for r in counted)
    n = len(counted)
    summ = summary(t, recs)["metrics"]
    assert summ["factuality_co"]["value"] == pytest.approx(letters["A"] / n, abs=1e-6)
    assert summ["factuality_na"]["value"] == pytest.approx(letters["C"] / n, abs=1e-6)
    assert summ["factuality_in"]["value"] == pytest.approx(letters["B"] / n, abs=1e-6)
    # no judge error under the reference rule but the label echo
    assert [reply for reply, r in zip(JUDGE_REPLIES, recs) if r["pred"] is None] == sorted(echoes)
    # glotbench's strict parse beside it: "CORRECT" is CORRECT (not the C of it), unreadable replies apart.
    strict = [r["detail"]["strict_grades"][0] for r in recs]
    assert strict[4] == "CORRECT" and recs[4]["pred"] == "NOT_ATTEMPTED"
    assert "JUDGE_ERROR" in strict
    kept = [g for g in strict if g != "JUDGE_ERROR"]
    assert summ["factuality_co_strict"]["value"] == pytest.approx(kept.count("CORRECT") / len(kept), abs=1e-6)


HU_REPLIES = [
    '{"evaluation": "CORRECT"}', '{"evaluation": "INCORRECT"}', '{"evaluation": "NOT_ATTEMPTED"}',
    '```json\n{"evaluation": "correct", "reason": "ok"}\n```', '{"evaluation":"CORRECT"}',
    "CORRECT", '{"evaluation": ["CORRECT"]}', 'The grade: {"evaluation": "Correct"} done',
    '{"evaluation": "NOT ATTEMPTED"}', '{"reason": "x", "evaluation": "INCORRECT"}',
]


def ref_husimpleqa(replies):
    """post_process_husimpleqa + get_judgeanswer_and_reference (None dropped) + get_capability_results."""
    judged = []
    for r in replies:
        found = re.findall(r"\"evaluation\": \"(.*?)\"", r)
        if found:
            judged.append(found[0].lower())
    c = Counter(judged)
    return {k: c[k] / len(judged) for k in ("correct", "incorrect", "not_attempted")}, len(judged)


def test_husimpleqa_reference_regex(tmp_path, data_root):
    t = hu_task(tmp_path)
    s = t.samples(limit=1)[0]
    recs = []
    for reply in HU_REPLIES:
        v = t.parse_judgment(s, 0, reply)
        sc = t.score_judged(s, [GenResult(text='{"answer": "x", "confidence_score": 50}')], [v])
        recs.append({"status": "scored", "gold": s.target, "pred": sc.pred, "values": sc.values,
                     "metadata": s.metadata, "detail": sc.detail})
    ref, kept = ref_husimpleqa(HU_REPLIES)
    summ = summary(t, recs)["metrics"]
    assert sum(r["pred"] is not None for r in recs) == kept  # the same items in the denominator
    assert summ["factuality_co"]["value"] == pytest.approx(ref["correct"], abs=1e-6)
    assert summ["factuality_na"]["value"] == pytest.approx(ref["not_attempted"], abs=1e-6)
    # "NOT ATTEMPTED" (a space) is an unknown label there: counted, not correct, not NA.
    assert recs[8]["pred"] == "INCORRECT"
    strict = [r["detail"]["strict_grades"][0] for r in recs]
    assert strict[8] == "NOT_ATTEMPTED" and strict[6] == "CORRECT" and strict[4] == "CORRECT"
    # the strict twins, by value: SimpleQA's rates over the replies the strict parse read
    kept = [g for g in strict if g != "JUDGE_ERROR"]
    c, i, n = (kept.count(g) for g in ("CORRECT", "INCORRECT", "NOT_ATTEMPTED"))
    assert summ["factuality_co_strict"]["value"] == pytest.approx(c / len(kept), abs=1e-6)
    assert summ["factuality_na_strict"]["value"] == pytest.approx(n / len(kept), abs=1e-6)
    assert summ["factuality_cga_strict"]["value"] == pytest.approx(c / (c + i), abs=1e-6)


def test_judge_rule_strict_option_makes_the_strict_parse_the_headline(tmp_path, data_root):
    t = hu_task(tmp_path, options__judge_rule="strict")
    s = t.samples(limit=1)[0]
    v = t.parse_judgment(s, 0, '{"evaluation": "NOT ATTEMPTED"}')
    assert v["grade"] == "NOT_ATTEMPTED" and v["reference_grade"] == "INCORRECT"
