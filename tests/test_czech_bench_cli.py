"""The Czech-Bench suite from the command line, each in a fresh process: `glotbench tasks
--suite czech_bench` lists the 27 benchmarks (data-missing ones say where their data goes);
`glotbench run --suite czech_bench` on the embedded model runs the tasks whose data is here and
lists the others as data missing."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from value_oracles import run_value_mismatches


def _cli(*args, timeout=600):
    return subprocess.run([sys.executable, "-m", "glotbench", *map(str, args)], capture_output=True, text=True, timeout=timeout,
                          env={**__import__("os").environ, "COLUMNS": "250"})


def test_tasks_suite_lists_27():
    r = _cli("tasks", "--suite", "czech_bench")
    assert r.returncode == 0, r.stderr
    assert "czech_bench (27)" in r.stdout
    # piped, `glotbench tasks` prints one tab-separated line per task (full names, no table)
    rows = [ln for ln in r.stdout.splitlines() if "\t" in ln and ln.split("\t")[0].startswith(("czech_bench.", "czech_bench.klokanek"))]
    assert len(rows) == 27
    notes = r.stdout + r.stderr  # the data-missing lines go to stderr when piped
    assert "data missing: ctu-aic/anli_cs@" in notes and "put it at" in notes


@pytest.mark.slow
def test_suite_run_on_embedded_model(smollm2_path, tmp_path):
    from glotbench.paths import resolve_data_file

    if not resolve_data_file("czech_klokanek/dataset.json").is_file():
        pytest.skip("shared data not found")
    out = tmp_path / "run"
    r = _cli("run", "--suite", "czech_bench", "--model", "embedded", "--limit", 1, "--max-tokens", 2, "-o", out, "--no-progress",
             timeout=3000)
    assert r.returncode == 0, r.stderr
    res = json.loads((out / "results.json").read_text(encoding="utf-8"))
    ran, skipped = set(res["tasks"]), set(res["skipped_tasks"])
    assert len(ran) + len(skipped) == 27 and ran >= {"czech_bench.klokanek", "czech_bench.gsm8k_en"}
    assert all(v.startswith("data missing: ") for v in res["skipped_tasks"].values())
    assert r.stdout.count("data missing, not run:") == len(skipped)
    for t in res["tasks"].values():
        assert "cb_parsed" in t["metrics"] and t["n_scored"] == 1
    # each number recomputed from the run's samples.jsonl (the reference rules re-parse the texts)
    assert run_value_mismatches(out) == []
