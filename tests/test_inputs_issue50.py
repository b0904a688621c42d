"""Inputs a new user trips on (issue 50): compressed datasets and recorded files (gzip, xz, bzip2
read through the standard library; Zstandard refused with one line), a ``counterpart`` naming no task
(one line, with the nearest names, before any request), a YAML judge's ``prompt_file.path`` beside
the task file, and an old ``task_class: module:Class`` whose module moved."""

from __future__ import annotations

import bz2
import csv
import gzip
import io
import json
import lzma
import os
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from glotbench.data.loaders import read_records
from glotbench.errors import DataError, TaskSpecError
from glotbench.tasks.registry import resolve

SRC = str(Path(__file__).resolve().parents[1] / "src")
ROWS = [{"id": "q01", "q": "Hány lába van a póknak?", "gold": "8"}, {"id": "q02", "q": "Kétszer három? 北京", "gold": "6"}]


def _jsonl() -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in ROWS).encode("utf-8")


def _csv() -> bytes:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(ROWS[0]))
    w.writeheader()
    w.writerows(ROWS)
    return buf.getvalue().encode("utf-8-sig")


COMPRESS = {"gz": gzip.compress, "xz": lzma.compress, "bz2": bz2.compress}


@pytest.mark.parametrize("suffix", sorted(COMPRESS))
@pytest.mark.parametrize("fmt", ["jsonl", "csv", "json"])
def test_compressed_datasets_read_like_plain_ones(tmp_path, fmt, suffix):
    raw = {"jsonl": _jsonl(), "csv": _csv(), "json": json.dumps(ROWS, ensure_ascii=False).encode("utf-8")}[fmt]
    plain = tmp_path / f"d.{fmt}"
    plain.write_bytes(raw)
    packed = tmp_path / f"d.{fmt}.{suffix}"
    packed.write_bytes(COMPRESS[suffix](raw))
    assert read_records(packed, fmt) == read_records(plain, fmt) == ROWS


def test_compression_is_told_by_the_bytes_and_zstd_is_one_line(tmp_path):
    odd = tmp_path / "d.jsonl"  # gzip bytes under a plain name: still read
    odd.write_bytes(gzip.compress(_jsonl()))
    assert read_records(odd, "jsonl") == ROWS
    zst = tmp_path / "d.jsonl.zst"
    zst.write_bytes(b"\x28\xb5\x2f\xfd" + b"\0" * 20)
    with pytest.raises(DataError, match=r"d\.jsonl\.zst: Zstandard-compressed.*zstd -d"):
        read_records(zst, "jsonl")
    broken = tmp_path / "d.csv.gz"
    broken.write_bytes(gzip.compress(_csv())[:-12])  # truncated: one line, not a traceback
    with pytest.raises(DataError, match=r"d\.csv\.gz.*(decompress|not valid)"):
        read_records(broken, "csv")


def test_task_with_a_gzipped_dataset_and_recorded_answers(tmp_path):
    from glotbench.models.recorded import RecordedModel

    data = tmp_path / "d.jsonl.gz"
    data.write_bytes(gzip.compress(_jsonl()))
    spec = _spec(tmp_path, "jsonl", data.name)
    (task,) = resolve([str(spec)])
    assert [s.id for s in task.samples()] == ["q01", "q02"]
    answers = tmp_path / "answers.csv.gz"
    answers.write_bytes(gzip.compress(b"id,answer\nq01,8\nq02,7\n"))
    model = RecordedModel(answers)  # format from the suffix under the compression's
    assert [r["answer"] for r in model.rows] == ["8", "7"]
    assert model.model_id.startswith("recorded:answers.csv.gz@")


def _spec(tmp_path: Path, fmt: str, data: str, extra: str = "", name: str = "demo.gz") -> Path:
    p = tmp_path / f"{name}.yaml"
    p.write_text(f"""name: {name}
version: "1"
language: hu
dataset:
  format: {fmt}
  splits: {{test: {data}}}
fields: {{id: id, question: q, target: gold}}
prompt: {{user: "{{{{ question }}}}"}}
extractor: {{name: number}}
scorer: numeric
metrics: [numeric_match]
{extra}""", encoding="utf-8")
    return p


