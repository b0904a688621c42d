"""Czech-Bench's config shape (model_name, model_parameters, benchmarks with use, stop_idx) and
the free-text run note: stored in results.json, printed, shown in the HTML report."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from glotbench.engine.config import load_config
from glotbench.errors import GlotbenchError

REPO = Path(__file__).resolve().parents[1]


def test_shipped_config_names_all_27(tmp_path):
    cfg = load_config(REPO / "configs" / "czech_bench.yml")
    from glotbench.tasks.registry import suites

    assert sorted(cfg.tasks) == sorted(suites()["czech_bench"]) and len(cfg.tasks) == 27
    assert cfg.model == "embedded" and cfg.max_tokens == 8 and cfg.limit is None and cfg.note


def test_framework_fields_map(tmp_path):
    p = tmp_path / "c.yml"
    p.write_text("model_name: openai:gpt-x\nmodel_parameters: {max_new_tokens: 1, base_url: 'http://h/v1', top_k: 3}\n"
                 "benchmarks:\n- {name: klokanek, use: true, local: true}\n- {name: agree, use: false, local: true}\n"
                 "- {name: mm_eval.knowledge, use: true}\nstop_idx: 5\nnote: first try\nseed: 7\n", encoding="utf-8")
    cfg = load_config(p)
    assert cfg.tasks == ["czech_bench.klokanek", "mm_eval.knowledge"] and cfg.limit == 5 and cfg.max_tokens == 1
    assert cfg.base_url == "http://h/v1" and cfg.model_args == {"top_k": 3} and cfg.note == "first try" and cfg.seed == 7


@pytest.mark.parametrize("body,msg", [
    ("benchmarks:\n- {use: true}\n", "benchmarks[0]: needs a 'name'"),
    ("benchmarks:\n- {name: agree, used: true}\n", "unknown field 'used'"),
    ("benchmarks:\n- {name: agree, use: false}\n", "no benchmark has use: true"),
    ("model_parameters: 3\n", "'model_parameters' must be a mapping"),
])
def test_bad_config_one_line(tmp_path, body, msg):
    p = tmp_path / "bad.yml"
    p.write_text(body, encoding="utf-8")
    with pytest.raises(GlotbenchError, match=msg.replace("[", r"\[").replace("]", r"\]")) as e:
        load_config(p)
    assert str(p) in str(e.value) and "\n" not in str(e.value)


def test_note_in_results_table_and_report(tmp_path, stub_server):
    from glotbench.paths import resolve_data_file

    if not resolve_data_file("czech_klokanek/dataset.json").is_file():
        pytest.skip("Klokánek data not in the shared data")
    base = stub_server("--answer", "B")
    cfg = tmp_path / "cb.yml"
    cfg.write_text(f"model_name: openai:stub\nmodel_parameters: {{base_url: '{base}'}}\n"
                   "benchmarks:\n- {name: klokanek, use: true, local: true}\n- {name: anli, use: true, local: true}\n"
                   "stop_idx: 3\n", encoding="utf-8")
    out = tmp_path / "run"
    env_py = [sys.executable, "-m", "glotbench"]
    r = subprocess.run([*env_py, "run", "--config", str(cfg), "--note", "Opravený prompt, 3 položky", "-o", str(out), "--no-progress"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "note: Opravený prompt, 3 položky" in r.stdout
    assert "data missing, not run: czech_bench.anli" in r.stdout  # a selection with a data-missing task still runs
    res = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert res["note"] == "Opravený prompt, 3 položky" and res["config"]["limit"] == 3
    assert res["tasks"]["czech_bench.klokanek"]["n_items"] == 3
    rep = subprocess.run([*env_py, "runs", "report", str(out), "-o", str(tmp_path / "r.html")], capture_output=True, text=True, timeout=300)
    assert rep.returncode == 0, rep.stderr
    assert "Opravený prompt, 3 položky" in (tmp_path / "r.html").read_text(encoding="utf-8")
