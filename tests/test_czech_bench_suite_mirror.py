"""`glotbench run --suite czech_bench --limit 5` in a fresh process, with the Hub-only sets read from
their Hub layouts (tests/fixtures/hub_mirror, linked into a data root by czech_bench_ref.mirror_root),
the thesis' CTKFacts / Facebook / Mall.cz splits as small Arrow stand-ins, and Klokánek and GSM8K-en
from the shared data: all 27 tasks run against the stub server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from czech_bench_ref import mirror_root
from value_oracles import run_value_mismatches

pytest.importorskip("datasets")
REPO = Path(__file__).resolve().parents[1]
OFFLINE_COPIES = {  # the two tasks read from GitHub files the shared data holds
    "czech_bench.klokanek": "czech_klokanek/dataset.json",
    "czech_bench.gsm8k_en": "gsm8k_en/test.jsonl",
}


def test_suite_runs_all_27_from_hub_layouts(tmp_path, stub_server):
    from glotbench.paths import resolve_data_file

    missing = [t for t, rel in OFFLINE_COPIES.items() if not resolve_data_file(rel).exists()]
    if missing:
        pytest.skip(f"shared data not found for {', '.join(missing)} (../shared/data or GLOTBENCH_DATA)")
    root = mirror_root(tmp_path)
    for rel in OFFLINE_COPIES.values():  # one data root holding every file
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).symlink_to(resolve_data_file(rel))
    base = stub_server("--answer", "1")
    out = tmp_path / "run"
    env = {**os.environ, "GLOTBENCH_DATA": str(root), "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1", "COLUMNS": "250",
           "PYTHONPATH": os.pathsep.join(p for p in (str(REPO / "src"), os.environ.get("PYTHONPATH", "")) if p)}
    r = subprocess.run([sys.executable, "-m", "glotbench", "run", "--suite", "czech_bench", "--limit", "5", "--model",
                        "openai:stub", "--base-url", base, "-o", str(out), "--no-progress"],
                       capture_output=True, text=True, timeout=900, env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    res = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert res["skipped_tasks"] == {}
    assert len(res["tasks"]) == 27
    small = {"czech_bench.agree": 2, "czech_bench.squad": 2}  # the hand-made AGREE and SQuAD-cs fixtures
    for name, t in res["tasks"].items():
        assert t["n_items"] == small.get(name, 5), name
        assert t["n_scored"] + t["n_errors"] == t["n_items"] and t["n_errors"] == 0, name
    snli = res["tasks"]["czech_bench.snli"]["metrics"]
    assert snli["cb_parsed"]["value"] == 1.0  # the stub's "1" parses; rows 2 and 4 (label -1) are among the five scored
    # every number of the 27, recomputed from samples.jsonl by its oracle (the reference rules re-parse the texts)
    assert run_value_mismatches(out) == []
