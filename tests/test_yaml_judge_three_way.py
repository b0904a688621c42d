"""A YAML judge whose grades map to correct / incorrect / not attempted gets CO, NA, IN, CGA and F
(``judge_co`` ... ``judge_f``) like the built-in graders: run through the stub server as model and
judge in a fresh process, the values against the simple-evals aggregate restated in
tests/value_oracles.py over the stub's replies; the same task scored from a recorded file's grades
with no judge gives the same numbers. A ``three_way`` naming no grade is one line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from glotbench.errors import TaskSpecError
from glotbench.scoring.metrics import ScoredItem
from glotbench.tasks.spec import load_spec
from value_oracles import simpleqa_rates

SRC = str(Path(__file__).resolve().parents[1] / "src")

# Czech questions, the model's answers, the judge's verdict word
ITEMS = [
    ("c1", "Hlavní město Česka?", "Praha", "Praha", "SPRÁVNĚ"),
    ("c2", "Nejdelší česká řeka?", "Vltava", "Labe", "ŠPATNĚ"),
    ("c3", "Kdo napsal Babičku?", "Božena Němcová", "nevím", "NEVÍ"),
    ("c4", "Kolik krajů má Česko?", "14", "14", "SPRÁVNĚ"),
    ("c5", "Nejvyšší hora Česka?", "Sněžka", "Lysá hora", "ŠPATNĚ"),
    ("c6", "Kdo složil Mou vlast?", "Bedřich Smetana", "Smetana", "SPRÁVNĚ"),
    ("c7", "Rok vzniku Československa?", "1918", "1919", "hmm"),  # unreadable: excluded
]
THREE = {"SPRÁVNĚ": "CORRECT", "ŠPATNĚ": "INCORRECT", "NEVÍ": "NOT_ATTEMPTED"}
JUDGE = {
    "name": "cs_spravnost",
    "prompt": {"cs": {"user": "Otázka: {{ question }}\nSprávně: {{ reference }}\nOdpověď: {{ answer }}\nVerdikt?"}},
    "grades": {"SPRÁVNĚ": 1.0, "ŠPATNĚ": 0.0, "NEVÍ": 0.0},
    "three_way": THREE,
    "reply": {"regex": r"(\S+)"},
    "unreadable": "exclude",
}


def task_yaml(judge: dict) -> dict:
    return {"name": "cs_fakta", "version": "1", "language": "cs",
            "dataset": {"format": "jsonl", "splits": {"test": "qa.jsonl"}},
            "fields": {"id": "id", "question": "otazka", "target": "odpoved"},
            "prompt": {"user": "Odpověz krátce. {{ question }}"}, "generation": {"max_tokens": 32}, "judge": judge}


def glot(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "OPENAI_API_KEY": "x", "GLOTBENCH_DATA": str(cwd), "PYTHONPATH": SRC, "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "glotbench", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=180)


def expected() -> dict[str, float]:
    c = sum(THREE.get(v) == "CORRECT" for *_, v in ITEMS)
    i = sum(THREE.get(v) == "INCORRECT" for *_, v in ITEMS)
    n = sum(THREE.get(v) == "NOT_ATTEMPTED" for *_, v in ITEMS)
    return {f"judge_{k.lower()}": v for k, v in simpleqa_rates(c, i, n).items()}


@pytest.fixture()
def workdir(tmp_path):
    rows = [{"id": i, "otazka": q, "odpoved": gold} for i, q, gold, _, _ in ITEMS]
    (tmp_path / "qa.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    canned = [{"match": f"Odpověď: {ans}\n", "response": verdict} for _, _, _, ans, verdict in ITEMS]
    canned += [{"match": f"Odpověz krátce. {q}", "response": ans} for _, q, _, ans, _ in ITEMS]
    (tmp_path / "canned.jsonl").write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in canned),
                                           encoding="utf-8")
    (tmp_path / "cs_fakta.yaml").write_text(yaml.safe_dump(task_yaml(JUDGE), allow_unicode=True), encoding="utf-8")
    return tmp_path


def test_three_way_grades_give_co_na_in_cga_f_as_the_simpleqa_aggregate(workdir, stub_server):
    base = stub_server("--responses", str(workdir / "canned.jsonl"))
    done = glot(workdir, "run", "--model", "openai:m", "--base-url", base, "--judge", "openai:j", "--judge-base-url", base,
                "--tasks", str(workdir / "cs_fakta.yaml"), "-o", str(workdir / "run"), "--no-progress")
    assert done.returncode == 0, done.stderr[-2000:]
    got = json.loads((workdir / "run" / "results.json").read_text(encoding="utf-8"))["tasks"]["cs_fakta"]["metrics"]
    want = expected()
    assert want["judge_co"] == pytest.approx(3 / 6) and want["judge_cga"] == pytest.approx(3 / 5)
    for name, value in want.items():
        assert got[name]["value"] == pytest.approx(value, abs=1e-6), name
        assert got[name]["ci95"] is not None
    assert got["judge_unreadable_rate"]["value"] == pytest.approx(1 / 7, abs=1e-6)

    # the same verdicts as a released grade file: scored with no judge, the same CO .. F and intervals
    rows = [{"id": i, "answer": ans, "grade": THREE.get(v, "")} for i, _, _, ans, v in ITEMS]
    (workdir / "release.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                                           encoding="utf-8")
    done = glot(workdir, "run", "--model", "recorded:release.jsonl", "-M", "grade=grade",
                "--tasks", str(workdir / "cs_fakta.yaml"), "-o", str(workdir / "rec"), "--no-progress")
    assert done.returncode == 0, done.stderr[-2000:]
    rec = json.loads((workdir / "rec" / "results.json").read_text(encoding="utf-8"))["tasks"]["cs_fakta"]["metrics"]
    for name in want:
        assert rec[name] == got[name], name


def test_labels_named_as_the_three_grades_need_no_mapping():
    from glotbench.tasks.judging.declaration import JudgeDecl, three_way_map

    decl = JudgeDecl.model_validate({**JUDGE, "grades": {"correct": 1, "Not attempted": 0, "INCORRECT": 0},
                                     "three_way": None})
    assert three_way_map(decl) == {"correct": "CORRECT", "Not attempted": "NOT_ATTEMPTED", "INCORRECT": "INCORRECT"}
    assert three_way_map(JudgeDecl.model_validate({**JUDGE, "three_way": None})) is None


@pytest.mark.parametrize("three_way,field,msg", [
    ({"SPRÁVNĚ": "CORRECT", "ŠPATNĚ": "INCORRECT", "NEVI": "NOT_ATTEMPTED"}, "judge.three_way.NEVI", "unknown grade"),
    ({"SPRÁVNĚ": "CORRECT", "ŠPATNĚ": "INCORRECT"}, "judge.three_way", "'NEVÍ' is not mapped"),
])
def test_bad_three_way_is_one_line_naming_file_and_field(tmp_path, three_way, field, msg):
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump(task_yaml({**JUDGE, "three_way": three_way}), allow_unicode=True), encoding="utf-8")
    with pytest.raises(TaskSpecError) as err:
        load_spec(path)
    assert f"field '{field}'" in str(err.value) and msg in str(err.value) and str(path) in str(err.value)


def test_an_unset_three_way_keeps_the_task_fingerprint(tmp_path):
    """A judge declaration without ``three_way`` hashes as before the field existed."""
    path = tmp_path / "t.yaml"
    judge = {k: v for k, v in JUDGE.items() if k != "three_way"}
    path.write_text(yaml.safe_dump(task_yaml(judge), allow_unicode=True), encoding="utf-8")
    spec = load_spec(path)
    assert "three_way" not in json.dumps(spec.fingerprint_payload())
    _ = ScoredItem  # the oracle's container (imported for the reader: value_oracles restates the aggregate)
