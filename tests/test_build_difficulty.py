"""`build filter --difficulty` through the normal engine (stub servers as the models and judge),
and `build task` writing a SimpleQA-style YAML that `glotbench run --judge` grades."""

from __future__ import annotations

import json

import yaml

from glotbench.build.difficulty import parse_setting, reply_matches
from test_build_qa import REPO, cli, lines

ITEMS = [
    {"id": "p2-q0", "passage_id": "p2", "language": "cs", "question": "Kolik metrů měří Sněžka?", "answer": "1603"},
    {"id": "p3-q0", "passage_id": "p3", "language": "cs", "question": "Kde pramení Vltava?", "answer": "Na Šumavě"},
]


def write(tmp_path, items=ITEMS):
    p = tmp_path / "in.jsonl"
    p.write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items), encoding="utf-8")
    return p


def test_setting_and_match_rules():
    assert parse_setting("embedded;max_tokens=16;temperature=0.7") == ("embedded", {"max_tokens": 16, "temperature": 0.7})
    assert parse_setting("openai:gpt-4o") == ("openai:gpt-4o", {})
    assert reply_matches("Sněžka měří 1603 metrů.", "1603")
    assert reply_matches("Pramení NA ŠUMAVĚ, u hranic.", "Na Šumavě")
    assert not reply_matches("16030 metrů", "1603")
    assert not reply_matches("anything", "")


def test_difficulty_without_judge_keeps_items_few_settings_answer(stub_server, tmp_path):
    resp = tmp_path / "r.jsonl"
    resp.write_text(json.dumps({"match": "Sněžka", "response": "Sněžka měří 1603 metrů."}, ensure_ascii=False) + "\n",
                    encoding="utf-8")
    base = stub_server("--answer", "Nevím.", "--responses", str(resp))
    src = write(tmp_path)
    out = cli("filter", "--difficulty", "-i", str(src), "-o", "hard.jsonl", "-m", "openai:stub", "-m", "openai:stub;max_tokens=8",
              "--base-url", base, "--max-correct", "1", "--dry-run", cwd=tmp_path)
    assert "items 2 · settings 2 · calls at most 4" in out.stdout
    out = cli("filter", "--difficulty", "-i", str(src), "-o", "hard.jsonl", "-m", "openai:stub", "-m", "openai:stub;max_tokens=8",
              "--base-url", base, "--max-correct", "1", cwd=tmp_path)
    assert "kept 1 · dropped 1" in out.stdout
    (kept,) = lines(tmp_path / "hard.jsonl")
    assert kept["id"] == "p3-q0" and kept["difficulty"]["n_correct"] == 0
    (d,) = lines(tmp_path / "hard.dropped.jsonl")
    assert d["reason"] == "2 of 2 settings answered correctly (max 1)"
    assert d["difficulty"]["correct"] == {"openai:stub": True, "openai:stub;max_tokens=8": True}
    runs = d["provenance"][-1]["runs"]
    assert len(runs) == 2 and all((tmp_path / r / "results.json").exists() for r in runs)


def test_difficulty_with_judge_and_final_task_graded(stub_server, tmp_path, data_root):
    model = stub_server("--answer", "1603")
    judge = stub_server("--answer", "A")  # simple-evals grader: A = CORRECT
    src = write(tmp_path)
    out = cli("filter", "--difficulty", "-i", str(src), "-o", "hard.jsonl", "-m", "openai:stub", "--base-url", model,
              "--judge", "openai:stub", "--judge-base-url", judge, "--max-correct", "0", cwd=tmp_path)
    assert "kept 0 · dropped 2" in out.stdout
    d = lines(tmp_path / "hard.dropped.jsonl")
    assert d[0]["difficulty"]["graded_by"] == "judge openai:stub"

    out = cli("task", "-i", str(src), "-o", "task", "--name", "cs_built_qa", cwd=tmp_path)
    spec = yaml.safe_load((tmp_path / "task" / "task.yaml").read_text(encoding="utf-8"))
    assert spec["task_class"] == "simpleqa" and spec["language"] == "cs"
    assert spec["options"]["grader"] == "chinese_simpleqa_en" and spec["fields"]["target"] == "answer"
    import os
    import subprocess
    import sys
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    p = subprocess.run([sys.executable, "-m", "glotbench", "run", "-t", str(tmp_path / "task" / "task.yaml"), "-m", "openai:stub",
                        "--base-url", model, "--judge", "openai:stub", "--judge-base-url", judge, "-o", "run", "--no-progress"],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    res = json.loads((tmp_path / "run" / "results.json").read_text(encoding="utf-8"))
    t = res["tasks"]["cs_built_qa"]
    assert t["n_scored"] == 2
    assert t["metrics"]["factuality_co"]["value"] == 1.0
