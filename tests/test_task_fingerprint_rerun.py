"""Issue 37 finding 2, end to end: a task YAML edited between two runs into the same ``-o`` directory
is recomputed, never reported with the old numbers (the issue saw 0.500 where a fresh directory
gives 0.750). Each rerun is compared with a fresh directory's run of the same file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
REUSED = "results re-read, not recomputed"

USER_CODE = '''
def keep(rec):
    return rec


def third_is_b(rec):
    """Rewrites one gold: item 3 becomes B."""
    return {**rec, "answer": "B"} if rec["id"] == "3" else rec
'''

SPEC = {
    "name": "t.edit", "version": "1", "language": "hu",
    "dataset": {"format": "json", "splits": {"test": "data.json"}, "eval_split": "test", "record_fn": "editmod:keep"},
    "fields": {"id": "id", "question": "question", "choices": "choices", "target": "answer", "level": "level"},
    "output_type": "multiple_choice",
    "prompt": {"user": "{{ question }}\n{{ choices_block }}"},
    "generation": {"max_tokens": 4},
    "extractor": {"name": "choice"},
    "scorer": "label",
    "metrics": ["accuracy"],
}


def _run(spec_path: Path, base: str, out: Path) -> tuple[dict, str]:
    env = {**os.environ, "OPENAI_API_KEY": "x",
           "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(spec_path.parent), os.environ.get("PYTHONPATH", "")])}
    p = subprocess.run([sys.executable, "-m", "glotbench", "run", "-m", "openai:stub", "--base-url", base,
                        "-t", str(spec_path), "-o", str(out), "--no-progress", "--bootstrap", "20"],
                       capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stderr
    return json.loads((out / "results.json").read_text(encoding="utf-8"))["tasks"]["t.edit"], p.stderr


def test_an_edited_task_yaml_is_recomputed_in_the_same_output_directory(tmp_path, stub_server):
    base = stub_server("--answer", "A helyes válasz: B")  # B to the Hungarian pack, unparseable to the English one
    d = tmp_path / "task"
    d.mkdir()
    rows = [{"id": str(k), "question": f"Q{k}?", "choices": ["one", "two", "three", "four"],
             "answer": "BBAC"[k], "level": f"L{k % 2}"} for k in range(4)]
    (d / "data.json").write_text(json.dumps(rows), encoding="utf-8")
    (d / "editmod.py").write_text(USER_CODE, encoding="utf-8")
    spec_path, out = d / "edit.yaml", tmp_path / "run"
    spec = json.loads(json.dumps(SPEC))

    def write() -> None:
        spec_path.write_text(yaml.safe_dump(spec), encoding="utf-8")

    write()
    first, _ = _run(spec_path, base, out)
    assert first["metrics"]["accuracy"]["value"] == 0.5  # answer B; golds B B A C

    edits = [
        ("dataset.record_fn", lambda s: s["dataset"].__setitem__("record_fn", "editmod:third_is_b")),  # golds B B A B
        ("default_labels", lambda s: s.__setitem__("default_labels", ["C", "B", "A", "D"])),
        ("slice_by", lambda s: s.__setitem__("slice_by", ["level"])),
        ("language", lambda s: s.__setitem__("language", "en")),
    ]
    expected = {"dataset.record_fn": 0.75, "language": 0.0}  # the old runs said 0.500 and 0.750
    previous = first
    for k, (field, edit) in enumerate(edits):
        edit(spec)
        write()
        again, stderr = _run(spec_path, base, out)
        fresh, _ = _run(spec_path, base, tmp_path / f"fresh{k}")
        assert again["metrics"]["accuracy"]["value"] == fresh["metrics"]["accuracy"]["value"], field
        if field in expected:
            assert again["metrics"]["accuracy"]["value"] == expected[field], field
        assert again["language"] == fresh["language"] and again["slices"].keys() == fresh["slices"].keys(), field
        assert again["fingerprint"]["id"] != previous["fingerprint"]["id"], field
        assert REUSED not in stderr, field
        previous = again
    assert previous["language"] == "en" and set(previous["slices"]) == {"level"}
    assert previous["slices"]["level"]["L0"]["n"] == 2
