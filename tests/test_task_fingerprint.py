"""A task's fingerprint is its whole spec minus a short deny-list, plus the content of what the spec
points at (data, language pack, user code): editing any other field of a task YAML makes the next
run recompute. The walk below visits every field of the task schema, nested ones included."""

from __future__ import annotations

import json
import sys
import types
import typing
from pathlib import Path

import pytest
import yaml
from pydantic import BaseModel

from glotbench.engine.fingerprint import task_fingerprint
from glotbench.settings import RunSettings
from glotbench.tasks.registry import make_task
from glotbench.tasks.spec import TaskSpec, load_spec

# the fields that cannot change a number (issue 37): the only ones a fingerprint leaves out
# prompts: the other prompts a task declares (run --prompt-variants) do not change its own prompt's numbers
DENY = {"description", "source", "order", "suites", "prompts"}

USER_CODE = '''
from glotbench.tasks.task import Task


def keep(rec):
    return rec


def keep2(rec):
    return dict(rec)


def score(extracted, target, *, sample=None, pack=None, **options):
    return extracted, {"correct": float(str(extracted) == str(target))}


def score2(extracted, target, *, sample=None, pack=None, **options):
    return extracted, {"correct": 1.0}


class MyTask(Task):
    pass
'''

BASE = {
    "name": "t.fp", "version": "1", "language": "en", "description": "a task",
    "source": {"name": "s", "url": "https://example.org", "paper": "p", "license": "mit", "revision": "r1"},
    "suites": ["s1"], "order": 5,
    "dataset": {"format": "json", "splits": {"test": "data.json", "dev": "dev.json"}, "eval_split": "test",
                "encoding": "utf-8", "record_fn": "fpmod:keep", "hf": {"id": "org/ds", "revision": "abc"}},
    "fields": {"id": "id", "question": "question", "choices": "choices", "target": "answer"},
    "output_type": "multiple_choice",
    "prompt": {"user": "{{ question }}\n{{ choices_block }}"},
    "fewshot": {"split": "dev", "n": 1},
    "extractor": {"name": "choice"},
    "scorer": "fpmod:score",
    "metrics": ["accuracy"],
}

# Edits a generic rule cannot make (the result would not load, or names nothing that exists).
EDITS = {
    "language": "hu",
    "dataset.format": "jsonl",
    "dataset.eval_split": "dev",
    "dataset.record_fn": "fpmod:keep2",
    "fewshot.split": "test",
    "extractor.name": "text",
    "scorer": "fpmod:score2",
    "prompts": [{"name": "v", "user": "{{ question }}?"}],
    "metrics": ["accuracy", "macro_f1"],
    "task_class": "fpmod:MyTask",
    # one leaf: a declaration's own fields are walked in tests/test_yaml_judge.py
    "judge": {"name": "j", "prompt": {"en": {"user": "{{ answer }}"}}, "grades": {"OK": 1, "NO": 0},
              "reply": {"regex": "(OK|NO)"}, "unreadable": "exclude"},
    "source.fetch": [{"kind": "github", "repo": "o/r", "revision": "a" * 40,
                      "files": [{"path": "data.json"}, {"path": "dev.json"}]}],
}


def _edit_value(path: str, annotation: typing.Any, value: typing.Any) -> typing.Any:
    if path in EDITS:
        return EDITS[path]
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Literal:
        return next(a for a in args if a != value)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in args if a is not type(None)]
        if value is None:
            return _edit_value(path, inner[0], _empty(inner[0]))
        return _edit_value(path, inner[0], value)
    base = origin or annotation
    if base is str:
        return f"{value}x"
    if base is bool:
        return not value
    if base is int:
        return value + 1
    if base is float:
        return value + 0.5
    if base is list:
        return [*value, "x"]
    if base is dict:
        return {**value, "x": "y"}
    raise AssertionError(f"{path}: no edit rule for {annotation!r}: add one to this test")


def _empty(annotation: typing.Any) -> typing.Any:
    base = typing.get_origin(annotation) or annotation
    return {str: "", int: 0, float: 0.0, list: [], dict: {}}.get(base)


def _leaves(model: type[BaseModel], prefix: str = "") -> list[tuple[str, typing.Any]]:
    """(dotted path, annotation) of every field of ``model``, nested models walked into."""
    out = []
    for name, info in model.model_fields.items():
        path = f"{prefix}{name}"
        ann = info.annotation
        inner = [a for a in typing.get_args(ann) if a is not type(None)] or [ann]
        if typing.get_origin(ann) in (list, dict) or name == "judge":  # a list of models (source.fetch) is one leaf
            inner = []
        sub = next((a for a in inner if isinstance(a, type) and issubclass(a, BaseModel)), None)
        out += _leaves(sub, path + ".") if sub is not None else [(path, ann)]
    return out


def _get(d: dict, path: str):
    for k in path.split("."):
        d = d[k]
    return d


