"""Field paths: |json / |python-literal cell decoders, and a path that matches no record is a load-time error."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from glotbench.data.fields import FieldDecodeError, MissingField, get_path, unmatched_paths
from glotbench.errors import DataError, TaskSpecError
from glotbench.tasks.registry import resolve

# The SimpleQA CSV (openai/simple-evals) stores metadata as a Python dict literal in one cell.
SIMPLEQA_ROWS = [
    {"metadata": "{'topic': 'Science and technology', 'answer_type': 'Person', 'urls': ['https://a']}",
     "problem": "Who received the IEEE Frank Rosenblatt Award in 2010?", "answer": "Michio Sugeno"},
    {"metadata": "{'topic': 'Art', 'answer_type': 'Date', 'urls': []}",
     "problem": "In which year was the painting finished?", "answer": "1889"},
]

TASK = """\
name: demo.simpleqa
version: "1"
language: en
dataset:
  format: csv
  splits: {test: DATA}
fields:
  question: problem
  target: answer
  topic: TOPIC
output_type: generate
prompt:
  user: "{{ question }}"
extractor: {name: text}
scorer: exact_match
metrics: [exact_match]
slice_by: [topic]
"""


def _write(tmp_path: Path, topic_path: str, rows=SIMPLEQA_ROWS) -> Path:
    data = tmp_path / "simple_qa_test_set.csv"
    with data.open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=["metadata", "problem", "answer"])
        w.writeheader()
        w.writerows(rows)
    spec = tmp_path / "demo.yaml"
    spec.write_text(TASK.replace("DATA", str(data)).replace("TOPIC", topic_path), encoding="utf-8")
    return spec


def test_python_literal_and_json_decoders():
    rec = {"metadata": SIMPLEQA_ROWS[0]["metadata"], "meta": json.dumps({"level": 3, "tags": ["x", "y"]})}
    assert get_path(rec, "metadata|python-literal.topic") == "Science and technology"
    assert get_path(rec, "metadata|python-literal.urls[0]") == "https://a"
    assert get_path(rec, "meta|json.level") == 3
    assert get_path(rec, "meta|json.tags[*]") == ["x", "y"]
    assert get_path({"meta": {"level": 2}}, "meta|json.level") == 2  # already structured: passes through
    with pytest.raises(MissingField):
        get_path(rec, "metadata|python-literal.topik")
    with pytest.raises(FieldDecodeError, match=r"field 'meta\|python-literal.x': cell .* is not python-literal"):
        get_path({"meta": "{not a dict"}, "meta|python-literal.x")
    with pytest.raises(DataError, match="unknown decoder '|yaml'"):
        get_path(rec, "meta|yaml.level")
    # Without the decoder the path cannot see inside the string: that is what used to give None silently.
    with pytest.raises(MissingField):
        get_path(rec, "metadata.topic")


def test_unmatched_paths():
    recs = [{"a": 1}, {"a": 2, "b": {"c": 3}}]
    assert unmatched_paths({"x": "a", "y": "b.c", "z": "b.d", "k": "=lit"}, recs) == {"z": "b.d"}
    assert unmatched_paths({"z": "nope"}, []) == {}


def test_task_reaches_into_a_stringified_dict(tmp_path):
    task = resolve([str(_write(tmp_path, "metadata|python-literal.topic"))])[0]
    samples = task.samples()
    assert [s.vars["topic"] for s in samples] == ["Science and technology", "Art"]
    assert samples[1].metadata == {"topic": "Art"}


@pytest.mark.parametrize("bad", ["topik", "metadata.topic"])
def test_a_path_matching_no_record_fails_at_load_naming_the_field(tmp_path, bad):
    task = resolve([str(_write(tmp_path, bad))])[0]
    with pytest.raises(TaskSpecError) as err:
        task.samples()
    msg = str(err.value)
    assert "field 'topic'" in msg and repr(bad) in msg and "matches nothing" in msg and "\n" not in msg


def test_with_a_limit_the_unread_records_are_looked_at_too(tmp_path):
    data = tmp_path / "d.jsonl"
    rows = [{"q": "a", "a": "1"}, {"q": "b", "a": "2"}, {"q": "c", "a": "3", "extra": {"lvl": 5}}]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    spec = tmp_path / "t.yaml"
    spec.write_text(TASK.replace("format: csv", "format: jsonl").replace("DATA", str(data)).replace("problem", "q")
                    .replace("target: answer", "target: a").replace("TOPIC", "extra.lvl"), encoding="utf-8")
    got = resolve([str(spec)])[0].samples(limit=1)  # only record 2 has extra.lvl: not a typo
    assert len(got) == 1 and got[0].vars["topic"] is None


def test_a_cell_that_does_not_decode_names_file_record_and_field(tmp_path):
    rows = [SIMPLEQA_ROWS[0], {**SIMPLEQA_ROWS[1], "metadata": "{'topic': 'Art'"}]
    task = resolve([str(_write(tmp_path, "metadata|python-literal.topic", rows))])[0]
    with pytest.raises(DataError, match=r"simple_qa_test_set.csv: record 1: field 'metadata\|python-literal.topic'"):
        task.samples()


def test_cli_reports_the_typo_in_one_line(tmp_path):
    spec = _write(tmp_path, "topik")
    out = subprocess.run([sys.executable, "-m", "glotbench", "run", "--model", "openai:s", "--base-url",
                          "http://127.0.0.1:9/v1", "--tasks", str(spec), "-o", str(tmp_path / "r"), "--no-progress"],
                         capture_output=True, text=True, env={**os.environ, "COLUMNS": "300"})
    assert out.returncode != 0
    assert "field 'topic'" in out.stderr and "'topik'" in out.stderr, out.stderr[-2000:]