def test_a_counterpart_typo_is_one_line_before_any_request(tmp_path, stub_server):
    data = tmp_path / "d.jsonl"
    data.write_bytes(_jsonl())
    en = _spec(tmp_path, "jsonl", data.name, name="demo.pair_en")
    native = _spec(tmp_path, "jsonl", data.name, extra="counterpart: demo.pair_em\n", name="demo.pair")
    with pytest.raises(TaskSpecError, match=r"demo\.pair\.yaml: field 'counterpart': no task is named 'demo\.pair_em'; "
                                            r"did you mean demo\.pair_en"):
        resolve([str(native), str(en)])
    ok = _spec(tmp_path, "jsonl", data.name, extra="counterpart: demo.pair_en\n", name="demo.pair")
    assert [t.name for t in resolve([str(ok), str(en)])] == ["demo.pair", "demo.pair_en"]
    # the CLI: exit 2, one line, nothing sent
    _spec(tmp_path, "jsonl", data.name, extra="counterpart: demo.pair_em\n", name="demo.pair")
    base = stub_server()
    env = {**os.environ, "PYTHONPATH": SRC, "OPENAI_API_KEY": "x"}
    done = subprocess.run([sys.executable, "-m", "glotbench", "run", "-m", "openai:stub", "--base-url", base,
                           "-t", f"{native},{en}", "-o", str(tmp_path / "run"), "--no-progress"],
                          capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    assert done.returncode == 2, done.stderr[-2000:]
    lines = [x for x in done.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and "did you mean demo.pair_en" in lines[0], done.stderr
    with urllib.request.urlopen(base.rsplit("/v1", 1)[0] + "/_log") as r:
        assert json.load(r)["log"] == []


JUDGED = """name: demo.judged
version: "1"
language: cs
dataset:
  format: jsonl
  splits: {{test: {data}}}
fields: {{id: id, question: q, target: gold}}
prompt: {{user: "{{{{ question }}}}"}}
judge:
  name: demo-judge
  prompt_file:
    path: {prompt}
    keys: [grader]
    style: format
    placeholders: {{question: question, reference: target, answer: predicted_answer}}
  grades: {{CORRECT: 1, INCORRECT: 0}}
  aliases: {{A: CORRECT, B: INCORRECT}}
  reply: {{regex: "\\b([AB])\\b"}}
  unreadable: exclude
"""


def test_prompt_file_path_is_relative_to_the_task_file(tmp_path, monkeypatch):
    """A relative prompt_file.path is read beside the task file (as judge: FILE is), whatever the
    data root and the working directory."""
    from glotbench.tasks.judging.prompts import _load_file_prompt

    folder = tmp_path / "mytasks"
    folder.mkdir()
    (folder / "d.jsonl").write_bytes(_jsonl())
    (folder / "prompts").mkdir()
    (folder / "prompts" / "grader.json").write_text(json.dumps(
        {"grader": "Question: {question}\nGold: {target}\nAnswer: {predicted_answer}\nA or B?"}), encoding="utf-8")
    spec = folder / "judged.yaml"
    spec.write_text(JUDGED.format(data="d.jsonl", prompt="prompts/grader.json"), encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.setenv("GLOTBENCH_DATA", str(elsewhere))
    (task,) = resolve([str(spec)])
    pf = task.spec.judge.prompt_file
    assert pf.path == "prompts/grader.json"  # as declared: the fingerprint does not depend on the folder
    assert Path(pf.base) / pf.path == (folder / "prompts" / "grader.json").resolve()
    task.check_ready()  # reads the grading prompt before any model call
    assert "A or B?" in _load_file_prompt(task.spec.judge).template
    # the same task file in another folder has the same prompt hash
    other = tmp_path / "moved"
    import shutil

    shutil.copytree(folder, other)
    (moved,) = resolve([str(other / "judged.yaml")])
    assert moved.spec.prompt_hash() == task.spec.prompt_hash()


def test_a_moved_task_class_names_its_new_spelling(tmp_path):
    """``task_class: <old module>:<Class>`` of a class that moved: the error names the registered
    name and the new reference (found among the registered task classes, no table of old names)."""
    from glotbench.tasks.classes import TASK_CLASSES
    from glotbench.tasks.names import moved_task_class

    refs = TASK_CLASSES.refs()
    name, ref = next((n, r) for n, r in sorted(refs.items()) if ":" in r and "." in r.partition(":")[0])
    module, _, cls = ref.partition(":")
    old = f"glotbench.{module.rsplit('.', 1)[-1]}_moved_away:{cls}"
    hint = moved_task_class(old)
    assert hint == (name, ref)
    data = tmp_path / "d.jsonl"
    data.write_bytes(_jsonl())
    spec = _spec(tmp_path, "jsonl", data.name, extra=f"task_class: {old}\n", name="demo.moved")
    with pytest.raises(TaskSpecError, match=rf"demo\.moved\.yaml: field 'task_class': .* has moved: write `task_class: {name}` "
                                            rf"\(its registered name; or `task_class: {ref}`\)"):
        resolve([str(spec)])
    assert moved_task_class("glotbench.nowhere:NoSuchTask") is None
    # a class no name registers: found in a registered package under its old module's last name
    assert moved_task_class("glotbench.factuality.option_order:OptionOrderTask") == (
        "glotbench.benchmarks.factuality.option_order:OptionOrderTask", None)


def test_recorded_answers_for_identical_prompts_and_absent_items(tmp_path):
    """Two items with the same prompt keep their own recorded answers (the request key names the
    item for a backend that answers items: HuStandardFIB's 93 items hold 90 distinct prompts, and
    "90 item(s) matched" stood beside n = 93); an item the file lacks is reported as "not in the
    recorded answers", not as failed after retries."""
    rows = [{"id": "q01", "q": "Kétszer három?", "gold": "6"}, {"id": "q02", "q": "Kétszer három?", "gold": "6"},
            {"id": "q03", "q": "Hány lába van a póknak?", "gold": "8"}, {"id": "q04", "q": "Egy meg egy?", "gold": "2"}]
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    spec = _spec(tmp_path, "jsonl", data.name, name="demo.recorded")
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps(r) + "\n" for r in ({"id": "q01", "answer": "6"}, {"id": "q02", "answer": "5"},
                                                               {"id": "q03", "answer": "8"})), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": SRC, "COLUMNS": "200"}
    done = subprocess.run([sys.executable, "-m", "glotbench", "run", "-m", f"recorded:{answers}", "-t", str(spec),
                           "-o", str(tmp_path / "run"), "--no-progress", "--bootstrap", "20"],
                          capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout + done.stderr
    assert "3 item(s) matched" in out, out
    assert "demo.recorded: 1 item(s) not in the recorded answers, not scored" in out, out
    assert "failed after retries" not in out, out
    samples = {json.loads(x)["sample_id"]: json.loads(x) for x in (tmp_path / "run" / "samples.jsonl").read_text().splitlines()}
    assert samples["q01"]["outputs"][0]["text"] == "6" and samples["q02"]["outputs"][0]["text"] == "5"
    res = json.loads((tmp_path / "run" / "results.json").read_text())
    t = res["tasks"]["demo.recorded"]
    assert t["n_scored"] == 3 and t["n_errors"] == 1 and res["not_recorded"] == {"demo.recorded": 1}
    assert t["metrics"]["numeric_match"]["value"] == pytest.approx(2 / 3)


def test_tasks_lists_a_yaml_judged_tasks_headline(tmp_path):
    """`glotbench tasks` shows a YAML-judged task's metrics as a run reports them (the judge's
    headline first), not the task default `accuracy`."""
    folder = tmp_path / "mytasks"
    folder.mkdir()
    (folder / "d.jsonl").write_bytes(_jsonl())
    (folder / "grader.json").write_text(json.dumps({"grader": "Q: {question}\nG: {target}\nA: {predicted_answer}"}),
                                        encoding="utf-8")
    (folder / "judged.yaml").write_text(JUDGED.format(data="d.jsonl", prompt="grader.json"), encoding="utf-8")
    (task,) = resolve([str(folder / "judged.yaml")])
    expected = task.metric_names("generate")
    assert expected and expected[0] != "accuracy"
    env = {**os.environ, "PYTHONPATH": SRC, "GLOTBENCH_TASKS_PATH": str(folder)}
    done = subprocess.run([sys.executable, "-m", "glotbench", "tasks", "demo.judged"], capture_output=True, text=True,
                          timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    line = next(x for x in done.stdout.splitlines() if x.startswith("demo.judged"))
    cells = line.split("\t")
    assert cells[3] == ", ".join(expected), cells
    done = subprocess.run([sys.executable, "-m", "glotbench", "tasks", "demo.judged", "--json"], capture_output=True,
                          text=True, timeout=300, env=env)
    assert json.loads(done.stdout)["tasks"][0]["metrics"] == expected


def test_stub_server_runs_without_uvicorn(tmp_path):
    """``python -m glotbench.testing.stub_openai`` (docs/writing-docs.md) serves on the standard
    library when uvicorn (the `serve` extra) is missing: a chat request is answered, /_log counts it."""
    import socket
    import time

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code = ("import sys, runpy; sys.modules['uvicorn'] = None; "
            f"sys.argv = ['stub_openai', '--port', '{port}', '--answer', 'Budapest']; "
            "runpy.run_module('glotbench.testing.stub_openai', run_name='__main__')")
    proc = subprocess.Popen([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": SRC},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):  # bounded wait for the port (no timing assertion)
            try:
                urllib.request.urlopen(base + "/v1/models", timeout=5).read()
                break
            except OSError:
                assert proc.poll() is None, proc.communicate()[1][-2000:]
                time.sleep(0.1)
        body = json.dumps({"model": "stub", "messages": [{"role": "user", "content": "Fővárosa?"}]}).encode()
        req = urllib.request.Request(base + "/v1/chat/completions", data=body, headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=30) as r:
            reply = json.load(r)
        assert reply["choices"][0]["message"]["content"] == "Budapest"
        with urllib.request.urlopen(base + "/_log", timeout=30) as r:
            assert len(json.load(r)["log"]) == 1
        # a real run against it (the OpenAI-compatible client, keep-alive and all)
        data = tmp_path / "d.jsonl"
        data.write_bytes(_jsonl())
        spec = _spec(tmp_path, "jsonl", data.name, name="demo.stdlib")
        done = subprocess.run([sys.executable, "-m", "glotbench", "run", "-m", "openai:stub", "--base-url", base + "/v1",
                               "-t", str(spec), "-o", str(tmp_path / "run"), "--no-progress", "--bootstrap", "0"],
                              capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": SRC,
                                                                               "OPENAI_API_KEY": "x"}, cwd=tmp_path)
        assert done.returncode == 0, done.stderr[-2000:]
        assert json.loads((tmp_path / "run" / "results.json").read_text())["tasks"]["demo.stdlib"]["n_scored"] == 2
    finally:
        proc.terminate()
        proc.wait(timeout=30)
