"""One settings object behind `glotbench run`: flags built from RunSettings fields, each tested in
a fresh subprocess (--model-args, --judge-args, fractional --limit, --write-out, --version, help
with defaults)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from test_task_names import QA_ROWS, _qa_task  # a four-item user-folder task the echo stub answers

SRC = str(Path(__file__).resolve().parents[1] / "src")


def _glotbench(*args: str, timeout: int = 120) -> subprocess.CompletedProcess:
    env = {**os.environ, "OPENAI_API_KEY": "x", "COLUMNS": "250",
           "PYTHONPATH": os.pathsep.join(p for p in (SRC, os.environ.get("PYTHONPATH", "")) if p)}
    return subprocess.run([sys.executable, "-m", "glotbench", *args], env=env, capture_output=True, text=True,
                          timeout=timeout)


def _log(base: str) -> list:
    return httpx.get(base.replace("/v1", "/_log")).json()["log"]


def test_version():
    from glotbench import __version__

    done = _glotbench("--version")
    assert done.returncode == 0 and done.stdout.strip() == f"glotbench {__version__}"


def test_run_help_shows_defaults_and_the_new_flags():
    done = _glotbench("run", "--help")
    assert done.returncode == 0
    text = " ".join(done.stdout.split())
    for flag, default in [("--seed", "(default: 1234)"), ("max_retries:", "(default: 5)"),
                          ("--num-fewshot", "(default: each task's own)"), ("--temperature", "(default: each task's own"),
                          ("--max-tokens", "(default: each task's own"), ("--split", "(default: each task's evaluation split)"),
                          ("--concurrency", "(default: the backend's own limit, else 8)"), ("timeout:", "(default: 120.0)")]:
        assert flag in text and default in text, (flag, default)
    for flag in ("--model-args", "-M", "--judge-args", "--write-out", "--limit", "--set"):
        assert flag in text
    for rare in ("--retry-base-delay", "--breaker-failures", "--shard-retries", "--api-key-env", "--max-retries",
                 "--gen-kwargs", "--system-prompt", "--predictions-out", "--bootstrap"):
        assert rare not in text  # accepted, not listed: --set NAME=VALUE or the config file
    settings = text.split("Settings (--set NAME=VALUE")[1]
    for name in ("retry_base_delay:", "gen_kwargs:", "system_prompt:", "predictions_out:", "bootstrap:", "sample:"):
        assert name in settings, name  # ... listed by name under Settings


def test_every_settings_field_has_a_flag_and_one_place():
    """A setting is one RunSettings field: the YAML config, the engine and the CLI read it from there."""
    from glotbench.cli.run import settings_parameters
    from glotbench.engine.config import RunConfig
    from glotbench.settings import RunSettings
    import glotbench.tasks.task as task_module

    assert RunConfig is RunSettings and not hasattr(task_module, "RunSettings")  # tasks see RequestSettings only
    params = settings_parameters()
    rare = {n for n, f in RunSettings.model_fields.items() if (f.json_schema_extra or {}).get("rare")}
    assert {p.name for p in params if not p.default.hidden} == set(RunSettings.model_fields) - rare
    assert {p.name for p in params if p.default.hidden} == {"judge_args__judge_arg"} | rare  # old spellings, rare knobs


def test_model_args_fractional_limit_and_plain_prompts(stub_server, tmp_path):
    base = stub_server("--echo-gold")
    task = _qa_task(tmp_path / "user")
    done = _glotbench("run", "-m", "openai:stub", "--base-url", base, "-t", str(task), "-o", str(tmp_path / "run"),
                      "-M", "chat=false", "-M", "max_parallel=3", "--limit", "0.5", "--no-progress")
    assert done.returncode == 0, done.stderr
    res = json.loads((tmp_path / "run" / "results.json").read_text())
    assert res["model"]["chat"] is False
    assert res["config"]["model_args"] == {"chat": False, "max_parallel": 3}
    assert res["tasks"]["my.qa"]["n_items"] == 2 and len(_log(base)) == 2  # ceil(0.5 * 4)
    assert res["settings"]["limit"] == 0.5
    samples = [json.loads(x) for x in (tmp_path / "run" / "samples.jsonl").read_text().splitlines()]
    assert all(isinstance(s["prompt"], str) for s in samples)  # plain completion prompts, not chat messages


def test_limit_must_be_a_count_or_a_share(tmp_path):
    done = _glotbench("run", "-t", "mm_eval", "--limit", "2.5", "-o", str(tmp_path / "r"))
    assert done.returncode != 0 and "limit" in done.stderr
    assert not (tmp_path / "r").exists()


def test_write_out_shows_prompts_and_calls_nothing(stub_server, tmp_path):
    base = stub_server("--echo-gold")
    task = _qa_task(tmp_path / "user")
    done = _glotbench("run", "-m", "openai:stub", "--base-url", base, "-t", str(task), "--write-out", "2",
                      "-o", str(tmp_path / "run"))
    assert done.returncode == 0, done.stderr
    assert QA_ROWS[0]["question"] in done.stdout and QA_ROWS[1]["question"] in done.stdout
    assert QA_ROWS[2]["question"] not in done.stdout
    assert "[user]" in done.stdout and "my.qa" in done.stdout
    assert _log(base) == [] and not (tmp_path / "run").exists()
    plain = _glotbench("run", "-t", str(task), "--write-out", "1", "-M", "chat=false")
    assert plain.returncode == 0 and "plain" in plain.stdout and "[user]" not in plain.stdout


def test_judge_args_reach_the_judge(stub_server, tmp_path, data_root):
    from test_factuality_task import write_csv_task

    responses = tmp_path / "canned.jsonl"
    lines = [{"match": "Predicted answer:", "response": "A"}, {"match": "", "response": "Budapest"}]
    responses.write_text("\n".join(json.dumps(x) for x in lines), encoding="utf-8")
    base = stub_server("--responses", str(responses))
    done = _glotbench("run", "-m", "openai:stub", "--base-url", base, "--judge", "openai:judge",
                      "--judge-args", f"base_url={base}", "--judge-args", "max_parallel=2",
                      "-t", str(write_csv_task(tmp_path)), "-o", str(tmp_path / "run"), "--no-progress")
    assert done.returncode == 0, done.stderr
    res = json.loads((tmp_path / "run" / "results.json").read_text())
    assert res["judge"]["model_id"].startswith("openai:judge@" + base)
    assert res["config"]["judge_args"] == {"base_url": base, "max_parallel": 2}
    assert res["run"]["judge_requests_sent"] == 3


def test_config_file_and_flags_merge_model_args(tmp_path):
    from glotbench.cli.run import settings_from_cli
    from glotbench.settings import items_for

    cfg = tmp_path / "run.yaml"
    cfg.write_text("model: openai:x\nmodel_args: {chat: true, n_ctx: 4096}\nlimit: 10\n")
    s = settings_from_cli({"model_args": ["chat=false", "n_gpu_layers=20"], "limit": 0.25}, cfg)
    assert s.model == "openai:x" and s.model_args == {"chat": False, "n_ctx": 4096, "n_gpu_layers": 20}
    assert s.limit == 0.25 and items_for(s.limit, 10) == 3
    # settings that shape requests: the nine that always did, plus new ones only when set
    assert list(s.request_settings()) == ["limit", "seed", "num_fewshot", "temperature", "max_tokens", "samples",
                                          "mode", "split", "prompt_lang"]


@pytest.mark.parametrize("items", [["n_gpu_layers=20"], ["n_gpu_layers=20,chat=false"]])
def test_key_values(items):
    from glotbench.settings import parse_key_values

    out = parse_key_values(items, "--model-args")
    assert out["n_gpu_layers"] == 20 and out.get("chat", False) is False


def test_set_takes_key_value_and_list_settings_and_run_s_own():
    """The knobs that became settings (issue 52): ``--set gen_kwargs=top_k=5,top_p=0.9`` is ``--gen-kwargs``
    (a KEY=VALUE setting takes the rest of its item, merged key by key with the flag), ``--set perturb=a,b``
    a list, ``--set predictions_out=DIR`` / ``wait=true`` run's own (not run-config keys)."""
    import glotbench.cli.run as run_cli
    from glotbench.cli.run import settings_from_cli

    s = settings_from_cli({"set_": ["gen_kwargs=top_k=5,top_p=0.9", "perturb=typos,case", "model_meta=size=7B",
                                    "sample=10,stratify=gold", "log_to=mlflow"], "gen_kwargs": ["seed=3"]}, None)
    assert s.gen_kwargs == {"top_k": 5, "top_p": 0.9, "seed": 3} and s.perturb == ["typos", "case"]
    assert (s.model_meta, s.sample, s.stratify, s.log_to) == ({"size": "7B"}, 10, "gold", ["mlflow"])
    flags = settings_from_cli({"gen_kwargs": ["top_k=5,top_p=0.9"], "perturb": ["typos", "case"]}, None)
    assert (flags.gen_kwargs, flags.perturb) == ({"top_k": 5, "top_p": 0.9}, ["typos", "case"])  # their hidden flags
    got = {}
    real = run_cli._run
    run_cli._run = lambda **kw: got.update(kw)
    try:
        run_cli.run(set_=["predictions_out=subs,wait=true,note=x", "gen_kwargs=top_k=1"], wait=False, predictions_out=None)
    finally:
        run_cli._run = real
    assert got["predictions_out"] == Path("subs") and got["wait"] is True
    assert got["set_"] == ["note=x", "gen_kwargs=top_k=1"]
