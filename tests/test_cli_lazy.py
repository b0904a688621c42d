"""`glotbench --version` and `--help` import no command module and nothing heavy; `--help` lists the
same commands with the same help as with every module imported (the help lines are read from the
modules' source: cli/command_help.py); a command's modules load when it runs; every group has its page."""

from __future__ import annotations

import json
import os
import subprocess
import sys

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
HEAVY = ("numpy", "scipy", "sklearn", "matplotlib", "fastapi", "sqlalchemy", "llama_cpp", "datasets", "pandas",
         "lingua", "aiohttp", "anthropic", "jinja2", "glotbench.settings", "glotbench.engine", "glotbench.tasks")

PROBE = r"""
import json, sys, io, contextlib
eager = sys.argv[1] == "eager"
sys.argv = ["glotbench", *sys.argv[2:]]
from glotbench import cli
if eager:
    cli._register()
out = io.StringIO()
code = 0
with contextlib.redirect_stdout(out):
    try:
        cli.main()
    except SystemExit as e:
        code = e.code or 0
mods = sorted(m for m in sys.modules if m.startswith("glotbench.cli.") or m.split(".")[0] in HEAVY or m in HEAVY)
print(json.dumps({"out": out.getvalue(), "code": code, "mods": mods}))
""".replace("HEAVY", repr(HEAVY))


def probe(mode: str, *args: str) -> dict:
    env = {**os.environ, "PYTHONPATH": SRC, "NO_COLOR": "1", "COLUMNS": "120", "TERM": "dumb"}
    r = subprocess.run([sys.executable, "-c", PROBE, mode, *args], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_version_imports_no_command_module():
    got = probe("lazy", "--version")
    assert got["out"].startswith("glotbench ") and got["code"] == 0
    assert got["mods"] == [], got["mods"]


def test_help_imports_nothing_heavy_and_equals_the_eager_help():
    lazy, eager = probe("lazy", "--help"), probe("eager", "--help")
    assert lazy["mods"] == ["glotbench.cli.command_help"], lazy["mods"]  # the source reader (ast), no command
    assert "glotbench.cli.run" in eager["mods"]  # the eager side really imported the commands
    assert lazy["out"] == eager["out"]
    for name in ("run", "tasks", "runs", "judge", "serve", "admin", "analyze", "build", "data"):
        assert f" {name} " in lazy["out"]
    for old in ("export", "merge", "report", "compare-judges", "judge-pairwise", "translate"):  # hidden aliases
        assert f" {old} " not in lazy["out"]


def test_a_command_loads_its_own_modules_only():
    got = probe("lazy", "runs", "merge", "--help")
    assert got["code"] == 0 and "shard journals" in got["out"]
    assert "glotbench.cli.merge_cmd" in got["mods"] and "glotbench.cli.serve" not in got["mods"]
    assert "glotbench.cli.judge_cmd" not in got["mods"]


def _tree() -> dict:
    """{top-level name: [its shown sub-commands] or None for a command} with every module imported."""
    code = ("import json; from glotbench.cli import _register, app; _register()\n"
            "from typer.main import get_group; g = get_group(app)\n"
            "print(json.dumps({n: [s for s, x in c.commands.items() if not x.hidden] if hasattr(c, 'commands') "
            "else None for n, c in g.commands.items() if not c.hidden}))")
    r = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": SRC}, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_the_table_names_exactly_what_the_modules_register_and_each_group_has_its_page():
    """COMMANDS (name -> modules, no help typed) lists every top-level command the modules add, and no
    other; `glotbench NOUN --help` lists the noun's sub-commands."""
    from glotbench.cli import COMMANDS

    tree = _tree()
    assert sorted(tree) == sorted(COMMANDS)
    assert set(tree["runs"]) == {"report", "compare", "export", "merge", "doctor", "submission", "estimate"}
    assert set(tree["judge"]) == {"rerun", "compare", "pairwise"} and set(tree["tasks"]) == {"list", "import"}
    for noun, subs in tree.items():
        if subs is None:
            continue
        got = probe("lazy", noun, "--help")
        assert got["code"] == 0, noun
        listed = [line.split()[1] for line in got["out"].splitlines() if line.startswith("│ ") and len(line.split()) > 1]
        assert set(subs) <= set(listed), (noun, subs, listed)


def test_tasks_listing_imports_no_model_backend_and_no_data_library():
    """`glotbench tasks` reads the task files (and item counts): no HTTP client, llama.cpp binding,
    model backend, datasets/pandas or scikit-learn/scipy is imported for it."""
    env = {**os.environ, "PYTHONPATH": SRC}
    code = ("import sys, io, contextlib\nsys.argv = ['glotbench', 'tasks', '--plain']\nfrom glotbench import cli\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    try:\n        cli.main()\n    except SystemExit as e:\n        assert not e.code, e.code\n"
            "print(' '.join(sorted(sys.modules)))")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    mods = set(r.stdout.split())
    assert "glotbench.tasks.registry" in mods  # it did list the tasks
    unwanted = {"aiohttp", "llama_cpp", "datasets", "pandas", "pyarrow", "sklearn", "scipy", "torch", "transformers",
                "anthropic", "glotbench.models.openai_compat", "glotbench.models.llamacpp", "glotbench.models.hf",
                "glotbench.models.anthropic_api", "glotbench.engine.session"}
    assert not (mods & unwanted), sorted(mods & unwanted)
