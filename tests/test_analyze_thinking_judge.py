"""`glotbench analyze thinking RUN --judge J` (OpenHuEval §4 / App. F) on a run of real
HuMatchingFIB items answered with the recorded traces of tests/fixtures/thinking_responses.jsonl.

The judge is a second stub server answering the benchmark's analysis prompts with canned replies:
the segmentation prompt splits every trace into Introduction / Reasoning x2 / Summary, the
four-dimension prompt tags the first Reasoning segment as a language transfer and the second not,
and the thought assessment gives the first Reasoning segment 2/2 and the second 0/2. So every table
has a known value: 50% translation share, 50% correct thoughts, and every INCORRECT response holds a
correct thought (Fig. 6 share 100%). The command runs in a fresh subprocess."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from glotbench.paths import resolve_data_file

from test_analyze_thinking_cli import FIXTURE, TASK, canned_responses

R1 = "Reasoning one: #0# is A, this translates to 'divine'."
R2 = "Reasoning two: maybe #1# is B."
SPLIT = {"segments": [{"text": "Introduction: the task.", "category": "Introduction"},
                      {"text": R1, "category": "Reasoning"}, {"text": R2, "category": "Reasoning"},
                      {"text": "Summary: done.", "category": "Summary"}]}
TAGS = {"segments": [
    {"text": R1, "category": "Reasoning", "Dimension1": "Completely Correct", "Dimension2": "Complex Thought",
     "Dimension3": "Only Current Blank", "Dimension4": "Contains Language Transfer"},
    {"text": R2, "category": "Reasoning", "Dimension1": "Completely Incorrect", "Dimension2": "Simple Assertion",
     "Dimension3": "Modify Previous Blanks", "Dimension4": "No Language Transfer"}]}
JUDGE = [
    {"match": "perform multidimensional classification", "response": json.dumps(TAGS)},
    {"match": "semantic paragraph segmentation expert", "response": json.dumps(SPLIT)},
    {"match": "Solution Draft S = Reasoning one", "response": '{"expalanation": "leads there", "confident_score": "2"}'},
    {"match": "Solution Draft S = Reasoning two", "response": '{"expalanation": "no", "confident_score": "0"}'},
]


def test_analyze_thinking_with_a_judge_prints_every_table(stub_server, tmp_path):
    if not resolve_data_file("openhueval/HuMatchingFIB.jsonl").is_file():
        pytest.skip("OpenHuEval data not found (openhueval/HuMatchingFIB.jsonl under the data root)")
    if not resolve_data_file("openhueval/prompts/analysis_templates").is_dir():
        pytest.skip("OpenHuEval analysis templates not found under the data root")
    records = [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines() if line.strip()]
    canned = tmp_path / "canned.jsonl"
    canned.write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in canned_responses(records)), encoding="utf-8")
    judge_file = tmp_path / "judge.jsonl"
    judge_file.write_text("".join(json.dumps(c) + "\n" for c in JUDGE), encoding="utf-8")
    base = stub_server("--responses", str(canned))
    judge_base = stub_server("--responses", str(judge_file))
    env = {**os.environ, "OPENAI_API_KEY": "x"}
    run_dir = tmp_path / "run"
    done = subprocess.run([sys.executable, "-m", "glotbench", "run", "--model", "openai:stub", "--base-url", base,
                           "--tasks", TASK, "--limit", str(len(records)), "-o", str(run_dir), "--no-progress"],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    cmd = [sys.executable, "-m", "glotbench", "analyze", "thinking", str(run_dir), "--judge", "openai:judge",
           "--judge-base-url", judge_base]
    done = subprocess.run(cmd, env={**env, "COLUMNS": "200"}, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    text = done.stdout
    print(text)
    for word in ("Fig. 6", "F.2.1", "F.2.2", "translation share = 50.0%", "Introduction", "Reasoning", "Summary",
                 "Contains Language Transfer", "Modify Previous Blanks", "approximate"):
        assert word in text, word
    rep = json.loads((run_dir / "thinking.json").read_text(encoding="utf-8"))["tasks"][TASK]["judge_analysis"]
    with_trace = {o: sum(1 for r in records if r["outcome"] == o and ("</think>" in r["response"] or r.get("reasoning")))
                  for o in ("CORRECT", "INCORRECT", "NOT_ATTEMPTED")}
    n = sum(with_trace.values())
    a = rep["ALL"]
    assert a["n_judged"] == n and a["segment_categories"] == {"Introduction": n, "Reasoning": 2 * n, "Summary": n}
    assert a["n_reasoning_tagged"] == 2 * n and a["translation_share"] == 0.5
    assert a["n_thoughts_assessed"] == 2 * n and a["correct_thought_share"] == 0.5
    assert rep["INCORRECT"]["n_judged"] == with_trace["INCORRECT"] > 0
    assert rep["fig6"]["incorrect_with_correct_thought"] == 1.0
    # Fig. 6 per response: every INCORRECT response has one of its two thoughts correct (ratio 0.5)
    dist = rep["fig6"]["distribution"]["INCORRECT"]
    assert [(b["lo"], b["hi"]) for b in dist if b["n"]] == [(0.4, 0.5)]
    assert sum(b["n"] for b in dist) == with_trace["INCORRECT"] and max(b["share"] for b in dist) == 1.0
    # Fig. 9: per response one Complex Thought that is Completely Correct, one Simple Assertion that is not
    fig9 = a["fig9"]
    assert fig9["n_segments"] == 2 * n and "Fig. 9" in text
    assert fig9["counts"]["Complex Thought"]["Completely Correct"] == n
    assert fig9["counts"]["Simple Assertion"]["Completely Incorrect"] == n
    assert fig9["share"]["Simple Assertion"]["Completely Incorrect"] == 0.5
    assert fig9["row_share"]["Complex Thought"]["Completely Correct"] == 1.0
    # A second analysis reads every judge reply from the journal: same report, no new calls.
    again = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=180)
    assert again.returncode == 0
    assert json.loads((run_dir / "thinking.json").read_text(encoding="utf-8"))["tasks"][TASK]["judge_analysis"] == rep


def test_token_counts_use_the_run_models_own_tokenizer(tmp_path, smollm2_path):
    from glotbench.benchmarks.openhueval.thinking import approx_token_count
    from glotbench.benchmarks.openhueval.thinking_cmd import token_counter

    (tmp_path / "results.json").write_text(json.dumps({"model": {"model_id": "llamacpp:SmolLM2"}, "config": {"model": "embedded"}}))
    count, label = token_counter(tmp_path)
    assert label.startswith("the model's own tokenizer")
    text = "Várjunk, a #0# helyére az 'isteni' szó kerül."
    assert count(text) > approx_token_count(text)  # subword tokens, not words
    (tmp_path / "results.json").write_text(json.dumps({"model": {"model_id": "openai:gpt-4o"}, "config": {"model": "openai:gpt-4o"}}))
    count, label = token_counter(tmp_path)
    assert label.startswith("approximate") and count(text) == approx_token_count(text)


def test_judge_analysis_on_the_real_recorded_smollm2_traces(stub_server, tmp_path):
    """The 12 traces SmolLM2 really produced (bench/record_thinking.py), served back by the stub;
    the judge stub answers the analysis prompts. The model never closes its trace, so every item is
    NOT_ATTEMPTED: every table is printed, the Fig. 6 share has no INCORRECT response to count."""
    from test_analyze_thinking_cli import REAL_FIXTURE

    if not resolve_data_file("openhueval/HuMatchingFIB.jsonl").is_file():
        pytest.skip("OpenHuEval data not found (openhueval/HuMatchingFIB.jsonl under the data root)")
    records = [json.loads(line) for line in REAL_FIXTURE.read_text(encoding="utf-8").splitlines() if line.strip()]
    canned = tmp_path / "canned.jsonl"
    canned.write_text("".join(json.dumps({"match": r["options"], "response": r["response"]}, ensure_ascii=False) + "\n"
                              for r in records), encoding="utf-8")
    judge_file = tmp_path / "judge.jsonl"
    judge_file.write_text("".join(json.dumps(c) + "\n" for c in JUDGE), encoding="utf-8")
    base, judge_base = stub_server("--responses", str(canned)), stub_server("--responses", str(judge_file))
    env = {**os.environ, "OPENAI_API_KEY": "x", "COLUMNS": "200"}
    run_dir = tmp_path / "run"
    done = subprocess.run([sys.executable, "-m", "glotbench", "run", "--model", "openai:stub", "--base-url", base, "--tasks", TASK,
                           "--prompt-lang", "hu", "--limit", "12", "-o", str(run_dir), "--no-progress"],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    done = subprocess.run([sys.executable, "-m", "glotbench", "analyze", "thinking", str(run_dir), "--judge", "openai:judge",
                           "--judge-base-url", judge_base], env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    for word in ("Fig. 6", "F.2.1", "F.2.2", "translation share = 50.0%"):
        assert word in done.stdout, word
    rep = json.loads((run_dir / "thinking.json").read_text(encoding="utf-8"))["tasks"][TASK]["judge_analysis"]
    assert rep["NOT_ATTEMPTED"]["n_judged"] == 12 and rep["ALL"]["n_thoughts_assessed"] == 24
    assert rep["fig6"]["incorrect_with_correct_thought"] is None and rep["fig6"]["n_incorrect_assessed"] == 0
