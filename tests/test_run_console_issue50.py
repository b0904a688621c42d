"""What `glotbench run` says (issue 50): a run into an ``-o`` folder holding another setting's
result keeps that results.json beside its own under its fingerprint and says so in one line; the
console counts the answers taken from the shared response cache (``--cache``). Each run is a fresh
CLI subprocess against the stub server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[1] / "src")
ROWS = [{"id": f"q{k:02d}", "q": f"{k} + {k} = ? GOLD={2 * k}", "gold": str(2 * k)} for k in range(1, 5)]


def _task(tmp_path: Path) -> Path:
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    spec = tmp_path / "demo.yaml"
    spec.write_text("""name: demo.console
version: "1"
language: en
dataset:
  format: jsonl
  splits: {test: d.jsonl}
fields: {id: id, question: q, target: gold}
prompt: {user: "{{ question }}"}
extractor: {name: number}
scorer: numeric
metrics: [numeric_match]
""", encoding="utf-8")
    return spec


def _run(base: str, spec: Path, out: Path, *extra: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": SRC, "OPENAI_API_KEY": "x", "COLUMNS": "200"}
    env.pop("GLOTBENCH_CACHE", None)
    done = subprocess.run([sys.executable, "-m", "glotbench", "run", "-m", "openai:stub", "--base-url", base, "-t", str(spec),
                           "-o", str(out), "--no-progress", "--bootstrap", "20", *extra],
                          capture_output=True, text=True, timeout=300, env=env, cwd=spec.parent)
    assert done.returncode == 0, done.stderr[-2000:]
    return done


def test_another_setting_into_the_same_folder_keeps_the_earlier_results(tmp_path, stub_server):
    base = stub_server("--echo-gold")
    spec = _task(tmp_path)
    out = tmp_path / "run"
    first = _run(base, spec, out)
    assert "held the result of another setting" not in first.stderr + first.stdout
    fp1 = json.loads((out / "results.json").read_text())["fingerprint"]
    second = _run(base, spec, out, "--temperature", "0.5")
    res2 = json.loads((out / "results.json").read_text())
    fp2 = res2["fingerprint"]
    assert fp2 != fp1 and res2["settings"]
    kept = out / f"results.{fp1}.json"
    assert kept.is_file() and json.loads(kept.read_text())["fingerprint"] == fp1
    said = [x for x in (second.stderr + second.stdout).splitlines() if "held the result of another setting" in x]
    assert len(said) == 1 and f"run {fp1}" in said[0] and kept.name in said[0] and f"run {fp2}" in said[0], said
    # the same setting again: nothing to keep, nothing said
    third = _run(base, spec, out, "--temperature", "0.5")
    assert "held the result of another setting" not in third.stderr + third.stdout
    assert sorted(p.name for p in out.glob("results*.json")) == sorted(["results.json", kept.name])


def test_console_counts_answers_from_the_response_cache(tmp_path, stub_server):
    base = stub_server("--echo-gold")
    spec = _task(tmp_path)
    cache = tmp_path / "cache"
    first = _run(base, spec, tmp_path / "one", "--cache", str(cache))
    assert "requests this session: 4 sent · 0 from this run's journal" in first.stdout, first.stdout
    assert "response cache" not in first.stdout
    second = _run(base, spec, tmp_path / "two", "--cache", str(cache))
    assert "requests this session: 0 sent · 0 from this run's journal · 4 from the response cache (the cache setting)" in second.stdout, \
        second.stdout
    res = json.loads((tmp_path / "two" / "results.json").read_text())
    assert res["run"]["sessions"][-1]["requests_from_shared_cache"] == 4


def _results() -> dict:
    t = {"n_scored": 817, "n_unparseable": 12, "n_errors": 0, "flag": "", "version": "1.0", "prompt_hash": "a1b2c3d4",
         "status": "ok"}
    return {"model": {"model_id": "openai:gpt-4o-mini"}, "fingerprint": "abc123def456", "tasks": {
        "czech_bench.truthfulqa_en": {**t, "language": "en", "metrics": {
            "accuracy_norm": {"value": 0.41234, "ci95": [0.3812, 0.4423]}, "exact_match": {"value": 0.5, "ci95": [0.4, 0.6]}}},
        "chinese_simpleqa": {**t, "language": "zh", "n_unparseable": 1200, "flag": "*", "metrics": {
            "factuality_correct_given_attempted": {"value": 0.41234, "ci95": [0.3812, 0.4423]}}}}}


def test_results_table_never_breaks_a_name_mid_word():
    """At 80 columns (and at 200) every task and metric name is whole on one line of the table,
    and every value with its interval is there."""
    from rich.console import Console

    from glotbench.output.table import print_results

    res = _results()
    for width in (80, 100, 200):
        con = Console(width=width, record=True, force_terminal=False)
        print_results(res, con)
        text = con.export_text()
        lines = text.splitlines()
        assert max(len(x) for x in lines) <= width
        for name in [*res["tasks"], *(m for t in res["tasks"].values() for m in t["metrics"])]:
            assert any(name in line for line in lines), (width, name, text)
        assert "0.412 [0.381, 0.442]" in text and "0.500 [0.400, 0.600]" in text
