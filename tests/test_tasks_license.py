"""``glotbench tasks`` shows each task's data licence (the task file's ``source.license``), in the
plain and the JSON output (fresh processes)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]


def _tasks(*args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    done = subprocess.run([sys.executable, "-m", "glotbench", "tasks", *args], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _license(rel: str) -> str:
    bench, _, name = rel.partition("/")
    path = REPO / "src" / "glotbench" / "benchmarks" / bench / "tasks" / name
    return yaml.safe_load(path.read_text(encoding="utf-8"))["source"]["license"]


def test_tasks_show_the_license():
    lines = _tasks("hulu.c*", "--plain").splitlines()
    header = lines[0].split("\t")
    assert header[-1] == "license"
    rows = {line.split("\t")[0]: dict(zip(header, line.split("\t"))) for line in lines[1:] if "\t" in line}
    assert rows["hulu.cola"]["license"] == _license("hulu/cola.yaml") == "CC BY-SA 4.0"
    assert rows["hulu.copa"]["license"] == _license("hulu/copa.yaml")
    got = json.loads(_tasks("mm_eval.*", "--json"))
    mm = {r["task"]: r["license"] for r in got["tasks"]}
    assert mm["mm_eval.knowledge"] == _license("mm_eval/knowledge.yaml")
    assert "none published" in mm["mm_eval.knowledge"]
