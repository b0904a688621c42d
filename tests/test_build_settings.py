"""The `build` steps' flags and settings (issue #52): each step lists its input and output, the option
groups' flags, --dry-run, --language where it must be told, and at most two flags that define it; every
other knob is a setting (`--set NAME=VALUE`, listed under Settings in its help, the old flag still
accepted unlisted). docs/cli-options.md states the rule; this test holds every step to it, and checks in
fresh processes that a setting and its old flag give the same result."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from test_build_qa import cli, lines
from test_cli_flags import _leaves, shown_options

FIX = Path(__file__).parent / "fixtures" / "build"

# the output (the input is the argument), the shown group flags, --dry-run, --language, --set: any step may list these
COMMON = {"--output", "--model", "--base-url", "--model-args", "--judge", "--judge-args", "--concurrency",
          "--journal", "--dry-run", "--language", "--set"}
# a flag standing for the input (the corpus of retrieval-check), and at most two flags defining the step
OWN = {
    "passages": {"--ctkfacts"}, "qa": {"--passages"}, "retrieval-check": {"--passages"},
    "criteria": {"--criterion", "--criterion-file"}, "select": {"--k"}, "classify": {"--labels"},
    "cloze": {"--vocab"}, "task": {"--name"}, "filter": {"--sequential", "--difficulty"},
    "translate": {"--task", "--to"}, "review import": {"--kind"},
}
# the build sub-tree's shown options: 188 before the settings (issue #52); may only shrink
BUDGET = 88


@pytest.fixture(scope="module")
def build_steps():
    import typer

    from glotbench import cli as glot

    glot._register()
    leaves = [(p, c) for p, c in _leaves(typer.main.get_command(glot.app)) if p.startswith("build ")]
    return leaves, shown_options(leaves)


def test_every_build_step_lists_only_what_the_rule_allows(build_steps):
    leaves, options = build_steps
    per: dict[str, list[str]] = {p: [] for p, _ in leaves}
    for path, o in options:
        per[path].append(next(n for n in o.opts if n.startswith("--")))
    print("\n" + "\n".join(f"{len(f):3d} {p}: {' '.join(f)}" for p, f in per.items()))
    print(f"build sub-tree: {len(options)} shown options over {len(leaves)} steps (188 before the settings)")
    for path, flags in per.items():
        step = path.removeprefix("build ")
        extra = set(flags) - COMMON - OWN.get(step, set())
        assert not extra, f"{path}: {sorted(extra)} should be settings (docs/cli-options.md)"
        assert len(OWN.get(step, set()) - {"--passages", "--ctkfacts"}) <= 2
    assert len(options) <= BUDGET


def test_every_build_setting_keeps_its_old_flag_and_says_its_default(build_steps):
    """Each setting of a build step is listed with its help under Settings and still parses as its flag."""
    leaves, _ = build_steps
    n = 0
    for path, cmd in leaves:
        names = getattr(cmd.callback, "glotbench_settings", None) or []
        hidden = {p.name: p for p in cmd.params if getattr(p, "hidden", False)}
        for name in names:
            n += 1
            assert name in hidden and any(f.startswith("--") for f in hidden[name].opts), (path, name)
            line = next(x for x in (cmd.help or "").splitlines() if x.startswith(f"  {name}: "))
            assert len(line) > len(name) + 12, (path, name, line)  # a help, not just the name
    print(f"\nbuild settings: {n}")
    assert n >= 60


def _same(tmp_path, name: str, new: list[str], old: list[str], out: str) -> str:
    a = cli(*new, "-o", f"new_{out}", cwd=tmp_path)
    b = cli(*old, "-o", f"old_{out}", cwd=tmp_path)
    assert a.stdout.replace("new_", "") == b.stdout.replace("old_", ""), name
    return (tmp_path / f"new_{out}").read_text(encoding="utf-8")


def test_a_setting_and_its_old_flag_give_the_same_result(tmp_path):
    """winograd's field names, dedup's threshold and field, review import's tallying knobs: --set NAME=VALUE
    and the old flag write the same file; cloze's dry run counts the same."""
    schemas = [{"id": "1", "sentence": "The trophy doesn't fit into the brown suitcase because it is too large.",
                "pronoun": "it", "a": "the trophy", "b": "the suitcase", "right": "the trophy"}]
    (tmp_path / "s.jsonl").write_text("".join(json.dumps(x) + "\n" for x in schemas), encoding="utf-8")
    got = _same(tmp_path, "winograd", ["winograd", "-i", "s.jsonl", "--set", "candidates=a,b",
                                       "--set", "correct_field=right,pronoun_field=pronoun"],
                ["winograd", "-i", "s.jsonl", "--candidates", "a,b", "--correct-field", "right", "--pronoun-field", "pronoun"],
                "pairs.jsonl")
    assert [p["label"] for p in map(json.loads, got.splitlines())] == ["1", "0"]

    qs = ["When was Charles Bridge built?", "When was the Charles Bridge built?", "Who wrote Rusalka?"]
    (tmp_path / "q.jsonl").write_text("".join(json.dumps({"id": f"q{i}", "question": q, "text": q}) + "\n"
                                              for i, q in enumerate(qs)), encoding="utf-8")
    _same(tmp_path, "dedup", ["dedup", "-i", "q.jsonl", "--set", "threshold=50,field=text"],
          ["dedup", "-i", "q.jsonl", "--threshold", "50", "--field", "text"], "d.jsonl")
    assert [it["id"] for it in lines(tmp_path / "new_d.jsonl")] == ["q0", "q2"]

    sheets = [tmp_path / f"{a}.csv" for a in "abc"]
    for sheet, labels in zip(sheets, (["x", "y"], ["x", "y"], ["x", "z"])):
        sheet.write_text("id,label\n" + "".join(f"i{k},{v}\n" for k, v in enumerate(labels)), encoding="utf-8")
    _same(tmp_path, "review import", ["review", "import", *map(str, sheets), "--kind", "label", "--set",
                                      "unanimous=true,min_annotators=3"],
          ["review", "import", *map(str, sheets), "--kind", "label", "--unanimous", "--min-annotators", "3"], "l.jsonl")
    assert [it["id"] for it in lines(tmp_path / "new_l.jsonl")] == ["i0"]

    base = ["cloze", str(FIX / "sentences.txt"), "--vocab", str(FIX / "vocab.tsv"), "-l", "cs", "--dry-run", "-o", "c.jsonl"]
    a, b = cli(*base, "--set", "min_words=5,seed=7", cwd=tmp_path), cli(*base, "--min-words", "5", "--seed", "7", cwd=tmp_path)
    assert a.stdout == b.stdout and "dropped by min_words" in a.stdout


