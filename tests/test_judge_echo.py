"""A judge that echoes the label list (or the prompt) instead of grading gives JUDGE_ERROR, never a
grade: parse_abc("A:\\nB:\\nC:\\n```") read "A" (CORRECT), so a small judge echoing its prompt
scored gibberish answers CO 100%. Every judge-reply parser in the package is checked with its
own prompt's echo, and a run (and `glotbench judge`) with an echoing judge is checked end to end."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from glotbench.tasks.judging.parse import parse_abc, parse_evaluation_json
from glotbench.tasks.judging.prompts import GRADERS, load_grader
from glotbench.benchmarks.openhueval import proverb_rea, wildbench
from glotbench.paths import resolve_data_file
from glotbench.scoring.grades import CORRECT, INCORRECT, JUDGE_ERROR

ABC_ECHOES = [
    "A:\nB:\nC:\n```",
    "A:【正确】\nB:【错误】\nC:【未尝试】",
    "A: CORRECT\nB: INCORRECT\nC: NOT_ATTEMPTED",
    "只返回字母\"A\"、\"B\"或\"C\"",
    "A, B or C",
]


@pytest.mark.parametrize("reply", ABC_ECHOES)
def test_abc_label_echo_is_a_judge_error(reply):
    v = parse_abc(reply)
    assert v.grade is JUDGE_ERROR and "several labels" in v.reason
    assert v.reference_letter == "A"  # what the reference regex reads: the echo would count as CORRECT there


@pytest.mark.parametrize("reply, grade", [("A", CORRECT), ("B:【错误】", INCORRECT), ("答案：A", CORRECT),
                                          ("A\n\n预测答案与标准答案一致。", CORRECT)])
def test_abc_single_label_still_reads(reply, grade):
    assert parse_abc(reply).grade is grade


def _grader_or_skip(name: str):
    path = resolve_data_file(GRADERS[name].file)
    if not path.is_file():
        pytest.skip(f"grading prompt file not found at {path} (shared data absent)")
    return load_grader(name)


@pytest.mark.parametrize("name", ["chinese_simpleqa", "chinese_simpleqa_en"])
def test_abc_echo_of_the_whole_grading_prompt_is_a_judge_error(name):
    g = _grader_or_skip(name)
    prompt = g.render("问题？", "答案", "xq zzv")[-1]["content"]
    assert parse_abc(prompt).grade is JUDGE_ERROR
    # the tail a small model tends to repeat: the label list and the instruction under it
    assert parse_abc(prompt[-120:]).grade is JUDGE_ERROR


def test_husimpleqa_echo_of_prompt_is_a_judge_error():
    g = _grader_or_skip("husimpleqa")
    prompt = g.render("Kérdés?", "válasz", "xq zzv")[-1]["content"]
    v = parse_evaluation_json(prompt)  # its worked examples hold CORRECT and INCORRECT evaluations
    assert v.grade is JUDGE_ERROR
    scaffold = '```\n{\n    "evaluation": ["CORRECT"/"INCORRECT"/"NOT_ATTEMPTED" ]\n}\n```'
    assert parse_evaluation_json(scaffold).grade is JUDGE_ERROR
    two = 'Output: {"evaluation": "CORRECT"}\nExample5 Output: {"evaluation": "INCORRECT"}'
    assert parse_evaluation_json(two).grade is JUDGE_ERROR and "several evaluations" in parse_evaluation_json(two).reason
    assert parse_evaluation_json('{"evaluation": "CORRECT"}').grade is CORRECT


def test_wildbench_checklist_judge_echo_has_no_score():
    """The checklist judge's output-format block, echoed: "score": "[1~10]" is no score (strict,
    as the reference, and lenient: the lenient reader must not take the 1 of the range)."""
    echo = ('{\n    "strengths": "[analysis for the strengths of the response]",\n'
            '    "weaknesses": "[analysis for the weaknesses of the response]",\n    "score": "[1~10]"\n}')
    assert wildbench.parse_judgement(echo)["score"] is None
    assert wildbench.parse_judgement(echo, lenient=True)["score"] is None
    assert wildbench.parse_judgement('{"score": 8}', lenient=True)["score"] == 8.0
    assert wildbench.parse_judgement('"score": "7"')["score"] == 7.0


def test_proverb_oe_judge_echo_is_unclear():
    """The OE judge's system prompt names both YES and NO: an echo is UNCLEAR, not a verdict."""
    echo = "If they reflect the same understanding you should answer YES. Otherwise answer NO."
    assert proverb_rea.parse_oe_verdict(echo) == proverb_rea.UNCLEAR
    assert proverb_rea.parse_oe_verdict("YES") == proverb_rea.CORRECT


def _glotbench(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "glotbench", *args], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "COLUMNS": "200"})


def test_echoing_judge_does_not_score_gibberish_as_correct(stub_server, data_root, tmp_path):
    """Gibberish answers, a judge that echoes the label list: CO is 0 with 4 judge errors (main: CO 100%)."""
    if not (data_root / "chinese_simpleqa" / "chinese_simpleqa.jsonl").is_file():
        pytest.skip("Chinese SimpleQA data not found under the data root")
    canned = tmp_path / "canned.jsonl"
    canned.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in [
        {"match": "将此新问题的预测答案评定为", "response": "A:\nB:\nC:\n```"},  # the judge echoes its labels
        {"match": "", "response": "xq zzv blorp 7"},  # the model answers gibberish
    ]), encoding="utf-8")
    base = stub_server("--responses", str(canned))
    out = tmp_path / "run"
    done = _glotbench("run", "--model", "openai:gibberish", "--base-url", base, "--judge", "openai:echo",
                      "--judge-base-url", base, "--tasks", "chinese_simpleqa", "--limit", "4", "-o", str(out),
                      "--no-progress")
    assert done.returncode == 0, done.stderr
    # The headline follows the benchmark's reply rule except for a label echo, which the reference
    # would read as "A" (CORRECT): a judge error in the headline and in glotbench's strict parse alike.
    task = json.loads((out / "results.json").read_text())["tasks"]["chinese_simpleqa"]
    metrics = task["metrics"]
    assert metrics["factuality_co"]["value"] is None and metrics["factuality_f"]["value"] is None
    assert metrics["factuality_co_strict"]["value"] is None and metrics["factuality_f_strict"]["value"] is None
    assert task["n_unparseable"] == 4
    samples = [json.loads(x) for x in (out / "samples.jsonl").read_text().splitlines()]
    assert all(s["detail"]["strict_grades"] == ["JUDGE_ERROR"] for s in samples)

    again = _glotbench("judge", "rerun", str(out), "--judge", "openai:echo2", "--judge-base-url", base, "--no-progress")
    assert again.returncode == 0, again.stderr
    res = json.loads((out / "results.json").read_text())
    [entry] = [v for k, v in res["judges"].items() if k.startswith("openai:echo2@")]  # the id carries the URL
    assert entry["tasks"]["chinese_simpleqa"]["metrics"]["factuality_co_strict"]["value"] is None
