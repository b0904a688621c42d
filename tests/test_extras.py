"""Extras that match jobs: the default install evaluates; `serve`, `plots` and `analysis` are extras, and
a job that needs a missing one says which on one line. Absence is simulated in a fresh process by
``sys.modules[name] = None`` (then ``import name`` raises ImportError)."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SRC = str(REPO / "src")
EXTRA_MODULES = {"serve": ["fastapi", "uvicorn", "sqlalchemy", "argon2"], "plots": ["matplotlib"], "analysis": ["lingua"]}


def _name(req: str) -> str:
    return re.split(r"[<>=!~\[; ]", req, maxsplit=1)[0].strip().lower()


def cli_without(blocked: list[str], *args: str, cwd, env: dict | None = None) -> subprocess.CompletedProcess:
    code = ("import sys\n" + "".join(f"sys.modules[{m!r}] = None\n" for m in blocked)
            + "sys.argv = ['glotbench', *sys.argv[1:]]\nfrom glotbench.cli import main\nmain()")
    e = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": SRC, **(env or {})}
    return subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, env=e, capture_output=True, text=True,
                          timeout=300)


def test_default_dependencies_leave_the_jobs_extras_out():
    meta = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    default = {_name(r) for r in meta["project"]["dependencies"]}
    extras = {k: {_name(r) for r in v} for k, v in meta["project"]["optional-dependencies"].items()}
    assert extras["serve"] >= {"fastapi", "uvicorn", "sqlalchemy", "python-multipart", "itsdangerous", "argon2-cffi"}
    assert extras["plots"] == {"matplotlib"} and extras["analysis"] == {"lingua-language-detector"}
    assert not default & (extras["serve"] | extras["plots"] | extras["analysis"])
    assert "openai" not in default  # never imported (below)
    assert {"llama-cpp-python", "numpy", "scikit-learn", "aiohttp"} <= default
    # the Hub-format tasks' readers (datasets brings pyarrow) are the extra `hub` (README's table says why)
    assert extras["hub"] == {"datasets", "pandas"} and not default & extras["hub"]


def test_openai_package_is_never_imported():
    for path in Path(SRC).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                assert not any(a.name.split(".")[0] == "openai" for a in node.names), path
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                assert node.module.split(".")[0] != "openai", path


@pytest.mark.parametrize("args,extra", [(["serve"], "serve"), (["admin", "list-tasks"], "serve")])
def test_leaderboard_without_serve_is_one_line(tmp_path, args, extra):
    r = cli_without(EXTRA_MODULES["serve"], *args, cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and f"needs pip install 'glotbench[{extra}]'" in lines[0], r.stderr
    assert not list(tmp_path.iterdir())  # no database made


def test_thinking_analysis_without_lingua_is_one_line(tmp_path):
    code = ("import sys; sys.modules['lingua'] = None\n"
            "from glotbench.errors import GlotbenchError\n"
            "from glotbench.benchmarks.openhueval.thinking import _detector\n"
            "try:\n    _detector(('hu', 'en'), 0.0)\nexcept GlotbenchError as e:\n    print(e)\n")
    r = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": SRC}, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "needs pip install 'glotbench[analysis]'" in r.stdout


def test_evaluation_and_export_run_without_the_extras_report_names_plots(tmp_path, data_root):
    """The default install (no serve, plots, analysis packages) runs built-in evaluations of three suites
    and exports; `glotbench report` (plots) says which extra it needs."""
    from glotbench.testing.servers import start_stub, stop

    blocked = [m for mods in EXTRA_MODULES.values() for m in mods]
    base, proc = start_stub("--answer", "A")
    try:
        r = cli_without(blocked, "run", "-m", "openai:stub", "--base-url", base, "-t",
                        "mm_eval.knowledge,hulu.cb,chinese_simpleqa", "--judge", "openai:judge", "--judge-base-url", base,
                        "-n", "2", "-o", "run", "--no-progress", "--bootstrap", "20", "--max-retries", "0", cwd=tmp_path,
                        env={"GLOTBENCH_DATA": str(data_root), "OPENAI_API_KEY": "x"})
    finally:
        stop(proc)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "Traceback" not in r.stderr
    e = cli_without(blocked, "runs", "export", "run", "--format", "csv", cwd=tmp_path)
    assert e.returncode == 0, e.stderr
    rep = cli_without(blocked, "runs", "report", "run", "-o", "r.html", cwd=tmp_path)
    assert rep.returncode == 2 and "needs pip install 'glotbench[plots]'" in rep.stderr
    assert len(rep.stderr.strip().splitlines()) == 1, rep.stderr