def test_a_misspelt_or_mistyped_setting_is_one_line_before_anything_runs(tmp_path):
    base = ["cloze", str(FIX / "sentences.txt"), "--vocab", str(FIX / "vocab.tsv"), "-l", "cs", "-o", "c.jsonl"]
    bad = cli(*base, "--set", "min_word=5", cwd=tmp_path, check=False)
    assert bad.returncode == 2 and "--set min_word: not a setting of this command; did you mean min_words" in bad.stderr
    bad = cli(*base, "--set", "seed=many", cwd=tmp_path, check=False)
    assert bad.returncode == 2 and "--set seed='many'" in bad.stderr
    assert not (tmp_path / "c.jsonl").exists()


def test_the_input_is_the_argument_and_its_old_flag_still_works(tmp_path):
    """`build dedup q.jsonl` and `build dedup -i q.jsonl` write the same file; the same file twice is fine,
    two different files or none is one line."""
    (tmp_path / "q.jsonl").write_text("".join(json.dumps({"id": f"q{i}", "question": q}) + "\n"
                                              for i, q in enumerate(["Who?", "Who?", "When?"])), encoding="utf-8")
    _same(tmp_path, "dedup", ["dedup", "q.jsonl"], ["dedup", "-i", "q.jsonl"], "d.jsonl")
    assert [it["id"] for it in lines(tmp_path / "new_d.jsonl")] == ["q0", "q2"]
    assert cli("dedup", "q.jsonl", "--input", "q.jsonl", "-o", "x.jsonl", cwd=tmp_path).returncode == 0
    two = cli("dedup", "q.jsonl", "-i", "new_d.jsonl", "-o", "y.jsonl", cwd=tmp_path, check=False)
    assert two.returncode == 2 and "build dedup: give the items once (the argument, or -i/--input)" in two.stderr
    none = cli("winograd", "-o", "y.jsonl", cwd=tmp_path, check=False)
    assert none.returncode == 2 and "build winograd: which schemas? Give the file as the argument" in none.stderr
    assert not (tmp_path / "y.jsonl").exists()
