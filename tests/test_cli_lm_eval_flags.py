"""lm-evaluation-harness users' flags on `glotbench run` (issue #52), each in a fresh process: a
translated flag gives the same run as glotbench's spelling (settings and metric values compared); a
refused one is one line naming glotbench's spelling, before any request. "Did you mean" offers the
closest names first: tasks, suites, metrics, options (glotbench.closest)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from test_task_names import _qa_task  # a four-item user-folder task the echo stub answers

SRC = str(Path(__file__).resolve().parents[1] / "src")


def _glotbench(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "OPENAI_API_KEY": "x", "COLUMNS": "250",
           "PYTHONPATH": os.pathsep.join(p for p in (SRC, os.environ.get("PYTHONPATH", "")) if p)}
    return subprocess.run([sys.executable, "-m", "glotbench", *map(str, args)], env=env, capture_output=True,
                          text=True, timeout=300, cwd=cwd)


def _requests(base: str) -> int:
    return len(httpx.get(base.replace("/v1", "/_log")).json()["log"])


def _lines(text: str) -> list[str]:
    return [x for x in text.strip().splitlines() if x.strip()]


def _run_facts(out: Path) -> tuple[dict, dict, list]:
    res = json.loads((out / "results.json").read_text(encoding="utf-8"))
    samples = [json.loads(x) for x in (out / "samples.jsonl").read_text(encoding="utf-8").splitlines()]
    metrics = {name: {k: v for k, v in t.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
               for name, t in res["tasks"].items()}
    return res, metrics, [(s.get("id") or s.get("doc_id"), s.get("prompt")) for s in samples]


def test_translated_lm_eval_flags_give_the_glotbench_spelling_s_run(stub_server, tmp_path):
    """--model_args (comma form), --output_path=, --num_fewshot, --gen_kwargs, --apply_chat_template and
    --log_samples against -M, --output, --num-fewshot, --gen-kwargs, -M chat=true: same settings, prompts and metrics
    (lm-eval's max_gen_toks is glotbench's max_tokens)."""
    base = stub_server("--echo-gold")
    task = _qa_task(tmp_path / "user")
    common = ["-m", "openai:stub", "--base-url", base, "-t", task, "--no-progress"]
    lm = _glotbench("run", *common, "--model_args", "max_parallel=3,logprobs_trusted=false",
                    f"--output_path={tmp_path / 'lm'}", "--num_fewshot", "0", "--gen_kwargs", "max_gen_toks=16,top_k=5",
                    "--apply_chat_template", "--log_samples")
    assert lm.returncode == 0, lm.stderr
    gb = _glotbench("run", *common, "-M", "max_parallel=3", "-M", "logprobs_trusted=false", "--output", tmp_path / "gb",
                    "--num-fewshot", "0", "--gen-kwargs", "max_tokens=16", "--gen-kwargs", "top_k=5", "-M", "chat=true")
    assert gb.returncode == 0, gb.stderr
    (res_lm, m_lm, s_lm), (res_gb, m_gb, s_gb) = _run_facts(tmp_path / "lm"), _run_facts(tmp_path / "gb")
    assert res_lm["config"]["model_args"] == res_gb["config"]["model_args"] == {
        "max_parallel": 3, "logprobs_trusted": False, "chat": True}
    settings = lambda r: {k: v for k, v in r["settings"].items() if k != "output"}  # noqa: E731
    assert settings(res_lm) == settings(res_gb)
    assert res_lm["settings"]["num_fewshot"] == 0 and res_lm["settings"]["gen_kwargs"] == {"max_tokens": 16, "top_k": 5}
    assert m_lm == m_gb and m_lm["my.qa"]["n_items"] == 4
    assert s_lm == s_gb and len(s_lm) == 4  # --log_samples: the samples are written either way


@pytest.mark.parametrize("args, names", [
    (["--batch_size", "8"], "--concurrency"),
    (["--batch_size=auto"], "--model-args batch_size=N"),
    (["--include_path", "my_tasks"], "GLOTBENCH_TASKS_PATH"),
    (["--include_path=my_tasks"], "glotbench tasks import "),
    (["--model_args", "pretrained=gpt2,dtype=float16"], "--model hf:gpt2"),
    (["--apply_chat_template=chatml"], "--set chat_template=FILE"),
    (["--output_path"], "--output"),
])
def test_refused_lm_eval_flags_are_one_line_naming_the_glotbench_spelling(stub_server, tmp_path, args, names):
    base = stub_server("--echo-gold")
    task = _qa_task(tmp_path / "user")
    done = _glotbench("run", "-m", "openai:stub", "--base-url", base, "-t", task, "-o", tmp_path / "run", *args)
    assert done.returncode != 0
    lines = _lines(done.stderr)
    assert len(lines) == 1 and lines[0].startswith("error: ") and names in lines[0], done.stderr
    assert _requests(base) == 0 and not (tmp_path / "run").exists()


def test_a_misspelt_task_suite_or_option_gets_the_closest_names_first(tmp_path):
    done = _glotbench("run", "--tasks", "hullu", "-o", tmp_path / "r", "--offline")
    assert done.returncode == 2
    assert "unknown task or suite 'hullu'; did you mean hulu," in done.stderr, done.stderr
    suite = _glotbench("tasks", "--suite", "hullu")
    assert suite.returncode != 0 and "did you mean hulu" in suite.stderr, suite.stderr
    opt = _glotbench("run", "--temprature", "0")
    assert opt.returncode == 2 and "No such option: --temprature; did you mean --temperature" in opt.stderr, opt.stderr
    # a knob that is a setting, not a listed flag, is offered in its listed spelling
    knob = _glotbench("build", "select", "q.jsonl", "--rondes", "3")
    assert knob.returncode == 2 and "No such option: --rondes; did you mean --set rounds=...?" in knob.stderr, knob.stderr


def test_a_metric_typo_gets_the_closest_metrics_first_not_all_of_them(stub_server, tmp_path):
    base = stub_server("--echo-gold")
    task = _qa_task(tmp_path / "user", metrics="[exact_match, bow_f11]")
    done = _glotbench("run", "-m", "openai:stub", "--base-url", base, "-t", task, "-o", tmp_path / "run")
    assert done.returncode == 2
    line = _lines(done.stderr)[0]
    assert "unknown metric 'bow_f11' (did you mean bow_f1," in line, line
    offered = line.split("did you mean ", 1)[1].split("?", 1)[0].split(", ")
    assert 1 <= len(offered) <= 5, offered
    assert _requests(base) == 0


def test_closest_orders_by_similarity_and_cuts_off():
    from glotbench.closest import closest, known_hint

    names = ["hulu", "hulu.cola", "hulu.copa", "mmlu", "belebele"]
    assert closest("hullu", names)[0] == "hulu"
    assert closest("hulu.cla", names)[:2] == ["hulu.cola", "hulu.copa"]
    assert closest("zzzzzz", names) == []
    many = [f"metric_{i:03d}" for i in range(96)]
    near = closest("metrc_055", many)
    assert near[0] == "metric_055" and len(near) == 5  # closest first, never all 96
    assert known_hint("metrc_055", many) == f"did you mean {', '.join(near)}?"
    assert known_hint("letters", ["choice", "json", "text"]).startswith("known: ")  # a small set: listed whole
    assert known_hint("qqqqqqqq", many) == "none of the 96 known names is close"
