"""The old command spellings of the previous README (before the nouns of issue #52) still run, for one
release, as hidden aliases: in a fresh process each prints exactly one line on stderr naming the new
command, then gives what the new spelling gives (exit code, stdout, the rest of stderr, the files it
writes). Both spellings run in the same folder, set back to the same committed runs before each, so
paths in the output are equal too. A misspelt command gets the nearest commands, closest first."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

FIX = Path(__file__).parent / "fixtures"
SRC = str(Path(__file__).resolve().parents[1] / "src")


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "OPENAI_API_KEY": "x", "NO_COLOR": "1", "COLUMNS": "120", "TERM": "dumb",
           "PYTHONPATH": os.pathsep.join(p for p in (SRC, os.environ.get("PYTHONPATH", "")) if p)}
    return subprocess.run([sys.executable, "-m", "glotbench", *args], env=env, capture_output=True, text=True,
                          cwd=cwd, timeout=300)


def _fresh(home: Path) -> Path:
    """``home/w`` holding copies of the committed runs (and a second factuality run, ``f2``)."""
    work = home / "w"
    if work.exists():
        shutil.rmtree(work)
    shutil.copytree(FIX / "suite_runs", work)
    shutil.copytree(work / "factuality", work / "f2")
    shutil.copy(FIX / "lm_eval_tasks" / "arc_easy.yaml", work / "arc_easy.yaml")
    return work


def _files(work: Path) -> dict[str, bytes]:
    return {str(p.relative_to(work)): p.read_bytes() for p in sorted(work.rglob("*"))
            if p.is_file() and p.suffix in (".jsonl", ".csv", ".yaml", ".json") and "journal" not in p.name}


def _steady(text: str) -> str:
    """Without the progress bar's lines (their animation frame differs from run to run)."""
    return "".join(line for line in text.splitlines(keepends=True) if "━" not in line)


@pytest.fixture(scope="module")
def stub():
    from glotbench.testing.servers import start_stub, stop

    base, proc = start_stub("--answer", "A")
    try:
        yield base
    finally:
        stop(proc)


# (old words, new words, the rest of the command line); {base} is the stub's URL
CASES = [
    ("export", "runs export", "mm_eval -o s.jsonl"),
    ("export", "runs export", "mm_eval --format csv -o s.csv"),
    ("doctor", "runs doctor", "factuality"),
    ("merge", "runs merge", "factuality"),  # no shards: the same one-line refusal, exit 2
    ("report", "runs report", "mm_eval hulu -o report.html"),
    ("compare", "runs compare", "--paired mm_eval mm_eval"),
    ("submission", "runs submission", "hulu -o subs"),
    ("estimate", "runs estimate", "--model embedded --tasks mm_eval.knowledge --limit 5"),
    ("judge", "judge rerun", "factuality --judge openai:judge2 --judge-base-url {base}"),
    ("compare-judges", "judge compare", "factuality"),
    ("judge-pairwise", "judge pairwise", "factuality f2 --judge openai:pj --judge-base-url {base}"),
    ("translate", "build translate", "--help"),
    ("tasks import-lm-eval", "tasks import", "arc_easy.yaml -o arc.yaml"),
]


@pytest.mark.parametrize("old,new,rest", CASES, ids=[f"{o} {r.split()[0]}" for o, _, r in CASES])
def test_an_old_spelling_runs_the_new_command_after_one_line(old, new, rest, stub, tmp_path):
    if old == "estimate":
        from glotbench.paths import find_data_root

        if find_data_root() is None:
            pytest.skip("benchmark data not found: put the shared data folder at ../shared/data or set GLOTBENCH_DATA")
    words = rest.format(base=stub).split()
    results = []
    for spelling in (new, old):
        work = _fresh(tmp_path)
        if spelling.split()[-1] in ("compare-judges", "compare") and "judge" in spelling:
            pre = _cli("judge", "rerun", "factuality", "--judge", "openai:judge2", "--judge-base-url", stub, cwd=work)
            assert pre.returncode == 0, pre.stderr[-2000:]
        done = _cli(*spelling.split(), *words, cwd=work)
        assert "Traceback" not in done.stderr, done.stderr[-2000:]
        results.append((done, _files(work)))
    (got_new, files_new), (got_old, files_old) = results
    notice, *rest_of_stderr = got_old.stderr.splitlines(keepends=True)
    assert notice == f"note: `glotbench {old}` is now `glotbench {new}`; the old spelling goes in the next release\n"
    assert _steady("".join(rest_of_stderr)) == _steady(got_new.stderr)
    assert "is now" not in got_new.stderr  # the new spelling prints no notice
    assert (got_old.returncode, got_old.stdout) == (got_new.returncode, got_new.stdout)
    assert files_old == files_new
    if old not in ("merge",):
        assert got_new.returncode == 0, got_new.stderr[-2000:]


def test_judge_with_a_run_directory_is_judge_rerun(stub, tmp_path):
    """`glotbench judge RUN_DIR ...` (judge was a command, now a group): rerun, after one line."""
    work = _fresh(tmp_path)
    done = _cli("judge", "factuality", "--judge", "openai:judge2", "--judge-base-url", stub, cwd=work)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stderr.splitlines()[0] == ("note: `glotbench judge` is now `glotbench judge rerun`; "
                                           "the old spelling goes in the next release")
    assert _cli("judge", cwd=work).stdout.count("rerun") == 1  # no arguments: the group's help, no notice


def test_tasks_with_a_glob_lists_without_a_notice(tmp_path):
    a, b = _cli("tasks", "mm_eval.*", "--plain", cwd=tmp_path), _cli("tasks", "list", "mm_eval.*", "--plain", cwd=tmp_path)
    assert a.returncode == b.returncode == 0 and a.stdout == b.stdout and "mm_eval.syntax" in a.stdout
    assert a.stderr == b.stderr


@pytest.mark.parametrize("args,hint", [
    (["reprot"], "did you mean runs report"),
    (["rnus"], "did you mean runs?"),
    (["runs", "reprot"], "did you mean report"),
    (["judge", "pairwse"], "did you mean pairwise?"),
    (["build", "reviw"], "did you mean review?"),
    (["data", "pul"], "did you mean pull"),
])
def test_a_misspelt_command_gets_the_nearest_first(args, hint, tmp_path):
    done = _cli(*args, cwd=tmp_path)
    assert done.returncode == 2 and hint in done.stderr, done.stderr


def test_no_doc_recipe_uses_an_old_spelling():
    """README and docs recipes are on the new spellings (the aliases are for users' own scripts)."""
    import shlex

    from docs_recipes import all_blocks
    from glotbench.cli import ALIASES

    old = []
    for block in all_blocks():
        for command in block.commands:
            words = shlex.split(command, comments=True)
            for k, w in enumerate(words[:-1]):
                nxt = words[k + 1:k + 3]
                if w == "glotbench" and (nxt[0] in ALIASES or nxt[:2] == ["tasks", "import-lm-eval"]
                                         or (nxt[0] == "judge" and nxt[1:2] and nxt[1] not in ("rerun", "compare",
                                                                                            "pairwise", "--help"))):
                    old.append(f"{block.id}: {command}")
    assert old == [], old
