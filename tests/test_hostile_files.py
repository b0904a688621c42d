"""Issue 48: files a user did not write cannot run code, hang a command or stop the other tasks.

Each hostile file in tests/fixtures/hostile/ goes through the CLI in a fresh process with a timeout:
no code runs (a ``CANARY`` file the payloads would create never appears), each case is one line
(no traceback), and the unrelated built-in task still runs against the stub server."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

REPO = Path(__file__).resolve().parents[1]
SRC = str(REPO / "src")
HOSTILE = REPO / "tests" / "fixtures" / "hostile"
TASKS = HOSTILE / "tasks"
TIMEOUT = 120  # every command ends well within this; a hang fails the test instead of stalling CI

# file -> words its one line must hold (set aside while listing, refused when named)
TEMPLATE_CASES = {
    "prompt_popen.yaml": ["prompt.user", "__globals__"],
    "prompt_open.yaml": ["prompt.user", "__builtins__"],
    "prompt_environ.yaml": ["prompt.system", "__globals__"],
    "choice_template.yaml": ["prompt.choice_format", "__globals__"],
    "judge_inline.yaml": ["judge.prompt.en.user", "__globals__"],
    "judge_file.yaml": ["prompt.en.system", "__globals__"],
}
# the file a case's line names: the judge file itself when a task names a hostile one
NAMED = {"judge_file.yaml": "hostile.judge.yaml"}
OTHER_BAD = {
    "alias_bomb.yaml": ["alias"],
    "bad_yaml.yaml": ["invalid YAML"],
    "bad_field.yaml": ["promtp"],
}


def _env(**extra: str) -> dict:
    env = {**os.environ, "OPENAI_API_KEY": "x", "COLUMNS": "200", "NO_COLOR": "1",
           "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    env.pop("GLOTBENCH_TASKS_PATH", None)
    env.update(extra)
    return env


def _glotbench(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "glotbench", *args], capture_output=True, text=True,
                          timeout=TIMEOUT, cwd=cwd, env=_env(**env))


def _sent(base: str) -> list:
    return httpx.get(base.replace("/v1", "/_log")).json()["log"]


def _lines(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if ln.strip()]


@pytest.fixture()
def hostile(tmp_path) -> Path:
    """A copy of the hostile task folder (the runs write nothing next to the fixtures)."""
    dest = tmp_path / "hostile"
    shutil.copytree(TASKS, dest)
    return dest


def _no_canary(*dirs: Path) -> None:
    for d in dirs:
        assert not list(d.rglob("CANARY")), f"a template ran code: CANARY in {d}"
    assert not (REPO / "CANARY").exists()


def test_listing_sets_each_hostile_file_aside_in_one_line(tmp_path, hostile):
    """`glotbench tasks` with the hostile folder on the task path: exit 0, every built-in and every
    well-formed task listed, each bad file one ``set aside`` line naming it, the alias bomb quick."""
    done = _glotbench(tmp_path, "tasks", "--plain", GLOTBENCH_TASKS_PATH=str(hostile))
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-3000:]
    assert "mm_eval.syntax" in done.stdout and "hostile.judge_regex" in done.stdout
    lines = [ln for ln in _lines(done.stderr) if ln.startswith("warning: set aside:")]  # not the data notes
    for name, words in {**TEMPLATE_CASES, **OTHER_BAD}.items():
        mine = [ln for ln in lines if NAMED.get(name, name) in ln]
        assert len(mine) == 1, (name, lines)
        assert mine[0].startswith("warning: set aside:") and all(w in mine[0] for w in words), (name, mine)
    # two copies of one task name: the first keeps it, the second is one line
    same = [ln for ln in lines if "'hostile.same'" in ln]
    assert len(same) == 1 and "copy_b.yaml" in same[0] and "copy_a.yaml" in same[0], lines
    assert "hostile.same" in done.stdout
    assert len(lines) == len(TEMPLATE_CASES) + len(OTHER_BAD) + 1, lines
    _no_canary(tmp_path)


@pytest.mark.parametrize("name", sorted({**TEMPLATE_CASES, **OTHER_BAD}))
def test_a_hostile_task_named_on_the_command_line_is_one_line_and_sends_nothing(stub_server, tmp_path, hostile, name):
    base = stub_server("--answer", "4")
    done = _glotbench(tmp_path, "run", "--model", "openai:stub", "--base-url", base, "--tasks", str(hostile / name),
                      "-o", str(tmp_path / "out"), "--no-progress")
    lines = _lines(done.stderr)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-3000:]
    assert len(lines) == 1 and str(hostile / NAMED.get(name, name)) in lines[0], lines
    assert _sent(base) == []
    _no_canary(tmp_path)


def test_the_built_in_task_runs_beside_every_hostile_file(stub_server, data_root, tmp_path, hostile):
    """The hostile folder on the task path: the unrelated built-in task runs (its 2 requests sent),
    each hostile file one line on stderr, no code run."""
    base = stub_server("--answer", "A")
    done = _glotbench(tmp_path, "run", "--model", "openai:stub", "--base-url", base, "--tasks", "mm_eval.syntax",
                      "--limit", "2", "-o", str(tmp_path / "out"), "--no-progress", GLOTBENCH_TASKS_PATH=str(hostile))
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-3000:]
    assert (tmp_path / "out" / "results.json").is_file()
    assert len(_sent(base)) == 2
    set_aside = [ln for ln in _lines(done.stderr) if ln.startswith("warning: set aside:")]
    assert len(set_aside) == len(TEMPLATE_CASES) + len(OTHER_BAD) + 1, set_aside
    _no_canary(tmp_path)


def test_a_hostile_chat_template_is_refused_before_any_request(stub_server, tmp_path):
    base = stub_server("--answer", "4")
    task = tmp_path / "t"
    shutil.copytree(TASKS, task)
    done = _glotbench(tmp_path, "run", "--model", "openai:stub", "--base-url", base, "--tasks",
                      str(task / "copy_a.yaml"), "--chat-template", str(HOSTILE / "chat_template.jinja"),
                      "-o", str(tmp_path / "out"), "--no-progress")
    lines = _lines(done.stderr)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-3000:]
    assert len(lines) == 1 and "--chat-template" in lines[0] and "__globals__" in lines[0], lines
    assert _sent(base) == []
    _no_canary(tmp_path)


def test_a_backtracking_judge_regex_is_bounded_and_counted_unreadable(stub_server, tmp_path, hostile):
    """``reply: {regex: '^(a+)+$'}`` on a judge reply of 40 'a' and a 'b': the run ends (it hung at 2
    items for 90 s before) and every verdict is unreadable."""
    base = stub_server("--answer", "a" * 40 + "b")
    done = _glotbench(tmp_path, "run", "--model", "openai:stub", "--base-url", base, "--judge", "openai:stub",
                      "--judge-base-url", base, "--tasks", str(hostile / "judge_regex.yaml"),
                      "-o", str(tmp_path / "out"), "--no-progress", "--bootstrap", "0")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-3000:]
    import json

    results = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    metrics = results["tasks"]["hostile.judge_regex"]["metrics"]
    unreadable = [v for k, v in metrics.items() if "unreadable" in k]
    assert unreadable and unreadable[0]["value"] == 1.0, metrics


def test_plugins_that_raise_are_missing_or_block_are_set_aside(stub_server, data_root, tmp_path):
    """Three installed entry points (raises, missing module, sleeps an hour): every command still
    works, each package is one line, and the built-in task runs."""
    env = {"PYTHONPATH": os.pathsep.join([str(HOSTILE / "plugins"), SRC]), "GLOTBENCH_PLUGIN_TIMEOUT_S": "2"}
    listed = _glotbench(tmp_path, "tasks", "mm_eval.s*", "--plain", **env)  # syntax, semantics: their data is present
    assert listed.returncode == 0 and "Traceback" not in listed.stderr, listed.stderr[-3000:]
    assert "mm_eval.syntax" in listed.stdout
    lines = _lines(listed.stderr)
    assert len(lines) == 3, lines
    for name, why in (("hostile_raises", "RuntimeError: register exploded"),
                      ("hostile_missing", "ModuleNotFoundError"), ("hostile_sleeps", "within 2 s")):
        mine = [ln for ln in lines if f"'{name}'" in ln]
        assert len(mine) == 1 and why in mine[0] and mine[0].startswith("warning: set aside:"), (name, lines)
    base = stub_server("--answer", "A")
    done = _glotbench(tmp_path, "run", "--model", "openai:stub", "--base-url", base, "--tasks", "mm_eval.syntax",
                      "--limit", "2", "-o", str(tmp_path / "out"), "--no-progress", **env)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-3000:]
    assert len(_sent(base)) == 2 and len(re.findall("set aside", done.stderr)) == 3, done.stderr