def _set(d: dict, path: str, value) -> None:
    *head, last = path.split(".")
    for k in head:
        d = d[k]
    d[last] = value


@pytest.fixture()
def task_dir(tmp_path, monkeypatch):
    d = tmp_path / "tdir"
    d.mkdir()
    rows = [{"id": str(k), "question": f"Q{k}?", "choices": ["one", "two", "three", "four"], "answer": "ABCD"[k % 4]}
            for k in range(4)]
    (d / "data.json").write_text(json.dumps(rows), encoding="utf-8")
    (d / "dev.json").write_text(json.dumps(rows[:2]), encoding="utf-8")
    (d / "fpmod.py").write_text(USER_CODE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(d))
    sys.modules.pop("fpmod", None)  # another test's copy
    yield d
    sys.modules.pop("fpmod", None)


def _fingerprint(d: Path, spec: dict) -> dict:
    path = d / "task.yaml"
    path.write_text(yaml.safe_dump(spec, allow_unicode=True), encoding="utf-8")
    task = make_task(load_spec(path), path)
    return task_fingerprint(task, RunSettings(), {"model_id": "m"})


def test_every_field_of_the_task_schema_is_in_the_fingerprint_but_the_deny_list(task_dir):
    base_spec = load_spec_dict(task_dir)
    base = _fingerprint(task_dir, base_spec)["id"]
    leaves = _leaves(TaskSpec)
    assert len(leaves) >= 40  # the walk reached the nested models (dataset, dataset.hf, prompt, ...)
    changed, unchanged = [], []
    for path, ann in leaves:
        spec = json.loads(json.dumps(base_spec))
        _set(spec, path, _edit_value(path, ann, _get(spec, path)))
        if path == "prompt.turns":  # turns replace prompt.user (docs/multi-turn.md): the user turn goes
            spec["prompt"]["turns"] = [base_spec["prompt"]["user"]]
            spec["prompt"]["user"] = "{{ input }}"
        assert _get(spec, path) != _get(base_spec, path), path
        (changed if _fingerprint(task_dir, spec)["id"] != base else unchanged).append(path)
    exempt = [p for p, _ in leaves if p.split(".")[0] in DENY]
    assert sorted(unchanged) == sorted(exempt)
    assert {"language", "dataset.record_fn", "default_labels", "slice_by", "counterpart"} <= set(changed)

    from glotbench.tasks.spec import FINGERPRINT_EXEMPT

    assert set(FINGERPRINT_EXEMPT) == DENY


def load_spec_dict(d: Path) -> dict:
    """The base YAML with every default written out, so the walk edits a value that is there."""
    path = d / "task.yaml"
    path.write_text(yaml.safe_dump(BASE), encoding="utf-8")
    return load_spec(path).model_dump(mode="json")


def test_user_code_language_pack_and_data_are_in_the_fingerprint(task_dir):
    spec = load_spec_dict(task_dir)
    base = _fingerprint(task_dir, spec)
    code = task_dir / "fpmod.py"
    code.write_text(code.read_text() + "\nCONSTANT = 2\n", encoding="utf-8")  # the record_fn's module changes
    after_code = _fingerprint(task_dir, spec)
    assert after_code["code"] != base["code"] and after_code["id"] != base["id"]

    (task_dir / "data.json").write_text((task_dir / "data.json").read_text().replace("Q1?", "Q1 ?"), encoding="utf-8")
    after_data = _fingerprint(task_dir, spec)
    assert after_data["data"] != after_code["data"] and after_data["id"] != after_code["id"]

    path = task_dir / "task.yaml"
    task = make_task(load_spec(path), path)
    fp = task_fingerprint(task, RunSettings(), {"model_id": "m"})
    task.__dict__["pack"] = task.pack.model_copy(update={"answer_words": ("the answer is", "answer")})
    assert task_fingerprint(task, RunSettings(), {"model_id": "m"})["pack"] != fp["pack"]


@pytest.mark.parametrize("field,ref", [("scorer", "fpother:score"), ("task_class", "fpother:OtherTask"),
                                       ("extractor.name", "fpother:extract")])
def test_the_source_of_each_user_code_reference_is_in_the_fingerprint(task_dir, field, ref):
    """A scorer, task class or extractor in a module of its own: editing that module re-fingerprints."""
    other = task_dir / "fpother.py"
    other.write_text(USER_CODE.replace("class MyTask", "class OtherTask")
                     + "\n\ndef extract(text, *, sample, pack, **options):\n    return text\n", encoding="utf-8")
    sys.modules.pop("fpother", None)
    try:
        spec = load_spec_dict(task_dir)
        _set(spec, field, ref)
        before = _fingerprint(task_dir, spec)
        other.write_text(other.read_text() + "\n# a comment is an edit too\n", encoding="utf-8")
        after = _fingerprint(task_dir, spec)
        assert after["code"] != before["code"] and after["id"] != before["id"]
    finally:
        sys.modules.pop("fpother", None)
