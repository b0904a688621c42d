"""`glotbench tasks` remembers item counts per task and data file identity (tasks/item_counts.py):
the same listing from the cache, and a data file that changed counted again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[1] / "src")


def _task(folder: Path, n: int) -> Path:
    rows = [{"id": f"q{k}", "question": f"Q{k}?", "choices": ["a", "b"], "answer": "A"} for k in range(n)]
    (folder / "data.json").write_text(json.dumps(rows), encoding="utf-8")
    (folder / "counted.yaml").write_text("""name: t.counted
version: "1.0"
language: en
dataset: {format: json, splits: {test: data.json}, eval_split: test}
fields: {id: id, question: question, choices: choices, target: answer}
output_type: multiple_choice
prompt: {user: "{{ question }}"}
extractor: {name: choice}
scorer: label
metrics: [accuracy]
""", encoding="utf-8")
    return folder / "data.json"


def _count(tmp: Path) -> int:
    env = {**os.environ, "PYTHONPATH": SRC, "GLOTBENCH_TASKS_PATH": str(tmp / "tasks"),
           "GLOTBENCH_CACHE_DIR": str(tmp / "cache")}
    r = subprocess.run([sys.executable, "-m", "glotbench", "tasks", "t.counted", "--json"], env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    (row,) = json.loads(r.stdout)["tasks"]
    return row["items"]


def test_counts_are_remembered_and_a_changed_file_is_counted_again(tmp_path):
    (tmp_path / "tasks").mkdir()
    data = _task(tmp_path / "tasks", 12)
    assert _count(tmp_path) == 12
    cache = json.loads((tmp_path / "cache" / "task_counts.json").read_text())
    assert list(cache.values()) == [12]
    # the cached value is what the listing shows: a planted count proves the cache is read
    (tmp_path / "cache" / "task_counts.json").write_text(json.dumps({k: 99 for k in cache}))
    assert _count(tmp_path) == 99
    # the data file rewritten (one record fewer): its identity changed, it is counted again
    data.write_text(json.dumps(json.loads(data.read_text())[:11]), encoding="utf-8")
    assert _count(tmp_path) == 11
