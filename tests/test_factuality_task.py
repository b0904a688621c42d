"""SimpleQA-style factuality tasks: prompts on real items, judge requests, grades (judge errors
stay judge errors), item scoring, the task-level summary (paper table, calibration, Best-of-N)
and a dataset that becomes a task through a YAML file alone (CSV)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from glotbench.sample_record import SampleRecord
import yaml

from glotbench.errors import DataError, TaskSpecError
from glotbench.models.base import GenRequest, GenResult
from glotbench.tasks.registry import resolve
from glotbench.tasks.request_settings import RequestSettings

FIXTURE = Path(__file__).parent / "fixtures" / "hu_simpleqa_sample.jsonl"
DEFS = Path(__file__).resolve().parents[1] / "src" / "glotbench" / "benchmarks" / "factuality" / "tasks"


def yaml_copy(tmp_path: Path, name: str, **changes) -> Path:
    """A copy of a built-in task YAML with top-level keys (or options.*) changed."""
    spec = yaml.safe_load((DEFS / f"{name}.yaml").read_text(encoding="utf-8"))
    for key, value in changes.items():
        if key.startswith("options__"):
            spec["options"][key.split("__", 1)[1]] = value
        else:
            spec[key] = value
    path = tmp_path / f"{name}.copy.yaml"
    path.write_text(yaml.safe_dump(spec, allow_unicode=True), encoding="utf-8")
    return path


def hu_task(tmp_path: Path, **changes):
    path = yaml_copy(tmp_path, "hu_simpleqa",
                     dataset={"format": "jsonl", "splits": {"test": str(FIXTURE)}, "eval_split": "test"}, **changes)
    return resolve([str(path)])[0]


def gen(text: str) -> GenResult:
    return GenResult(text=text)


# ------------------------------------------------------------------ prompts on real items
def test_chinese_simpleqa_prompt_is_the_bare_question_with_the_repo_system_message(data_root):
    task = resolve(["chinese_simpleqa"])[0]
    samples = task.samples(limit=3)
    s = samples[0]
    assert s.id == "97e7f58a3b154facaa3a5c64d678c7bf" and s.target == "足阳明胃经"
    assert s.metadata == {"primary_category": "中华文化", "secondary_category": "中医"}
    (req,) = task.requests(s, mode="generate", chat=True, settings=RequestSettings())
    assert req.messages == ({"role": "system", "content": "你是一个智能助手。"},
                            {"role": "user", "content": "伏兔穴所属的经脉是什么？"})
    reqs = task.requests(s, mode="generate", chat=True, settings=RequestSettings(samples=3, temperature=0.7))
    assert [r.sample_index for r in reqs] == [0, 1, 2] and all(r.temperature == 0.7 for r in reqs)


def test_chinese_confidence_prompt_is_the_papers_json_template(data_root):
    task = resolve(["chinese_simpleqa.confidence"])[0]
    s = task.samples(limit=1)[0]
    (req,) = task.requests(s, mode="generate", chat=True, settings=RequestSettings())
    (msg,) = req.messages
    assert msg["role"] == "user"
    text = msg["content"]
    assert text.startswith("请阅读以下问题：\n伏兔穴所属的经脉是什么？\n")
    # str.format turned the escaped braces into the literal JSON the model should reply with
    assert '{\n"answer": "你的答案",\n"confidence_score": 你的置信度\n}' in text and "{{" not in text


def test_hu_simpleqa_prompt_hu_by_default_en_on_request(data_root, tmp_path):
    task = hu_task(tmp_path)
    samples = task.samples()
    assert len(samples) == 10 and samples[0].id == "6e52b9bb-1673-53d2-b8ac-803e23c7dbf0"
    assert samples[0].metadata == {"hu_specific_dim": "language"}
    (hu,) = task.requests(samples[1], mode="generate", chat=True, settings=RequestSettings())
    assert hu.messages[-1]["content"].startswith("Kérdés: Melyik évben zajlott a mohácsi csata?\nKérjük, magyar nyelven")
    assert '"confidence_score": szám' in hu.messages[-1]["content"]
    (en,) = task.requests(samples[1], mode="generate", chat=True, settings=RequestSettings(prompt_lang="en"))
    assert en.messages[-1]["content"].startswith("Question: Melyik évben zajlott a mohácsi csata?\nPlease provide")
    with pytest.raises(DataError, match="no prompt variant 'cs'"):
        task.requests(samples[1], mode="generate", chat=True, settings=RequestSettings(prompt_lang="cs"))


def test_hu_simpleqa_without_its_data_file_is_a_clear_data_error(data_root):
    if (data_root / "openhueval" / "HuSimpleQA.jsonl").exists():
        pytest.skip("HuSimpleQA.jsonl is present in this data root")
    task = resolve(["hu_simpleqa"])[0]
    with pytest.raises(DataError) as err:
        task.samples()
    msg = str(err.value)
    assert "openhueval/HuSimpleQA.jsonl not found" in msg and "github.com/opendatalab/OpenHuEval" in msg
    assert "\n" not in msg


def test_bad_option_names_the_file_and_field(tmp_path):
    path = yaml_copy(tmp_path, "chinese_simpleqa", options__grader="gpt_grader")
    with pytest.raises(TaskSpecError, match=r"chinese_simpleqa.copy.yaml: field 'options.grader': unknown grader 'gpt_grader'"):
        resolve([str(path)])
    path = yaml_copy(tmp_path, "chinese_simpleqa", options__judge_see="raw")
    with pytest.raises(TaskSpecError, match=r"field 'options.judge_see': unknown field"):
        resolve([str(path)])


# ------------------------------------------------------------------ judging
def test_judge_requests_one_per_answer_with_the_benchmark_grader(data_root):
    task = resolve(["chinese_simpleqa"])[0]
    s = task.samples(limit=1)[0]
    outs = [gen("<think>足阳明…对吗</think>足阳明胃经"), gen("不知道"), gen("足阳明胃经")]
    reqs = task.judge_requests(s, outs)
    assert len(reqs) == 3 and all(isinstance(r, GenRequest) for r in reqs)
    system, user = reqs[0].messages
    assert system["role"] == "system" and system["content"].startswith("你是一个智能助手，请根据给定问题")
    assert "问题: 伏兔穴所属的经脉是什么？\n正确答案: 足阳明胃经\n预测答案: 足阳明胃经\n" in user["content"]
    assert "<think>" not in user["content"]  # the judge grades the answer, not the thinking trace
    assert "预测答案: 不知道" in reqs[1].messages[1]["content"]
    assert reqs[0].temperature == 0.0 and reqs[0].max_tokens == 512
    # the same answer twice is one judge call (same key), whichever sample it was
    assert reqs[0].key("j") == reqs[2].key("j") != reqs[1].key("j")


def test_judge_sees_answer_field_when_configured(data_root, tmp_path):
    task = hu_task(tmp_path, options__judge_sees="answer", options__judge_max_tokens=8)
    s = task.samples()[1]
    raw = '```json\n{"answer": "1526-ban", "confidence_score": 95}\n```'
    (req,) = task.judge_requests(s, [gen(raw)])
    (msg,) = req.messages  # OpenHuEval: system + user prompt as one user turn
    assert '"question": Melyik évben zajlott a mohácsi csata?' in msg["content"]
    assert '"gold_target": 1526' in msg["content"] and '"predicted_answer": 1526-ban' in msg["content"]
    assert req.max_tokens == 8
    (tmp_path / "default").mkdir()
    (req_raw,) = hu_task(tmp_path / "default").judge_requests(s, [gen(raw)])
    assert '"confidence_score": 95' in req_raw.messages[0]["content"]  # default: the raw reply, as the reference


@pytest.mark.parametrize("reply,strict,reference", [
    ("A", "CORRECT", "CORRECT"), ("B", "INCORRECT", "INCORRECT"), ("C", "NOT_ATTEMPTED", "NOT_ATTEMPTED"),
    ("答案：B", "INCORRECT", "INCORRECT"), ("CORRECT", "CORRECT", "NOT_ATTEMPTED"),
    ("I think the answer is right", "JUDGE_ERROR", "NOT_ATTEMPTED"), ("", "JUDGE_ERROR", "NOT_ATTEMPTED"),
])
def test_abc_judge_reply_to_grade(data_root, reply, strict, reference):
    task = resolve(["chinese_simpleqa"])[0]
    s = task.samples(limit=1)[0]
    v = task.parse_judgment(s, 0, reply)
    # headline: the reference rule (first A/B/C anywhere, "C" by default); the strict parse beside it
    assert v["grade"] == reference and v["reference_grade"] == reference and v["strict_grade"] == strict
    assert v["raw"] == reply and v["grader"] == "chinese_simpleqa"
    if strict == "JUDGE_ERROR":  # the strict parse never makes an unreadable reply NOT_ATTEMPTED
        assert v["strict_reason"]


def test_json_judge_reply_to_grade(data_root, tmp_path):
    task = hu_task(tmp_path, options__judge_rule="strict")
    s = task.samples()[0]
    assert task.parse_judgment(s, 0, '```json\n{"evaluation": ["INCORRECT"]}\n```')["grade"] == "INCORRECT"
    assert task.parse_judgment(s, 0, '{"evaluation": "NOT ATTEMPTED"}')["grade"] == "NOT_ATTEMPTED"
    assert task.parse_judgment(s, 0, '{"evaluation": "maybe"}')["grade"] == "JUDGE_ERROR"
    assert task.parse_judgment(s, 0, "CORRECT")["grade"] == "JUDGE_ERROR"


def test_score_judged_first_answer_is_the_item_grade(data_root, tmp_path):
    task = hu_task(tmp_path)
    s = task.samples()[1]
    outs = [gen('{"answer": "1526", "confidence_score": 90}'), gen('{"answer": "1541"}'), gen("nem tudom")]
    verdicts = [{"grade": "CORRECT"}, {"grade": "INCORRECT"}, {"grade": "JUDGE_ERROR"}]
    sc = task.score_judged(s, outs, verdicts)
    assert sc.pred == "CORRECT"
    assert sc.values == {"correct": 1.0, "incorrect": 0.0, "not_attempted": 0.0, "confidence": 90.0,
                         "strict_correct": 1.0, "strict_incorrect": 0.0, "strict_not_attempted": 0.0}
    assert sc.detail["grades"] == ["CORRECT", "INCORRECT", "JUDGE_ERROR"]
    assert sc.detail["confidence"] == [90.0, None, None]
    assert sc.detail["confidence_error"][1] == "no confidence_score field"
    assert sc.detail["confidence_error"][2] == "no JSON object in reply"
    err = task.score_judged(s, outs[2:], verdicts[2:])
    assert err.pred is None and err.values["correct"] is None and err.values["not_attempted"] is None


# ------------------------------------------------------------------ task summary
def _record(grades, cat, conf=None, conf_error=None):
    return {"status": "scored", "pred": None if grades[0] == "JUDGE_ERROR" else grades[0], "judge": "openai:judge@x",
            "metadata": {"hu_specific_dim": cat}, "detail": {"grades": grades, "confidence": [conf] * len(grades),
                                                            "confidence_error": [conf_error] * len(grades)}}


def test_extra_summary_table_calibration_and_best_of_n(data_root, tmp_path):
    task = hu_task(tmp_path)
    recs = ([_record(["CORRECT", "CORRECT", "INCORRECT"], "history", 90)] * 4
            + [_record(["INCORRECT", "CORRECT", "INCORRECT"], "history", 80)] * 2
            + [_record(["NOT_ATTEMPTED", "INCORRECT", "CORRECT"], "language", 10)] * 3
            + [_record(["JUDGE_ERROR", "CORRECT", "CORRECT"], "language", 50)]
            + [_record(["INCORRECT", "INCORRECT", "INCORRECT"], "language", None, "no confidence_score field")])
    out = tmp_path / "run"
    out.mkdir()
    s = task.extra_summary([SampleRecord.from_json(r) for r in recs], out)
    json.dumps(s, allow_nan=False)  # strict JSON
    o = s["factuality"]["overall"]
    assert o["counts"] == {"CORRECT": 4, "INCORRECT": 3, "NOT_ATTEMPTED": 3, "JUDGE_ERROR": 1}
    assert o["judge_error"] == 1 and o["n_gradeable"] == 10  # the judge error is not counted as NOT_ATTEMPTED
    assert math.isclose(o["CO"], 0.4) and math.isclose(o["NA"], 0.3) and math.isclose(o["CGA"], 4 / 7)
    assert math.isclose(o["F"], 8 / 17)
    lo, hi = o["ci"]["F"]
    assert lo <= o["F"] <= hi
    hist = s["factuality"]["by"]["hu_specific_dim"]["history"]
    assert hist["counts"]["CORRECT"] == 4 and math.isclose(hist["CGA"], 4 / 6)
    cal = s["calibration"]
    assert cal["n_used"] == 9 and cal["unparseable_confidence"] == 1 and cal["judge_error"] == 1
    assert cal["unparseable_reasons"] == {"no confidence_score field": 1}
    assert sum(r["count"] for r in cal["table"]) == 9 and len(cal["table"]) == 10
    # bins: 4 x (90, right) 2 x (80, wrong) 3 x (10, wrong) -> ECE = (4*.1 + 2*.8 + 3*.1)/9
    assert math.isclose(cal["ece"], (0.4 + 1.6 + 0.3) / 9)
    assert (out / cal["plot"]).stat().st_size > 5000
    bon = s["best_of_n"]
    assert bon["n"] == 3 and bon["method"] == "first_k"
    assert bon["accuracy_at_k"] == pytest.approx([4 / 11, 7 / 11, 10 / 11])  # judge errors count as not correct
    assert (out / bon["plot"]).read_bytes()[:4] == b"\x89PNG"


def test_extra_summary_without_confidence_or_samples(data_root):
    task = resolve(["chinese_simpleqa"])[0]
    recs = [{"status": "scored", "pred": g, "metadata": {"primary_category": c, "secondary_category": c + "x"},
             "detail": {"grades": [g]}} for g, c in [("CORRECT", "a"), ("INCORRECT", "a"), ("CORRECT", "b")]]
    s = task.extra_summary([SampleRecord.from_json(r) for r in recs], None)
    assert set(s) == {"factuality"}
    assert set(s["factuality"]["by"]) == {"primary_category", "secondary_category"}
    assert s["factuality"]["by"]["primary_category"]["b"]["CO"] == 1.0
    assert task.extra_summary([], None) == {}


# ------------------------------------------------------------------ a new dataset by YAML alone
CSV_YAML = """
name: my_trivia
version: "1.0"
language: en
dataset:
  format: csv
  splits: {test: %(csv)s}
