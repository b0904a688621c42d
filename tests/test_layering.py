"""Benchmarks are packages: the generic layers know no benchmark, the layering contracts hold,
and a benchmark package installed like a user's own runs by name."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src" / "glotbench"
# each benchmark's name, as code and data paths spell it; none may appear in a generic module
NAMES = ("mm_eval", "simpleqa", "openhueval", "hulu", "czech", "klokan")
# where a name legitimately appears outside the benchmark packages, and why
ALLOWED = {
    ("languages/cs.yaml", "aliases:"): "the Czech language's own names (a language pack, not a benchmark)",
    ("languages/cs_morpho.py", "czech_bench/morphology/czech-morfflex"): "where the MorfFlex dictionary lies in a data root",
    ("build/pos.py", "czech_bench/morphology/czech-morfflex"): "the same data-root path, in the message naming it",
}


def _generic_files() -> list[Path]:
    return [p for p in SRC.rglob("*") if p.is_file() and "benchmarks" not in p.relative_to(SRC).parts
            and "__pycache__" not in p.parts and p.suffix in (".py", ".yaml", ".json", ".html", ".jinja", ".css", ".js", ".md")]


def test_generic_code_names_no_benchmark():
    """grep of each benchmark's name outside glotbench/benchmarks/ (tests and docs aside) finds
    nothing but the listed language-resource lines."""
    hits = []
    for path in _generic_files():
        rel = str(path.relative_to(SRC))
        for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            for name in NAMES:
                if name in line and not any(rel == f and s in line for f, s in ALLOWED):
                    hits.append(f"{rel}:{n}: {name}: {line.strip()[:120]}")
    assert not hits, "\n".join(hits)


def test_the_grep_finds_a_planted_name(tmp_path, monkeypatch):
    """The check above can fail: a generic module naming a benchmark is caught."""
    planted = SRC / "scoring" / "_planted_for_test.py"
    planted.write_text('TASK = "hulu.cola"\n', encoding="utf-8")
    try:
        with pytest.raises(AssertionError, match="hulu"):
            test_generic_code_names_no_benchmark()
    finally:
        planted.unlink()


@pytest.mark.skipif(shutil.which("lint-imports") is None and importlib.util.find_spec("importlinter") is None,
                    reason="import-linter is not installed (pip install -e '.[test]')")
def test_import_contracts_hold():
    """.importlinter: one ``layers`` contract orders the whole package (models and output/report below
    the engine, leaderboard | build | translate independent on top of the core); generic layers never
    import glotbench.benchmarks; the registry imports nothing of glotbench."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    exe = shutil.which("lint-imports") or str(Path(sys.executable).with_name("lint-imports"))
    done = subprocess.run([exe, "--config", str(REPO / ".importlinter")], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "3 kept, 0 broken" in done.stdout


def _install(pkg: Path, target: Path) -> None:
    """pip-install the fixture package (its own pyproject, its entry point) into ``target``."""
    args = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(pkg)]
    if importlib.util.find_spec("setuptools") is not None:
        args.insert(5, "--no-build-isolation")
    done = subprocess.run(args, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]


def test_a_benchmark_package_installs_and_runs_by_name(tmp_path, stub_server):
    """tests/fixtures/bench_pkg is a user's benchmark package: a pyproject with a
    ``glotbench.benchmarks`` entry point, one task YAML, its data and one metric. Installed, its task
    is listed and runs by name in a fresh process, its metric's value checked by a plain loop."""
    site = tmp_path / "site"
    work = tmp_path / "pkg"
    shutil.copytree(REPO / "tests" / "fixtures" / "bench_pkg", work, ignore=shutil.ignore_patterns("build", "*.egg-info"))
    _install(work, site)
    assert list(site.glob("glotbench_tinybench-*.dist-info")), "no package metadata (entry points) installed"
    answers = {"Praha": "Praha", "Bratislava": "Brno", "Vídeň": "Vídeň", "Varšava": "Krakov"}
    responses = tmp_path / "responses.jsonl"
    responses.write_text("".join(json.dumps({"match": f"GOLD={g}", "response": a}, ensure_ascii=False) + "\n"
                                 for g, a in answers.items()), encoding="utf-8")
    base = stub_server("--responses", str(responses))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(REPO / "src")])}
    listed = subprocess.run([sys.executable, "-m", "glotbench", "tasks", "tinybench.*", "--plain"], env=env,
                            capture_output=True, text=True, timeout=300)
    assert listed.returncode == 0, listed.stderr
    assert "tinybench.capitals" in listed.stdout and "tiny_first_letter" in listed.stdout
    out = tmp_path / "run"
    done = subprocess.run([sys.executable, "-m", "glotbench", "run", "--model", "openai:stub", "--base-url", base,
                           "--tasks", "tinybench", "-o", str(out), "--no-progress"], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    metrics = json.loads((out / "results.json").read_text(encoding="utf-8"))["tasks"]["tinybench.capitals"]["metrics"]
    exact = sum(a == g for g, a in answers.items()) / len(answers)
    first = sum(a[:1].lower() == g[:1].lower() for g, a in answers.items()) / len(answers)
    assert (exact, first) == (0.5, 0.75)
    assert metrics["exact_match"]["value"] == pytest.approx(exact)
    assert metrics["tiny_first_letter"]["value"] == pytest.approx(first)
    # without the package on the path, the name is unknown: nothing is registered by accident
    bare = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    gone = subprocess.run([sys.executable, "-m", "glotbench", "tasks", "tinybench.*", "--plain"], env=bare,
                          capture_output=True, text=True, timeout=300)
    assert "tinybench.capitals" not in gone.stdout
    # its metric's kind is named in results.json by its dotted name, no import path: a reader with the
    # package recomputes it (a paired row), one without shows the stored number and says why no test
    res = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert res["tasks"]["tinybench.capitals"]["metric_definitions"]["tiny_first_letter"]["kind"] == "tinybench.first_letter"
    paired = [subprocess.run([sys.executable, "-m", "glotbench", "runs", "compare", "--paired", str(out), str(out)], env=e,
                             capture_output=True, text=True, timeout=300) for e in (env, bare)]
    assert all(p.returncode == 0 for p in paired), [p.stderr[-2000:] for p in paired]
    line = "tinybench.capitals tiny_first_letter: its kind 'tinybench.first_letter' is not installed here"
    assert line not in " ".join(paired[0].stdout.split()) and line in " ".join(paired[1].stdout.split())


def test_a_broken_benchmark_package_is_one_line(tmp_path):
    """A package whose register function raises: set aside with one line naming the package, no
    traceback, and the other tasks still listed (issue 48: it used to stop every command)."""
    site = tmp_path / "site"
    work = tmp_path / "pkg"
    shutil.copytree(REPO / "tests" / "fixtures" / "bench_pkg", work, ignore=shutil.ignore_patterns("build", "*.egg-info"))
    init = work / "src" / "glotbench_tinybench" / "__init__.py"
    init.write_text(init.read_text(encoding="utf-8") + "\n\ndef register(bench):\n    raise RuntimeError('boom')\n",
                    encoding="utf-8")
    _install(work, site)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(REPO / "src")])}
    done = subprocess.run([sys.executable, "-m", "glotbench", "tasks", "--plain"], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-3000:]
    lines = [ln for ln in done.stderr.splitlines() if "tinybench" in ln]
    assert len(lines) == 1 and re.search(r"set aside: benchmark package 'tinybench' .* RuntimeError: boom", lines[0]), done.stderr
    assert "mm_eval.syntax" in done.stdout
