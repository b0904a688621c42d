"""The ``text_comet`` scorer (glotbench.scoring.comet), run in a fresh process against the stub server.

Refusals are real: without a checkpoint, and without the unbabel-comet package (not installed in this
test environment), a run stops in one line naming the task file before any request. unbabel-comet itself
is not here, so the values are checked with a stand-in ``comet`` module put on the path on purpose: it
scores each (src, mt, ref) triple with a fixed formula and logs what it was given, which checks what
glotbench hands COMET (the source field, the answer, the reference, the checkpoint path) and that the
metric is the mean of the segment scores (COMET's system_score). It does not check COMET's own numbers."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
import yaml

SRC = str(Path(__file__).resolve().parents[1] / "src")
ROWS = [("1", "The cat sleeps.", "Kočka spí."), ("2", "Where is the station?", "Kde je nádraží?"),
        ("3", "I like tea.", "Mám rád čaj.")]
ANSWERS = {"1": "Kočka spí.", "2": "Kde je stanice?", "3": "Čaj mám rád moc."}

STAND_IN = '''
import json, os


class _Out:
    def __init__(self, scores):
        self.scores = scores
        self.system_score = sum(scores) / len(scores)


class _Model:
    def __init__(self, path):
        self.path = path

    def predict(self, samples, batch_size=8, gpus=1, progress_bar=True):
        with open(os.environ["COMET_STAND_IN_LOG"], "a", encoding="utf-8") as fh:
            for s in samples:
                fh.write(json.dumps({**s, "checkpoint": self.path, "gpus": gpus}, ensure_ascii=False) + "\\n")
        return _Out([score(s["src"], s["mt"], s["ref"]) for s in samples])


def score(src, mt, ref):
    return (len(set(mt.split()) & set(ref.split())) + 1) / (len(ref.split()) + len(src.split()) + 1)


def load_from_checkpoint(path):
    return _Model(path)
'''


def stand_in_score(src: str, mt: str, ref: str) -> float:
    return (len(set(mt.split()) & set(ref.split())) + 1) / (len(ref.split()) + len(src.split()) + 1)


@pytest.fixture()
def work(tmp_path):
    (tmp_path / "mt.jsonl").write_text("".join(json.dumps({"id": i, "en": en, "cs": cs}, ensure_ascii=False) + "\n"
                                               for i, en, cs in ROWS), encoding="utf-8")
    (tmp_path / "answers.jsonl").write_text("".join(json.dumps({"match": en, "response": ANSWERS[i]}, ensure_ascii=False)
                                                    + "\n" for i, en, _ in ROWS), encoding="utf-8")
    return tmp_path


def task_file(d: Path, options: dict) -> Path:
    spec = {"name": "my.mt_cs", "version": "1", "language": "cs",
            "dataset": {"format": "jsonl", "splits": {"test": "mt.jsonl"}},
            "fields": {"id": "id", "source": "en", "target": "cs"},
            "prompt": {"user": "Přelož do češtiny: {{ source }}"},
            "scorer": "text_comet", "scorer_options": options, "metrics": ["chrf", "comet"]}
    path = d / "mt_cs.yaml"
    path.write_text(yaml.safe_dump(spec, allow_unicode=True), encoding="utf-8")
    return path


def glot(cwd: Path, *args: str, pythonpath: str = SRC, **env) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if k != "GLOTBENCH_COMET_MODEL"}
    environ.update({"OPENAI_API_KEY": "x", "PYTHONPATH": pythonpath, "COLUMNS": "200", **env})
    return subprocess.run([sys.executable, "-m", "glotbench", *args], cwd=cwd, env=environ, capture_output=True,
                          text=True, timeout=180)


def one_line(done: subprocess.CompletedProcess) -> str:
    lines = [x for x in done.stderr.splitlines() if x.strip()]
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    return lines[0]


def sent(base: str) -> list:
    return httpx.get(base.replace("/v1", "/_log"), timeout=10).json()["log"]


def test_without_a_checkpoint_one_line_and_no_request(work, stub_server):
    base = stub_server("--answer", "x")
    path = task_file(work, {})
    line = one_line(glot(work, "run", "-m", "openai:stub", "--base-url", base, "-t", str(path), "-o", str(work / "run")))
    assert str(path) in line and "name a local COMET checkpoint" in line and "GLOTBENCH_COMET_MODEL" in line
    missing = work / "nowhere" / "model.ckpt"
    line = one_line(glot(work, "run", "-m", "openai:stub", "--base-url", base, "-t", str(task_file(work, {})),
                         "-o", str(work / "run"), GLOTBENCH_COMET_MODEL=str(missing)))
    assert str(missing) in line and "does not download" in line
    assert sent(base) == []


@pytest.mark.skipif(importlib.util.find_spec("comet") is not None, reason="unbabel-comet is installed here")
def test_without_unbabel_comet_one_line_naming_the_extra_and_no_request(work, stub_server):
    base = stub_server("--answer", "x")
    ckpt = work / "wmt22" / "checkpoints" / "model.ckpt"
    ckpt.parent.mkdir(parents=True)
    ckpt.write_bytes(b"not read")
    path = task_file(work, {"comet_model": str(work / "wmt22")})  # a downloaded model's folder
    line = one_line(glot(work, "run", "-m", "openai:stub", "--base-url", base, "-t", str(path), "-o", str(work / "run")))
    assert str(path) in line and "pip install 'glotbench[comet]'" in line
    assert sent(base) == []


def test_what_reaches_comet_and_the_mean_with_a_stand_in_module(work, stub_server):
    fake = work / "fake"
    (fake / "comet").mkdir(parents=True)
    (fake / "comet" / "__init__.py").write_text(STAND_IN, encoding="utf-8")
    ckpt = work / "model.ckpt"
    ckpt.write_bytes(b"not read")
    log = work / "comet_log.jsonl"
    base = stub_server("--responses", str(work / "answers.jsonl"))
    path = task_file(work, {"comet_source": "source"})
    done = glot(work, "run", "-m", "openai:stub", "--base-url", base, "-t", str(path), "-o", str(work / "run"),
                "--no-progress", pythonpath=f"{fake}{os.pathsep}{SRC}", GLOTBENCH_COMET_MODEL=str(ckpt),
                COMET_STAND_IN_LOG=str(log))
    assert done.returncode == 0, done.stderr[-3000:]
    seen = [json.loads(x) for x in log.read_text(encoding="utf-8").splitlines()]
    want = [{"src": en, "mt": ANSWERS[i], "ref": cs, "checkpoint": str(ckpt), "gpus": 0} for i, en, cs in ROWS]
    assert sorted(seen, key=lambda s: s["src"]) == sorted(want, key=lambda s: s["src"])
    t = json.loads((work / "run" / "results.json").read_text(encoding="utf-8"))["tasks"]["my.mt_cs"]
    scores = [stand_in_score(en, ANSWERS[i], cs) for i, en, cs in ROWS]
    assert t["metrics"]["comet"]["value"] == pytest.approx(sum(scores) / len(scores), abs=1e-6)
    assert t["comet"] == {"checkpoint": str(ckpt), "path": str(ckpt), "source_field": "source"}


def test_a_source_field_the_task_does_not_map_is_one_line_before_any_request(work, stub_server):
    base = stub_server("--answer", "x")
    ckpt = work / "model.ckpt"
    ckpt.write_bytes(b"not read")
    path = task_file(work, {"comet_model": str(ckpt), "comet_source": "english"})
    line = one_line(glot(work, "run", "-m", "openai:stub", "--base-url", base, "-t", str(path), "-o", str(work / "run")))
    assert str(path) in line and "comet_source 'english' is not a field the task maps" in line
    assert sent(base) == []