fields:
  id: qid
  question: problem
  target: gold
  topic: topic
prompt:
  user: "{{ question }}"
metrics: [factuality_co, factuality_na, factuality_in, factuality_cga, factuality_f]
slice_by: [topic]
task_class: glotbench.benchmarks.factuality.task:SimpleQATask
options:
  grader: chinese_simpleqa_en
  judge_max_tokens: 8
"""


def write_csv_task(tmp_path: Path) -> Path:
    csv = tmp_path / "trivia.csv"
    csv.write_text("qid,problem,gold,topic\nq1,What is the capital of Hungary?,Budapest,geo\n"
                   "q2,Who wrote Hamlet?,Shakespeare,lit\nq3,What is 2+2?,4,math\n", encoding="utf-8")
    path = tmp_path / "my_trivia.yaml"
    path.write_text(CSV_YAML % {"csv": csv}, encoding="utf-8")
    return path


def test_csv_dataset_becomes_a_judged_task_with_yaml_only(data_root, tmp_path):
    task = resolve([str(write_csv_task(tmp_path))])[0]
    assert task.needs_judge
    samples = task.samples()
    assert [s.id for s in samples] == ["q1", "q2", "q3"] and samples[1].metadata == {"topic": "lit"}
    (req,) = task.requests(samples[0], mode="generate", chat=True, settings=RequestSettings())
    assert req.messages == ({"role": "user", "content": "What is the capital of Hungary?"},)
    (jr,) = task.judge_requests(samples[0], [gen("It is Budapest.")])
    assert len(jr.messages) == 1 and jr.max_tokens == 8
    assert "Question: What is the capital of Hungary?" in jr.messages[0]["content"]
    assert "Gold target: Budapest\nPredicted answer: It is Budapest." in jr.messages[0]["content"]
    assert task.parse_judgment(samples[0], 0, "A")["grade"] == "CORRECT"


def test_csv_yaml_task_runs_end_to_end_with_a_judge(data_root, tmp_path, stub_server):
    """The CSV task through `glotbench run` (model and judge: the OpenAI-compatible stub)."""
    import os
    import subprocess
    import sys

    responses = tmp_path / "canned.jsonl"
    lines = [  # judge replies, chosen by the predicted answer inside the grading prompt
        {"match": "Predicted answer: Budapest", "response": "A"},
        {"match": "Predicted answer: Marlowe", "response": "B"},
        {"match": "Predicted answer: no idea", "response": "I cannot grade this"},
        # model replies, chosen by the question
        {"match": "capital of Hungary", "response": "Budapest"},
        {"match": "Hamlet", "response": "Marlowe"},
        {"match": "2+2", "response": "no idea"},
    ]
    responses.write_text("\n".join(json.dumps(x) for x in lines), encoding="utf-8")
    base = stub_server("--responses", str(responses))
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "glotbench", "run", "--model", "openai:stub", "--base-url", base, "--judge", "openai:judge",
           "--judge-base-url", base, "--tasks", str(write_csv_task(tmp_path)), "--output", str(out), "--no-progress"]
    done = subprocess.run(cmd, env={**os.environ, "OPENAI_API_KEY": "x"}, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    t = json.loads((out / "results.json").read_text())["tasks"]["my_trivia"]
    f = t["factuality"]["overall"]
    # The headline follows the reference rule: no A/B/C in "I cannot grade this" -> "C" (NOT_ATTEMPTED),
    # every item in the denominator; the strict parse (judge error apart) is reported beside it.
    assert f["counts"] == {"CORRECT": 1, "INCORRECT": 1, "NOT_ATTEMPTED": 1, "JUDGE_ERROR": 0}
    assert t["metrics"]["factuality_co"]["value"] == pytest.approx(1 / 3, abs=1e-6) and t["n_unparseable"] == 0
    assert t["metrics"]["factuality_co_strict"]["value"] == 0.5
    assert set(t["factuality"]["by"]["topic"]) == {"geo", "lit", "math"}
