"""Every CLI command on run directories of every suite, each in a fresh subprocess, checking that
the commands reading finished runs (but `export --format lm-eval`, which reads the dataset records
again) import no benchmark code (glotbench.benchmarks.openhueval, .hulu,
.factuality, .czech): metric definitions, directions and tables come from results.json.

Runs are made by the stub OpenAI server (model and judge) with --limit 2; a wrapper around the
CLI reports ``sys.modules`` at exit.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = str(Path(__file__).resolve().parents[1] / "src")
BENCHMARK = ("glotbench.benchmarks.openhueval", "glotbench.benchmarks.hulu", "glotbench.benchmarks.factuality",
             "glotbench.benchmarks.czech_bench", "glotbench.benchmarks.mm_eval")
# a reading command may run the packages' register functions (their __init__ modules, which import
# nothing of the package), never their task, metric or table modules
SUITES = ["mm_eval", "hulu", "openhueval", "factuality", "cs", "czech_bench"]
WRAPPER = """
import atexit, json, sys
def _report():
    bad = sorted(m for m in sys.modules if m.startswith(%r) and m not in %r)
    sys.stderr.write("\\nBENCHMARK_MODULES=" + json.dumps(bad) + "\\n")
atexit.register(_report)
sys.argv = ["glotbench"] + sys.argv[1:]
from glotbench.cli import main
main()
""" % (BENCHMARK, BENCHMARK)


def _cli(*args: str, cwd: Path, timeout: int = 300) -> tuple[subprocess.CompletedProcess, list[str]]:
    env = {**os.environ, "OPENAI_API_KEY": "x", "PYTHONPATH": os.pathsep.join(p for p in (SRC, os.environ.get("PYTHONPATH", "")) if p)}
    done = subprocess.run([sys.executable, "-c", WRAPPER, *args], env=env, capture_output=True, text=True, timeout=timeout,
                          cwd=cwd)
    line = [x for x in done.stderr.splitlines() if x.startswith("BENCHMARK_MODULES=")]
    loaded = json.loads(line[-1].split("=", 1)[1]) if line else ["<no report>"]
    return done, loaded


@pytest.fixture(scope="module")
def suite_runs(tmp_path_factory, data_root):
    from glotbench.testing.servers import start_stub, stop

    root = tmp_path_factory.mktemp("suites")
    base, proc = start_stub("--answer", "A")
    runs: dict[str, Path] = {}
    try:
        for suite in SUITES:
            out = root / suite
            done, _ = _cli("run", "-m", "openai:stub", "--base-url", base, "--judge", "openai:judge", "--judge-base-url", base,
                           "-t", suite, "--limit", "2", "--bootstrap", "50", "-o", str(out), "--no-progress", cwd=root)
            if done.returncode == 0 and (out / "results.json").is_file():
                runs[suite] = out
            else:
                print(f"{suite}: not run ({done.stderr.strip().splitlines()[-1:]})")
        yield base, runs
    finally:
        stop(proc)


def _ok(done: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    assert done.returncode == 0, done.stderr[-1000:]


@pytest.mark.parametrize("suite", SUITES)
def test_reading_commands_import_no_benchmark_code(suite_runs, suite, tmp_path):
    _, runs = suite_runs
    if suite not in runs:
        pytest.skip(f"{suite}: no data for a run here")
    run = str(runs[suite])
    tasks = list(json.loads((runs[suite] / "results.json").read_text())["tasks"])
    commands = [
        ("runs", "report", run, "-o", str(tmp_path / "r.html")),
        ("runs", "compare", "--paired", run, run),
        ("runs", "export", run, "-o", str(tmp_path / "s.jsonl")),
        ("runs", "export", run, "--format", "csv", "-o", str(tmp_path / "s.csv")),
    ]
    for cmd in commands:
        done, loaded = _cli(*cmd, cwd=tmp_path)
        _ok(done)
        assert loaded == [], f"{cmd[:2]} imported {loaded}"
    # lm-eval's `doc` is the dataset record and its `target` the gold option's index: that export reads
    # the task's data again through the task (benchmark code allowed), falling back to the run's own fields
    done, _ = _cli("runs", "export", run, "--format", "lm-eval", "-o", str(tmp_path / "lm"), cwd=tmp_path)
    _ok(done)
    # ranks: a task whose headline is undefined on the stub's answers (Czech-Bench's cb_accuracy when the
    # reference rule parses nothing) leaves no model to rank: one line, exit 2, and still no benchmark import
    done, loaded = _cli("runs", "compare", "--ranks", run, "--a", tasks[0], "--b", tasks[-1], cwd=tmp_path)
    assert "Traceback" not in done.stderr and done.returncode in (0, 2) and loaded == [], done.stderr[-1000:]
    done, loaded = _cli("runs", "compare", "--crosslingual", run, cwd=tmp_path)  # a suite without pairs: one line, exit 2
    assert "Traceback" not in done.stderr and done.returncode in (0, 2) and loaded == [], done.stderr[-1000:]


@pytest.mark.parametrize("suite", ["openhueval", "factuality"])
def test_judge_then_compare_judges(suite_runs, suite, tmp_path):
    base, runs = suite_runs
    if suite not in runs:
        pytest.skip(f"{suite}: no data for a run here")
    run = str(runs[suite])
    # a second judge needs the task's own judge prompt: `judge` loads the task class (benchmark code)
    done, _ = _cli("judge", "rerun", run, "--judge", "openai:judge2", "--judge-base-url", base, cwd=tmp_path)
    _ok(done)
    done, loaded = _cli("judge", "compare", run, cwd=tmp_path)
    _ok(done)
    # compare-judges reads the journal's grades with generic code (judges/judge_compare.py):
    # no task class, prompt or benchmark module
    assert loaded == [], f"compare-judges imported {loaded}"


def test_submission_and_analyze_thinking_work(suite_runs, tmp_path):
    """These two use the task's own hooks (HuLU's fallback label, OpenHuEval's outcome rule), so
    they may import the task class named in the task file; they must work in a fresh process."""
    _, runs = suite_runs
    if "hulu" in runs:
        done, _ = _cli("runs", "submission", str(runs["hulu"]), "-o", str(tmp_path / "subs"), cwd=tmp_path)
        _ok(done)  # a dev-split run: every task listed as skipped, with the reason
    for suite in ("openhueval", "mm_eval"):
        if suite in runs:
            done, _ = _cli("analyze", "thinking", str(runs[suite]), cwd=tmp_path)
            assert "Traceback" not in done.stderr and done.returncode in (0, 2), done.stderr[-1000:]
