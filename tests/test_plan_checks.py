"""The run's plan (engine/plan.py) makes every check that can be made before a request.

A task in a language glotbench has no pack for, scored by a task class of its own that parses the
answer with the pack, used to load (the load-time name check looks only at generic scoring), send
every item, and fail every item at scoring: the fingerprint swallowed UnknownLanguageError and
``Task.pack`` was lazy. The plan resolves each task's pack in its mode: refused before any request,
one line naming the file and field. Each CLI call is a fresh subprocess against the stub server,
whose ``/_log`` counts the requests that arrived."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import httpx
import pytest

from glotbench.engine.fingerprint import task_fingerprint
from glotbench.errors import TaskSpecError
from glotbench.settings import RunSettings
from glotbench.tasks.registry import resolve

SRC = Path(__file__).resolve().parents[1] / "src"
PKG = SRC / "glotbench"

TASK_CLASS = '''\
from glotbench.tasks.task import Scored, Task


class ParsesWithThePack(Task):
    """Scores a generated answer itself, reading the language pack's answer words."""

    def score(self, sample, outputs, *, mode):
        words = self.pack.answer_words  # the pack, read only here, after the model answered
        return Scored(pred=outputs[0].text, values={"exact_match": float(outputs[0].text in words)})
'''


def _task(tmp_path: Path, language: str, *, task_class: str | None = None, output_type: str = "generate",
          extra: str = "") -> Path:
    (tmp_path / "items.jsonl").write_text("".join(json.dumps({"id": f"i{k}", "q": f"otázka {k}?", "a": "áno",
                                                              "choices": ["áno", "nie"]}) + "\n" for k in range(4)),
                                          encoding="utf-8")
    lines = [f"name: my.{language}", 'version: "1"', f"language: {language}",
             f"dataset: {{format: jsonl, splits: {{test: {tmp_path / 'items.jsonl'}}}}}",
             "fields: {id: id, question: q, target: a" + (", choices: choices" if output_type == "multiple_choice" else "") + "}",
             f"output_type: {output_type}", "prompt: {user: '{{ question }}'}",
             "scorer: exact_match\nmetrics: [exact_match]" if output_type == "generate" else "metrics: [accuracy]"]
    if task_class:
        lines.append(f"task_class: {task_class}")
    path = tmp_path / "task.yaml"
    path.write_text("\n".join(lines) + "\n" + extra, encoding="utf-8")
    return path


def _run(base: str, task: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "OPENAI_API_KEY": "x", "PYTHONPATH": os.pathsep.join([str(SRC), str(tmp_path / "code")])}
    return subprocess.run([sys.executable, "-m", "glotbench", "run", "-m", "openai:stub", "--base-url", base,
                           "-t", str(task), "-o", str(tmp_path / "run"), "--no-progress", *args],
                          env=env, capture_output=True, text=True, timeout=180)


def _sent(base: str) -> int:
    return len(httpx.get(base.replace("/v1", "/_log")).json()["log"])


def _code(tmp_path: Path) -> str:
    pkg = tmp_path / "code" / "sk_scoring"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("", encoding="utf-8")
    (pkg / "task.py").write_text(TASK_CLASS, encoding="utf-8")
    return "sk_scoring.task:ParsesWithThePack"


def test_a_task_class_in_a_language_without_a_pack_is_refused_before_any_request(stub_server, tmp_path):
    base = stub_server("--answer", "áno")
    task = _task(tmp_path, "sk", task_class=_code(tmp_path))
    done = _run(base, task, tmp_path)
    assert done.returncode == 2, done.stderr
    lines = [x for x in done.stderr.splitlines() if x.strip()]
    assert len(lines) == 1, done.stderr
    assert str(task) in lines[0] and "field 'language'" in lines[0] and "no language pack for 'sk'" in lines[0], lines[0]
    assert _sent(base) == 0
    assert not (tmp_path / "run" / "journal.sqlite").exists()


def test_the_same_task_in_a_language_with_a_pack_runs(stub_server, tmp_path):
    """The refusal above is the language's, not the task class's: in Czech the same task runs."""
    base = stub_server("--answer", "ano")
    done = _run(base, _task(tmp_path, "cs", task_class=_code(tmp_path)), tmp_path)
    assert done.returncode == 0, done.stderr
    assert _sent(base) == 4


def test_the_fingerprint_no_longer_swallows_an_unknown_language(tmp_path):
    """Scored from generated text, a language without a pack is an error wherever the fingerprint
    is computed; scored from option log-likelihoods the task needs no pack and its fingerprint
    stands for the bare code, as before (existing run directories keep their keys)."""
    [task] = resolve([str(_task(tmp_path, "xx-nope", output_type="multiple_choice"))])
    with pytest.raises(TaskSpecError, match=r"task\.yaml: field 'language': no language pack for 'xx-nope'"):
        task_fingerprint(task, RunSettings(), {"model_id": "m"})
    fp = task_fingerprint(task, RunSettings(mode="loglikelihood"), {"model_id": "m"})
    from glotbench.models.base import canonical_json, sha256_hex

    assert fp["pack"] == sha256_hex(canonical_json({"unknown": "xx-nope"}))[:8]


# ------------------------------------------------------------------ what the runner and tasks see
RUN_SETTINGS_NAMES = {"RunSettings", "RunConfig"}


def run_settings_references(source: str) -> list[str]:
    """Every name, attribute or import of the run's settings types in ``source`` (line: name); a
    helper of glotbench.settings (``items_for``) may be imported, the settings object may not."""
    hits = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Name) and node.id in RUN_SETTINGS_NAMES:
            hits.append(f"{node.lineno}: {node.id}")
        elif isinstance(node, ast.Attribute) and node.attr in RUN_SETTINGS_NAMES:
            hits.append(f"{node.lineno}: .{node.attr}")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            mod = getattr(node, "module", None) or ""
            names = [a.name for a in node.names]
            if RUN_SETTINGS_NAMES & set(names) or mod == "glotbench.engine.config" \
                    or any(n in ("glotbench.settings", "glotbench.engine.config") for n in names):
                hits.append(f"{node.lineno}: import {mod or ', '.join(names)}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in RUN_SETTINGS_NAMES:
            hits.append(f"{node.lineno}: '{node.value}'")  # a string annotation
    return hits


def _below_the_engine() -> list[Path]:
    """The runner and every task module: the generic task layer and each benchmark's task code."""
    files = [PKG / "engine" / "runner.py", *sorted((PKG / "tasks").rglob("*.py"))]
    for bench in sorted((PKG / "benchmarks").iterdir()):
        files += [p for p in sorted(bench.rglob("*.py")) if p.name in ("task.py", "tasks.py", "bench.py", "planned.py",
                                                                         "klokanek.py", "option_order.py")]
    return files


def test_the_runner_and_tasks_never_see_the_run_settings():
    """RequestSettings is the only settings type below the engine: the runner and the tasks never
    name RunSettings / RunConfig, nor import the module that holds them."""
    files = _below_the_engine()
    assert len(files) > 15
    hits = [f"{p.relative_to(SRC)}:{h}" for p in files for h in run_settings_references(p.read_text(encoding="utf-8"))]
    assert not hits, "\n".join(hits)


def test_the_settings_check_can_fail():
    planted = textwrap.dedent("""\
        from glotbench.settings import RunSettings

        def requests(self, sample, *, settings: "RunConfig"):
            return settings.model
        """)
    assert [h.split(": ", 1)[1] for h in run_settings_references(planted)] == ["import glotbench.settings", "'RunConfig'"]


def test_shard_workers_do_not_import_the_session():
    """The worker receives the plan (RunPlan.shard_job) and builds its models with models/loading.py:
    nothing under engine/shards imports engine/session.py, so the two no longer import each other."""
    hits = []
    for path in sorted((PKG / "engine" / "shards").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("glotbench.engine.session"):
                hits.append(f"{path.name}:{node.lineno}")
    assert not hits, hits


def test_a_shard_job_carries_the_plans_request_settings(tmp_path):
    """The job a shard receives holds, per task, the plan's request settings, mode and fingerprint,
    and the worker's side reads back the same RequestSettings (no re-derivation from the config)."""
    from glotbench.engine.plan import RunPlan, shard_plan, task_plans

    task_file = _task(tmp_path, "cs")
    cfg = RunSettings(tasks=[str(task_file)], limit=2, temperature=0.3, gen_kwargs={"min_p": 0.1}, shards=2)
    [tp] = task_plans(resolve([str(task_file)]), cfg, {"model_id": "m"})
    p = RunPlan(settings=cfg, tasks=[tp], skipped={}, model=None, judge=None, out_dir=tmp_path / "run")
    job = json.loads(json.dumps(p.shard_job(1, {tp.task.name: ["i0"]})))
    assert job["tasks"][tp.task.name]["fingerprint"] == tp.fingerprint
    _, [back] = shard_plan(job)
    assert back.request == tp.request and back.mode == tp.mode and back.fingerprint == tp.fingerprint


def test_a_run_tells_its_observer_and_prints_nothing_itself(stub_server, tmp_path, capsys, monkeypatch):
    """Display is an observer passed in: every line and the progress go to it; the engine prints nothing."""
    from glotbench.engine.session import run_evaluation

    class Recording:
        def __init__(self):
            self.lines, self.counters = [], []

        def say(self, line, *, markup=True):
            self.lines.append(line)

        def progress(self, total):
            rec = self

            class Counter:
                done = errors = answers = 0

                def __call__(self, status):
                    self.done += 1

                def answer(self):
                    self.answers += 1

                def close(self):
                    rec.closed = True

            self.counters.append((total, Counter()))
            return self.counters[-1][1]

        def transfers(self):
            return None

    base = stub_server("--answer", "ano")
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    cfg = RunSettings(model="openai:stub", base_url=base, tasks=[str(_task(tmp_path, "cs"))], output=str(tmp_path / "r"))
    seen = Recording()
    results, _ = run_evaluation(cfg, observer=seen)
    assert results["tasks"]["my.cs"]["n_items"] == 4
    [(total, counter)] = seen.counters
    assert total == counter.done == counter.answers == 4 and seen.closed
    assert any("4 item(s) to run" in line for line in seen.lines), seen.lines
    out = capsys.readouterr()
    assert out.out == "" and out.err == ""
    again = Recording()
    run_evaluation(cfg, observer=again)  # a re-report: said, nothing sent, no progress
    assert again.counters == [] and any("no model calls" in line for line in again.lines), again.lines
    assert _sent(base) == 4
