"""The whole command tree's flags, walked from click (issue #52): every leaf command (the hidden
`tasks import-lm-eval` included) and every shown option, loaded as `glotbench NAME` loads them.

It prints the totals (leaf commands, options, distinct flags, short flags), every flag name with
more than one meaning (help, type or default differ across commands) and every short flag with more
than one long form. It asserts: one long form per short flag; the old spellings (--lang, --out) are
hidden aliases, not shown flags; and the flags with several meanings are exactly KNOWN_SEVERAL_MEANINGS,
a set that may only shrink (one meaning per flag needs the shared option groups of issue #52)."""

from __future__ import annotations

import os
import subprocess
import sys
import types
import typing
from collections import defaultdict
from pathlib import Path

import pytest

# Flag names whose help, type or default differ between commands today. Remove a name once every
# command spelling it agrees; never add one (give the new option a name of its own, or the same meaning).
KNOWN_SEVERAL_MEANINGS = {
    "--against", "--against-field", "--field", "--format", "--json", "--k", "--label-field", "--limit", "--metric",
    "--n-boot", "--name", "--passages", "--plain", "--seed", "--suite", "--task", "--tasks", "--title",
}


def _leaves(cmd, path=()):
    ctx = type(cmd).context_class(cmd)
    if hasattr(cmd, "list_commands"):  # a group (click's, or the copy recent typer ships)
        for name in cmd.list_commands(ctx):
            yield from _leaves(cmd.get_command(ctx, name), (*path, name))
    else:
        yield " ".join(path), cmd


def _type(option) -> str:
    if getattr(option, "type", None) is not None:  # click's parameters
        return option.type.name + ("[]" if option.multiple else "")
    ann = option.type_descriptor.annotation  # typer >= 0.24's own
    if typing.get_origin(ann) in (typing.Union, types.UnionType):
        ann = next(a for a in typing.get_args(ann) if a is not type(None))
    return getattr(ann, "__name__", str(ann)) + ("[]" if getattr(option, "multiple", False) else "")


@pytest.fixture(scope="module")
def tree():
    import typer

    from glotbench import cli

    cli._register()  # every command module, as `glotbench NAME` imports it
    leaves = list(_leaves(typer.main.get_command(cli.app)))
    options = [(path, o) for path, cmd in leaves for o in cmd.params
               if getattr(o, "param_type_name", "") == "option" and not o.hidden]
    hidden = {f for _, cmd in leaves for o in cmd.params if getattr(o, "hidden", False) for f in o.opts}
    return leaves, options, hidden


def test_totals_short_flags_and_meanings(tree):
    leaves, options, hidden = tree
    meanings: dict[str, set] = defaultdict(set)
    where: dict[str, set] = defaultdict(set)
    shorts: dict[str, set] = defaultdict(set)
    for path, o in options:
        names = [*o.opts, *o.secondary_opts]
        longs = [n for n in names if n.startswith("--")]
        for n in longs:
            meanings[n].add((o.help or "", _type(o), repr(o.default)))
            where[n].add(path)
        for s in (n for n in names if not n.startswith("--")):
            shorts[s].add(longs[0] if longs else s)
    several = {f for f, m in meanings.items() if len(m) > 1}
    print(f"\nleaf commands: {len(leaves)} · options: {len(options)} · distinct flags: {len(meanings)} · "
          f"short flags: {len(shorts)}")
    print("flags with several meanings:", ", ".join(f"{f} ({len(meanings[f])} on {len(where[f])} commands)"
                                                     for f in sorted(several)))
    two_long = {s: sorted(longs) for s, longs in shorts.items() if len(longs) > 1}
    print("short flags with several long forms:", two_long or "none")

    assert not two_long, f"a short flag means one long form across the CLI: {two_long}"
    assert shorts["-o"] == {"--output"} and shorts["-t"] == {"--tasks"} and shorts["-l"] == {"--language"}
    assert "--lang" not in meanings and "--out" not in meanings, "old spellings are hidden aliases only"
    assert {"--lang", "--out", "--task"} <= hidden  # ... and still accepted (the docs' recipes used them)
    assert several <= KNOWN_SEVERAL_MEANINGS, f"new flag(s) with several meanings: {sorted(several - KNOWN_SEVERAL_MEANINGS)}"
    assert not KNOWN_SEVERAL_MEANINGS - several, \
        f"now one meaning each: drop from KNOWN_SEVERAL_MEANINGS: {sorted(KNOWN_SEVERAL_MEANINGS - several)}"


def _cli(*args, cwd):
    src = str(Path(__file__).resolve().parents[1] / "src")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH", "")) if p)}
    return subprocess.run([sys.executable, "-m", "glotbench", *map(str, args)], env=env, capture_output=True,
                          text=True, cwd=cwd, timeout=300)


def test_old_spellings_still_run_as_hidden_aliases(tmp_path):
    """--lang (build cloze) and --out (tasks import-lm-eval): the same output as --language / --output."""
    fix = Path(__file__).parent / "fixtures"
    cloze = ["build", "cloze", fix / "build" / "sentences.txt", "--vocab", fix / "build" / "vocab.tsv", "--dry-run",
             "-o", tmp_path / "c.jsonl"]
    new, old = _cli(*cloze, "--language", "cs", cwd=tmp_path), _cli(*cloze, "--lang", "cs", cwd=tmp_path)
    assert new.returncode == old.returncode == 0, new.stderr + old.stderr
    assert new.stdout == old.stdout and "4 items kept" in new.stdout
    missing = _cli(*cloze, cwd=tmp_path)
    assert missing.returncode == 2 and "--language" in missing.stderr
    yaml = fix / "lm_eval_tasks" / "arc_easy.yaml"
    a = _cli("tasks", "import-lm-eval", yaml, "--output", tmp_path / "a.yaml", cwd=tmp_path)
    b = _cli("tasks", "import-lm-eval", yaml, "--out", tmp_path / "b.yaml", cwd=tmp_path)
    assert a.returncode == b.returncode == 0, a.stderr + b.stderr
    assert (tmp_path / "a.yaml").read_text(encoding="utf-8") == (tmp_path / "b.yaml").read_text(encoding="utf-8")
