"""A task that cannot load is set aside in a suite/glob or Czech-Bench-config run: its one-line
reason is printed and stored in results.json ``skipped_tasks``, the other tasks run, and the exit
code is 3 (0 when the only tasks set aside have no data at all). Each run in a fresh process
against the stub OpenAI server."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from czech_bench_ref import MIRROR

pytest.importorskip("datasets")
REPO = Path(__file__).resolve().parents[1]


def _data(tmp_path: Path, *, broken: bool) -> Path:
    """Belebele cs in today's layout; Belebele en present but in a layout no task reads (broken)
    or absent."""
    root = tmp_path / "data"
    hf = root / "czech_bench" / "hf"
    hf.mkdir(parents=True)
    shutil.copytree(MIRROR / "facebook" / "belebele", hf / "belebele")
    if broken:
        bad = hf / "belebele_en"
        (bad / "data").mkdir(parents=True)
        (bad / "data" / "x.jsonl").write_text('{"a": 1}\n', encoding="utf-8")
        (bad / "README.md").write_text("---\nconfigs:\n- config_name: zul_Latn\n  data_files:\n  - split: test\n"
                                       "    path: data/x.jsonl\n---\n", encoding="utf-8")
    return root


def _run(tmp_path: Path, data: Path, *args: str) -> tuple[subprocess.CompletedProcess, dict]:
    out = tmp_path / "run"
    env = {**os.environ, "GLOTBENCH_DATA": str(data), "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1", "COLUMNS": "250",
           "PYTHONPATH": os.pathsep.join(p for p in (str(REPO / "src"), os.environ.get("PYTHONPATH", "")) if p)}
    r = subprocess.run([sys.executable, "-m", "glotbench", "run", *args, "-o", str(out), "--no-progress"],
                       capture_output=True, text=True, timeout=600, env=env, cwd=tmp_path)
    res = json.loads((out / "results.json").read_text(encoding="utf-8")) if (out / "results.json").is_file() else {}
    return r, res


def test_glob_sets_an_unloadable_task_aside(tmp_path, stub_server):
    base = stub_server("--answer", "2")
    r, res = _run(tmp_path, _data(tmp_path, broken=True), "--model", "openai:stub", "--base-url", base,
                  "--tasks", "czech_bench.belebele*", "--limit", "3")
    assert r.returncode == 3, r.stdout + r.stderr
    assert list(res["tasks"]) == ["czech_bench.belebele"] and res["tasks"]["czech_bench.belebele"]["n_items"] == 3
    why = res["skipped_tasks"]["czech_bench.belebele_en"]
    assert why.startswith("cannot load: ") and "'eng_Latn'" in why and "zul_Latn" in why and "\n" not in why
    assert "skipped czech_bench.belebele_en: cannot load: " in r.stderr
    assert "cannot load, not run: czech_bench.belebele_en: " in r.stdout
    assert "error: 1 task(s) could not load their data and were not run: czech_bench.belebele_en" in r.stderr


def test_config_sets_an_unloadable_benchmark_aside(tmp_path, stub_server):
    base = stub_server("--answer", "2")
    cfg = tmp_path / "cb.yml"
    cfg.write_text(f"model_name: openai:stub\nmodel_parameters: {{base_url: '{base}'}}\n"
                   "benchmarks:\n- {name: belebele_en, use: true, local: true}\n- {name: belebele, use: true, local: true}\n"
                   "stop_idx: 2\n", encoding="utf-8")
    r, res = _run(tmp_path, _data(tmp_path, broken=True), "--config", str(cfg))
    assert r.returncode == 3, r.stdout + r.stderr
    assert list(res["tasks"]) == ["czech_bench.belebele"] and res["tasks"]["czech_bench.belebele"]["n_scored"] == 2
    assert res["skipped_tasks"]["czech_bench.belebele_en"].startswith("cannot load: ")


def test_missing_data_only_is_exit_0(tmp_path, stub_server):
    base = stub_server("--answer", "2")
    r, res = _run(tmp_path, _data(tmp_path, broken=False), "--model", "openai:stub", "--base-url", base,
                  "--tasks", "czech_bench.belebele*", "--limit", "2")
    assert r.returncode == 0, r.stdout + r.stderr
    assert list(res["tasks"]) == ["czech_bench.belebele"]
    assert res["skipped_tasks"]["czech_bench.belebele_en"].startswith("data missing: facebook/belebele (eng_Latn)@main")
    assert "data missing, not run: czech_bench.belebele_en" in r.stdout


def test_a_task_named_alone_still_fails_with_its_error(tmp_path, stub_server):
    base = stub_server("--answer", "2")
    r, res = _run(tmp_path, _data(tmp_path, broken=True), "--model", "openai:stub", "--base-url", base,
                  "--tasks", "czech_bench.belebele_en", "--limit", "2")
    assert r.returncode != 0 and not res
    assert "has none of the configs" in r.stderr


def test_suite_sets_aside_missing_and_unloadable_tasks(tmp_path, stub_server):
    base = stub_server("--answer", "2")
    r, res = _run(tmp_path, _data(tmp_path, broken=True), "--model", "openai:stub", "--base-url", base,
                  "--suite", "czech_bench", "--limit", "1")
    assert r.returncode == 3, r.stdout + r.stderr
    skipped = res["skipped_tasks"]
    assert "czech_bench.belebele" in res["tasks"] and len(res["tasks"]) + len(skipped) == 27
    assert skipped["czech_bench.belebele_en"].startswith("cannot load: ")
    assert all(why.startswith("data missing: ") for name, why in skipped.items() if name != "czech_bench.belebele_en")
    assert "czech_bench.snli" in skipped and "czech_bench.mmlu" in skipped  # Hub sets absent from this root
