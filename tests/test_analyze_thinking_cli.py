"""`glotbench analyze thinking` on a real run whose responses carry reasoning traces.

The stub server answers six real HuMatchingFIB items with the hand-written traces of
tests/fixtures/thinking_responses.jsonl (``<think>`` blocks, one separate ``reasoning_content``
field, one response without a trace), each followed by an answer chosen so that the task's own
scoring gives the fixture's outcome: the gold blanks (CORRECT), a wrong blank (INCORRECT), or
no JSON at all (NOT_ATTEMPTED). The CLI's report must equal the analysis of the fixture itself.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from glotbench.benchmarks.openhueval import thinking as th
from glotbench.paths import resolve_data_file

FIXTURE = Path(__file__).parent / "fixtures" / "thinking_responses.jsonl"
TASK = "openhueval.hu_matchingfib"


def canned_responses(records: list[dict]) -> list[dict]:
    from glotbench.benchmarks.openhueval import matching_fib

    items = matching_fib.load()
    canned = []
    for fx, item in zip(records, items):
        trace_part = fx["response"][: fx["response"].index("</think>") + len("</think>")] if "</think>" in fx["response"] else ""
        gold = list(item["answer"])
        if fx["outcome"] == "CORRECT":
            answer = json.dumps({"answer": gold})
        elif fx["outcome"] == "INCORRECT":
            answer = json.dumps({"answer": ["#0#Z", *gold[1:]]})
        else:
            answer = fx["response"]  # "Nem tudom." - no JSON object: not attempted
        # the prompt shows the options as str(list); two items here share a question, not their options
        line = {"match": str(list(item["options"])), "response": trace_part + answer}
        if fx.get("reasoning"):
            line["reasoning"] = fx["reasoning"]
        canned.append(line)
    return canned


def test_analyze_thinking_on_a_stub_run(stub_server, tmp_path):
    if not resolve_data_file("openhueval/HuMatchingFIB.jsonl").is_file():
        pytest.skip("OpenHuEval data not found (openhueval/HuMatchingFIB.jsonl under the data root)")
    records = [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert all(r["provenance"].startswith("hand-written") for r in records)
    canned = tmp_path / "canned.jsonl"
    canned.write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in canned_responses(records)), encoding="utf-8")
    base = stub_server("--responses", str(canned))
    run_dir = tmp_path / "run"
    cmd = [sys.executable, "-m", "glotbench", "run", "--model", "openai:stub", "--base-url", base, "--tasks", TASK,
           "--limit", str(len(records)), "-o", str(run_dir), "--no-progress"]
    done = subprocess.run(cmd, check=False, env={**os.environ, "OPENAI_API_KEY": "x"}, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    res = json.loads((run_dir / "results.json").read_text(encoding="utf-8"))["tasks"][TASK]
    assert res["n_scored"] == 6 and res["metrics"]["question_accuracy"]["value"] == pytest.approx(2 / 6, abs=1e-6)
    samples = [json.loads(x) for x in (run_dir / "samples.jsonl").read_text(encoding="utf-8").splitlines()]
    assert any(s["outputs"][0]["reasoning"] for s in samples)  # reasoning_content came back separately

    from glotbench.cli import _register, app

    _register()
    cli = CliRunner().invoke(app, ["analyze", "thinking", str(run_dir)])
    assert cli.exit_code == 0, cli.output
    print(cli.output)  # the report, for the record (pytest -s)
    for word in ("CORRECT", "INCORRECT", "NOT_ATTEMPTED", "mean tokens", "mean thoughts", "ETI share"):
        assert word in cli.output
    report = json.loads((run_dir / "thinking.json").read_text(encoding="utf-8"))
    got = report["tasks"][TASK]["by_outcome"]
    expected = th.analyze(records, prompt_lang="hu")
    for outcome in ("CORRECT", "INCORRECT", "NOT_ATTEMPTED", "ALL"):
        for key in ("n_responses", "n_without_trace", "mean_tokens", "mean_thoughts", "n_segments", "n_eti", "eti_share"):
            assert got[outcome][key] == pytest.approx(expected[outcome][key]), (outcome, key)
    assert got["NOT_ATTEMPTED"]["n_responses"] == 1 and got["NOT_ATTEMPTED"]["n_without_trace"] == 1
    assert got["INCORRECT"]["mean_thoughts"] > got["CORRECT"]["mean_thoughts"]  # the fixture's wavering traces
    assert got["ALL"]["n_eti"] >= 1  # the English trace quoting the Hungarian question

    # --judge: the benchmark's HuMatchingFIB split prompt goes to the judge, through the run's journal.
    seg = {"segment": [{"text": "Okay, the question is in Hungarian.", "category": "Introduction"},
                       {"text": "So the answer is Kiskőrös.", "categoty": "Summary"}]}
    judge_canned = tmp_path / "judge.jsonl"
    judge_canned.write_text(json.dumps({"match": "semantic paragraph segmentation expert", "response": json.dumps(seg)}) + "\n",
                            encoding="utf-8")
    judge_base = stub_server("--responses", str(judge_canned))
    args = ["analyze", "thinking", str(run_dir), "--judge", "openai:stub", "--judge-base-url", judge_base]
    first = CliRunner(env={"OPENAI_API_KEY": "x"}).invoke(app, args)
    assert first.exit_code == 0, first.output
    judged = json.loads((run_dir / "thinking.json").read_text(encoding="utf-8"))
    assert judged["splitting"] == "judge openai:stub" and judged["tasks"][TASK]["judge_split_fallbacks"] == 0
    assert judged["tasks"][TASK]["by_outcome"]["ALL"]["mean_thoughts"] == 2.0
    log_url = judge_base.rsplit("/v1", 1)[0] + "/_log"
    n_calls = len(httpx.get(log_url).json()["log"])
    assert n_calls == 5 + 10  # one split per trace, then one thought assessment per segment (Fig. 6)
    again = CliRunner(env={"OPENAI_API_KEY": "x"}).invoke(app, args)
    assert again.exit_code == 0 and len(httpx.get(log_url).json()["log"]) == n_calls  # cached in the journal


def test_analyze_thinking_rejects_a_non_run_directory(tmp_path):
    from glotbench.cli import _register, app

    _register()
    (tmp_path / "empty").mkdir()
    res = CliRunner().invoke(app, ["analyze", "thinking", str(tmp_path / "empty")])
    assert res.exit_code != 0
    assert "not a glotbench run directory" in str(res.exception)


REAL_FIXTURE = Path(__file__).parent / "fixtures" / "thinking_responses_smollm2.jsonl"


def test_analyze_thinking_on_real_recorded_traces(stub_server, tmp_path):
    """Real model output: SmolLM2-135M-Instruct continuing a pre-filled ``<think>`` on 12 real
    HuMatchingFIB prompts (bench/record_thinking.py), served back through the stub. The small model
    never closes its trace, so every answer is inside it: all items are NOT_ATTEMPTED."""
    if not resolve_data_file("openhueval/HuMatchingFIB.jsonl").is_file():
        pytest.skip("OpenHuEval data not found (openhueval/HuMatchingFIB.jsonl under the data root)")
    records = [json.loads(line) for line in REAL_FIXTURE.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert len(records) == 12 and all(r["provenance"].startswith("recorded from SmolLM2") for r in records)
    canned = tmp_path / "canned.jsonl"
    canned.write_text("".join(json.dumps({"match": r["options"], "response": r["response"]}, ensure_ascii=False) + "\n"
                              for r in records), encoding="utf-8")
    base = stub_server("--responses", str(canned))
    run_dir = tmp_path / "run"
    done = subprocess.run([sys.executable, "-m", "glotbench", "run", "--model", "openai:stub", "--base-url", base,
                           "--tasks", TASK, "--prompt-lang", "hu", "--limit", "12", "-o", str(run_dir), "--no-progress"],
                          env={**os.environ, "OPENAI_API_KEY": "x"}, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    samples = [json.loads(x) for x in (run_dir / "samples.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [s["outputs"][0]["text"] for s in samples] == [r["response"] for r in records]

    from glotbench.cli import _register, app

    _register()
    cli = CliRunner().invoke(app, ["analyze", "thinking", str(run_dir)])
    assert cli.exit_code == 0, cli.output
    print(cli.output)
    by = json.loads((run_dir / "thinking.json").read_text(encoding="utf-8"))["tasks"][TASK]["by_outcome"]
    assert by["NOT_ATTEMPTED"]["n_responses"] == 12 and by["NOT_ATTEMPTED"]["n_without_trace"] == 0
    # the trace is everything after "<think>" (never closed): its length is the model's output length
    expected = th.analyze([{"response": r["response"], "outcome": "NOT_ATTEMPTED"} for r in records], prompt_lang="hu")
    for key in ("mean_tokens", "mean_thoughts", "n_segments", "n_eti"):
        assert by["ALL"][key] == pytest.approx(expected["ALL"][key]), key
    assert by["ALL"]["mean_tokens"] > 40
