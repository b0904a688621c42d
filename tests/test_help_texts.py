"""Help texts a new user reads first: no ``<bool>`` on on/off flags, ``--model`` names every backend
prefix (hf:, recorded:), and every docs/ page a help text names exists (fresh processes)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
COMMANDS = [["run"], ["build", "translate"], ["build", "filter"], ["build", "qa"], ["judge", "rerun"], ["runs", "compare"],
            ["tasks"], ["tasks", "list"], ["runs"], ["judge"]]


def _help(*cmd: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "COLUMNS": "400", "NO_COLOR": "1", "TERM": "dumb"}
    done = subprocess.run([sys.executable, "-m", "glotbench", *cmd, "--help"], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_run_help():
    text = _help("run")
    assert "<bool>" not in text
    model_line = next(line for line in text.splitlines() if "--model " in line)
    for prefix in ("embedded", "llamacpp:", "hf:", "openai:", "anthropic:", "vllm:", "ollama:", "recorded:"):
        assert prefix in model_line, prefix
    from glotbench.models.backends import BACKENDS

    import glotbench.models.registry  # noqa: F401 - registers every backend
    for name in ("hf", "recorded", "llamacpp", "openai", "anthropic"):
        assert name in BACKENDS.names()


def test_install_hints_keep_their_extra():
    """Help is rich markup: an unescaped "glotbench[ray]" lost its "[ray]" (taken for a style tag)."""
    text = " ".join(_help("run").split())
    assert "pip install 'glotbench[ray]'" in text and "pip install 'glotbench[slurm]'" in text
    assert "pip install 'glotbench')" not in text


def test_docs_named_in_help_exist():
    for cmd in COMMANDS:
        text = " ".join(_help(*cmd).split())  # one line: a wrapped path is whole again
        for doc in re.findall(r"docs/[A-Za-z0-9_.-]+\.md", text.replace("│ ", "").replace(" │", "")):
            assert (REPO / doc).is_file(), f"glotbench {' '.join(cmd)} --help names {doc}, which does not exist"
        assert "<bool>" not in text, cmd


def test_nothing_cut_in_80_columns():
    """No help text is cut with "…" in an 80-column terminal (an unbreakable token is cut, not wrapped)."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "COLUMNS": "80", "NO_COLOR": "1", "TERM": "dumb"}
    for cmd in COMMANDS:
        done = subprocess.run([sys.executable, "-m", "glotbench", *cmd, "--help"], env=env, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0 and "…" not in done.stdout, (cmd, [x for x in done.stdout.splitlines() if "…" in x])
