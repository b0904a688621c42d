"""`glotbench run --config run.yaml`: one file names the model, tasks and knobs; flags override it."""

from __future__ import annotations

import json
import subprocess
import sys

from glotbench.engine.config import load_config


def test_config_file_runs_and_flags_override(stub_server, data_root, tmp_path):
    base = stub_server("--answer", "B")
    cfg = tmp_path / "run.yaml"
    cfg.write_text(f"""
model: openai:stub
base_url: {base}
tasks: [mm_eval.semantics]
suites: [mm_eval.syntax]
limit: 7
concurrency: 4
max_tokens: 8
output: {tmp_path / 'from-config'}
""", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "glotbench", "run", "--config", str(cfg), "--limit", "5", "--no-progress"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    results = json.loads((tmp_path / "from-config" / "results.json").read_text())
    assert list(results["tasks"]) == ["mm_eval.semantics", "mm_eval.syntax"]
    assert all(t["n_items"] == 5 for t in results["tasks"].values())  # the flag beat the file
    assert results["config"]["max_tokens"] == 8 and results["config"]["concurrency"] == 4
    sample = json.loads((tmp_path / "from-config" / "samples.jsonl").read_text().splitlines()[0])
    assert sample["pred"] == "B"


def test_config_unknown_key_names_file_and_field(tmp_path):
    cfg = tmp_path / "bad.yaml"
    cfg.write_text("model: embedded\nlimmit: 3\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "glotbench", "run", "--config", str(cfg)], capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.strip() == f"error: {cfg}: field 'limmit': unknown field"
    try:
        load_config(cfg)
    except Exception as e:  # noqa: BLE001
        assert "limmit" in str(e)
