"""Task files, dataset records and task names: bad input gets one clear line naming the culprit."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from glotbench.errors import DataError, TaskSpecError, UnknownTaskError
from glotbench.tasks.registry import resolve
from glotbench.tasks.spec import load_spec

GOOD = """\
name: demo.mc
version: "1"
language: hu
dataset:
  format: jsonl
  splits: {test: DATA}
fields:
  question: q
  choices: "opts[*]"
  target: gold
output_type: multiple_choice
prompt:
  user: "{{ question }}\\n{{ choices_block }}"
extractor: {name: choice}
"""


def write_task(tmp_path: Path, text: str, records: list[dict]) -> Path:
    data = tmp_path / "demo.jsonl"
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    spec = tmp_path / "demo.yaml"
    spec.write_text(text.replace("DATA", str(data)), encoding="utf-8")
    return spec


def test_good_task_renders_native_prompt(tmp_path):
    spec = write_task(tmp_path, GOOD, [{"q": "Mi Magyarország fővárosa?", "opts": ["Bécs", "Budapest"], "gold": "B"}])
    task = resolve([str(spec)])[0]
    s = task.samples()[0]
    assert s.labels == ["A", "B"] and s.target == "B"
    assert task.chat_messages(s)[-1]["content"] == "Mi Magyarország fővárosa?\nA. Bécs\nB. Budapest"


def test_broken_yaml_names_file_and_line(tmp_path):
    p = tmp_path / "broken.yaml"
    p.write_text("name: x\nversion: [1\nlanguage: hu\n", encoding="utf-8")
    with pytest.raises(TaskSpecError) as e:
        load_spec(p)
    msg = str(e.value)
    assert str(p) in msg and "line" in msg and "\n" not in msg


def test_unknown_field_is_named(tmp_path):
    p = write_task(tmp_path, GOOD.replace("output_type:", "outptu_type:"), [])
    with pytest.raises(TaskSpecError, match=r"field 'outptu_type': unknown field"):
        load_spec(p)


def test_missing_required_field_is_named(tmp_path):
    p = write_task(tmp_path, GOOD.replace('version: "1"\n', ""), [])
    with pytest.raises(TaskSpecError, match=r"field 'version': Field required"):
        load_spec(p)


def test_record_missing_field_names_file_record_and_field(tmp_path):
    spec = write_task(tmp_path, GOOD, [
        {"q": "a", "opts": ["x", "y"], "gold": "A"},
        {"q": "b", "opts": ["x", "y"]},
    ])
    task = resolve([str(spec)])[0]
    with pytest.raises(DataError) as e:
        task.samples()
    msg = str(e.value)
    assert "demo.jsonl" in msg and "record 1" in msg and "'gold'" in msg


def test_malformed_jsonl_line_is_named(tmp_path):
    spec = write_task(tmp_path, GOOD, [{"q": "a", "opts": ["x"], "gold": "A"}])
    with (tmp_path / "demo.jsonl").open("a") as fh:
        fh.write("{not json\n")
    with pytest.raises(DataError, match=r"demo.jsonl: line 2: invalid JSON"):
        resolve([str(spec)])[0].samples()


def test_gold_outside_labels_is_refused(tmp_path):
    spec = write_task(tmp_path, GOOD, [{"q": "a", "opts": ["x", "y"], "gold": "E"}])
    with pytest.raises(DataError, match=r"record 0: field 'gold': answer 'E' is not one of the labels"):
        resolve([str(spec)])[0].samples()


def test_unknown_task_name():
    with pytest.raises(UnknownTaskError, match=r"unknown task or suite 'mm_eval.syntx'"):
        resolve(["mm_eval.syntx"])


def test_missing_data_file_is_named(tmp_path):
    spec = tmp_path / "t.yaml"
    spec.write_text(GOOD.replace("DATA", "nowhere/missing.jsonl"), encoding="utf-8")
    with pytest.raises(DataError, match=r"task demo.mc: data file nowhere/missing.jsonl not found"):
        resolve([str(spec)])[0].samples()


def test_cli_unknown_task_is_one_line_error():
    p = subprocess.run([sys.executable, "-m", "glotbench", "run", "--tasks", "nope.task", "--no-progress"],
                       capture_output=True, text=True)
    assert p.returncode == 2
    assert p.stderr.strip().count("\n") == 0
    assert "unknown task or suite 'nope.task'" in p.stderr


def test_mm_eval_tasks_load_real_data(data_root):
    tasks = {t.name: t for t in resolve(["mm_eval"])}
    assert set(tasks) == {"mm_eval.syntax", "mm_eval.semantics", "mm_eval.knowledge", "mm_eval.reasoning"}
    counts = {n: len(t.samples()) for n, t in tasks.items()}
    assert counts == {"mm_eval.syntax": 569, "mm_eval.semantics": 677, "mm_eval.knowledge": 344, "mm_eval.reasoning": 250}
    syn = tasks["mm_eval.syntax"].samples(limit=1)[0]
    msgs = tasks["mm_eval.syntax"].chat_messages(syn)
    assert msgs[0] == {"role": "system", "content": "You are an AI assistant proficient in Mongolian."}
    assert "C. сайн байна уу?" in msgs[1]["content"]


def test_num_fewshot_flag_adds_shots_even_when_task_default_is_zero(tmp_path):
    recs = [{"q": f"kérdés {i}", "opts": ["x", "y"], "gold": "AB"[i % 2]} for i in range(6)]
    text = GOOD.replace("output_type:", "fewshot: {split: test, n: 0, seed: 7}\noutput_type:")
    task = resolve([str(write_task(tmp_path, text, recs))])[0]
    s = task.samples()[0]
    assert len(task.chat_messages(s)) == 1
    msgs = task.chat_messages(s, num_fewshot=2)
    assert [m["role"] for m in msgs] == ["user", "assistant", "user", "assistant", "user"]
    assert all("kérdés 0" not in m["content"] for m in msgs[:-1])  # never the item itself
    assert task.spec.prompt_hash({"num_fewshot": 2}) != task.spec.prompt_hash()
    assert task.spec.prompt_hash({"num_fewshot": None}) == task.spec.prompt_hash()
