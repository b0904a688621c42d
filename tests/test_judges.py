"""Grading prompts (from the data folder), judge-reply parsing, and judge agreement."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.console import Console

from glotbench.errors import DataError
from glotbench.tasks.judging.parse import parse_judge_output
from glotbench.tasks.judging.prompts import load_grader
from glotbench.judges.agreement import compare_judges, render_agreement_table
from glotbench.tasks.judging.parse import parse_abc, parse_evaluation_json
from glotbench.tasks.judging.prompts import GRADERS
from glotbench.paths import resolve_data_file
from glotbench.scoring.grades import CORRECT, INCORRECT, JUDGE_ERROR, NOT_ATTEMPTED

FIXTURE = Path(__file__).parent / "fixtures" / "hu_simpleqa_sample.jsonl"


def _need(name: str):
    path = resolve_data_file(GRADERS[name].file)
    if not path.is_file():
        pytest.skip(f"grading prompt file not found at {path} (shared data absent)")
    return load_grader(name)


# --- prompts ----------------------------------------------------------------------------------


def test_chinese_simpleqa_grader_renders_like_str_format():
    g = _need("chinese_simpleqa")
    raw = json.loads(g.path.read_text(encoding="utf-8"))["GRADER_TEMPLATE"]
    q, t, p = "伏兔穴所属的经脉是什么？", "足阳明胃经", '答案是{"x": 1} 足阳明胃经'
    msgs = g.render(q, t, p)
    assert [m["role"] for m in msgs] == ["system", "user"]
    assert msgs[0]["content"].startswith("你是一个智能助手")
    assert msgs[1]["content"] == raw.format(question=q, target=t, predicted_answer=p)
    assert "问题: 伏兔穴所属的经脉是什么？\n正确答案: 足阳明胃经\n预测答案: 答案是{\"x\": 1}" in msgs[1]["content"]
    assert g.parser == "abc" and len(g.version) == 12


def test_english_variant_has_no_system_turn():
    g = _need("chinese_simpleqa_en")
    msgs = g.render("Q?", "gold", "pred")
    assert [m["role"] for m in msgs] == ["user"]
    assert "Question: Q?\nGold target: gold\nPredicted answer: pred" in msgs[0]["content"]


def test_husimpleqa_grader_plain_substitution():
    g = _need("husimpleqa")
    rec = json.loads(FIXTURE.read_text(encoding="utf-8").splitlines()[5])
    pred = '{"answer": "Kölcsey Ferenc {answer}", "confidence_score": 95}'
    msgs = g.render(rec["question"], rec["answer"], pred)
    assert [m["role"] for m in msgs] == ["user"]
    text = msgs[0]["content"]
    assert text.startswith("\n- Role: Hungarian General Knowledge Quiz Review Expert")
    assert f'"question": {rec["question"]},\n    "gold_target": {rec["answer"]},' in text
    assert f'"predicted_answer": {pred}\n' in text  # "{answer}" inside the prediction left alone
    assert "{question}" not in text and "{prediction}" not in text
    # The template's own JSON braces survive.
    assert '"evaluation": "NOT_ATTEMPTED"' in text
    assert g.parser == "evaluation_json"


def test_missing_prompt_file_names_the_file(tmp_path, monkeypatch):
    from glotbench.tasks.judging import prompts

    monkeypatch.setenv("GLOTBENCH_DATA", str(tmp_path))
    monkeypatch.setattr(prompts, "benchmark_file", lambda rel: tmp_path / rel)
    with pytest.raises(DataError, match=r"HuSimpleQA_judge_prompt\.json: grading prompt file for 'husimpleqa' not found"):
        prompts.load_grader("husimpleqa")


def test_broken_prompt_file_is_a_clear_error(tmp_path, monkeypatch):
    from glotbench.tasks.judging import prompts

    f = tmp_path / "chinese_simpleqa" / "prompts" / "chinese_simpleqa_eval_grader.json"
    f.parent.mkdir(parents=True)
    f.write_text(json.dumps({"GRADER_TEMPLATE": "问题: {question} 答案: {answer}"}), encoding="utf-8")
    monkeypatch.setattr(prompts, "benchmark_file", lambda rel: tmp_path / rel)
    with pytest.raises(DataError, match=r"chinese_simpleqa_eval_grader\.json: template fields"):
        prompts.load_grader("chinese_simpleqa")
    f.write_text(json.dumps({"OTHER": "x"}), encoding="utf-8")
    prompts._load.cache_clear()
    with pytest.raises(DataError, match="missing key 'GRADER_TEMPLATE'"):
        prompts.load_grader("chinese_simpleqa")


def test_unknown_grader():
    with pytest.raises(DataError, match="unknown grader 'nope'"):
        load_grader("nope")


# --- parsing ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "reply, grade",
    [
        ("A", CORRECT),
        ("B", INCORRECT),
        (" C\n", NOT_ATTEMPTED),
        ("答案：B", INCORRECT),
        ("**A**", CORRECT),
        ("A:【正确】", CORRECT),
        ("<think>The answer says Budapest, which contradicts... maybe C? no</think>B", INCORRECT),
        ("【错误】", INCORRECT),
        ("不正确", INCORRECT),
        ("CORRECT", CORRECT),  # the reference regex would read the C of CORRECT
        ("NOT_ATTEMPTED", NOT_ATTEMPTED),
        ("INCORRECT", INCORRECT),
    ],
)
def test_parse_abc(reply, grade):
    v = parse_judge_output("abc", reply)
    assert v.grade == grade and v.raw == reply


@pytest.mark.parametrize("reply", ["", "I cannot grade this.", "正确还是错误？", "D"])
def test_parse_abc_failures_are_judge_errors_not_not_attempted(reply):
    v = parse_abc(reply)
    assert v.grade is JUDGE_ERROR and v.raw == reply and v.reason
    assert v.reference_letter in {"A", "B", "C"}  # what the reference would have said


def test_parse_abc_reference_letter():
    assert parse_abc("CORRECT").reference_letter == "C"
    assert parse_abc("nothing here").reference_letter == "C"


@pytest.mark.parametrize(
    "reply, grade",
    [
        ('{"evaluation": "CORRECT"}', CORRECT),
        ('```json\n{\n    "evaluation": "INCORRECT"\n}\n```', INCORRECT),
        ('{"evaluation": "not_attempted"}', NOT_ATTEMPTED),
        ('{"evaluation": ["NOT ATTEMPTED"]}', NOT_ATTEMPTED),
        ('Output:\n```\n{\n    "evaluation": "CORRECT"\n}\n```', CORRECT),
    ],
)
def test_parse_evaluation_json(reply, grade):
    assert parse_evaluation_json(reply).grade == grade


@pytest.mark.parametrize(
    "reply, why",
    [
        ("CORRECT", "no JSON object"),
        ('{"verdict": "CORRECT"}', "no 'evaluation' field"),
        ('{"evaluation": "PARTIAL"}', "unknown evaluation"),
        ('{"evaluation": ["CORRECT", "INCORRECT"]}', "not a string"),
    ],
)
def test_parse_evaluation_json_failures(reply, why):
    v = parse_evaluation_json(reply)
    assert v.grade is JUDGE_ERROR and why in v.reason and v.to_dict()["raw"] == reply


def test_unknown_parser():
    with pytest.raises(ValueError, match="unknown judge parser"):
        parse_judge_output("xml", "A")


# --- agreement --------------------------------------------------------------------------------


def _table():
    C, W, N, E = CORRECT, INCORRECT, NOT_ATTEMPTED, JUDGE_ERROR  # W: wrong
    return {
        "gpt-4o": {
            "m1": [C, C, C, W, N, C],
            "m2": [C, W, W, W, N, C],
            "m3": [W, W, W, N, N, C],
        },
        "qwen-7b": {
            "m1": [C, C, W, W, N, C],
            "m2": [C, W, W, W, C, E],
            "m3": [W, W, W, W, N, C],
        },
    }


def test_compare_judges_scores_ranks_tau_kappa():
    from scipy.stats import kendalltau
    from sklearn.metrics import cohen_kappa_score

    res = compare_judges(_table())
    assert res["rankings"]["gpt-4o"] == ["m1", "m2", "m3"]
    assert res["rankings"]["qwen-7b"] == ["m1", "m2", "m3"]
    assert res["scores"]["qwen-7b"]["m2"]["judge_error"] == 1
    fa = [res["scores"]["gpt-4o"][m]["F"] for m in ("m1", "m2", "m3")]
    fb = [res["scores"]["qwen-7b"][m]["F"] for m in ("m1", "m2", "m3")]
    (tau,) = res["kendall_tau"]
    assert tau["tau"] == pytest.approx(kendalltau(fa, fb).statistic) == pytest.approx(1.0)
    (kap,) = res["cohen_kappa"]
    assert kap["n_items"] == 17 and kap["n_excluded"] == 1
    a = [g for m in ("m1", "m2", "m3") for g in _table()["gpt-4o"][m]]
    b = [g for m in ("m1", "m2", "m3") for g in _table()["qwen-7b"][m]]
    keep = [(x, y) for x, y in zip(a, b) if JUDGE_ERROR not in (x, y)]
    assert kap["kappa"] == pytest.approx(cohen_kappa_score([x for x, _ in keep], [y for _, y in keep]))
    assert kap["agreement"] == pytest.approx(14 / 17)
    assert set(kap["per_model"]) == {"m1", "m2", "m3"}
    json.dumps(res)  # plain data, ready for results.json


def test_compare_judges_by_item_id_and_metric():
    table = {
        "j1": {"m1": {"q1": "CORRECT", "q2": "INCORRECT", "q3": "CORRECT"}, "m2": {"q1": "INCORRECT", "q2": "INCORRECT"}},
        "j2": {"m1": {"q2": "INCORRECT", "q1": "CORRECT"}, "m2": {"q2": "INCORRECT", "q1": "CORRECT"}},
    }
    res = compare_judges(table, metric="CO")
    assert res["scores"]["j1"]["m1"]["n"] == 2  # only ids both judges graded
    assert res["rankings"]["j1"] == ["m1", "m2"]
    assert res["rankings"]["j2"] == ["m1", "m2"]  # tie broken by name
    assert res["cohen_kappa"][0]["n_items"] == 4


def test_compare_judges_bad_input():
    with pytest.raises(DataError, match="at least two judges"):
        compare_judges({"j1": {"m": ["CORRECT"]}})
    with pytest.raises(DataError, match="different item counts"):
        compare_judges({"j1": {"m": ["CORRECT"]}, "j2": {"m": ["CORRECT", "CORRECT"]}})
    with pytest.raises(DataError, match="unknown metric"):
        compare_judges(_table(), metric="BLEU")


def test_render_agreement_table():
    console = Console(record=True, width=120)
    console.print(render_agreement_table(compare_judges(_table())))
    text = console.export_text()
    assert "Kendall τ" in text and "Cohen κ" in text and "gpt-4o" in text and "qwen-7b" in text
    assert "1.000" in text  # tau
    assert "(+1 err)" in text and "[1 err]" in text


def test_render_escapes_names_and_handles_undefined_tau():
    table = {
        "judge[a]": {"llama[8b]": ["CORRECT", "INCORRECT"], "m2": ["CORRECT", "INCORRECT"]},
        "judge[b]": {"llama[8b]": ["CORRECT", "INCORRECT"], "m2": ["CORRECT", "INCORRECT"]},
    }
    res = compare_judges(table)
    assert res["kendall_tau"][0]["tau"] is None  # all scores tied: tau undefined, not NaN
    console = Console(record=True, width=120)
    console.print(render_agreement_table(res))
    text = console.export_text()
    assert "llama[8b]" in text and "judge[a]" in text
