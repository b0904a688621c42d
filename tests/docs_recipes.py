"""The shell recipes in README.md and docs/*.md, read as the test of every documented recipe
(tests/test_docs_recipes.py) runs them: offline, against the stub server, ``--limit`` capped.

A *command block* is a fenced block (``bash``, ``sh``, ``shell``, ``console`` or no language) or
an indented code block with at least one command line: a line (``\\`` continuations joined) whose
first word, after any ``VAR=value`` prefixes, is ``glotbench``, ``python``, ``python3``, ``pip``,
``curl``, ``createdb`` or ``echo``, or a lone ``VAR=value`` assignment. Other lines in a block (a
command's printed output, comments) are not run.

Markers, HTML comments (invisible on the rendered page) on the lines right before a block:

``<!-- recipe: offline-skip: REASON -->``
    the whole block is not run (a real hub id, a GPU, a cloud API, Slurm...).
``<!-- recipe: skip-line /REGEX/: REASON -->``
    command lines matching ``REGEX`` (Python ``re.search``) are not run; repeat for several.

Every command line is either run or covered by a marker with a reason; the test counts both.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHELL_LANGS = {"bash", "sh", "shell", "console", ""}
COMMANDS = {"glotbench", "python", "python3", "pip", "curl", "createdb", "echo"}
LIMIT_CAP = 3
_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=\S*$")
_SKIP_BLOCK = re.compile(r"<!--\s*recipe:\s*offline-skip:\s*(.+?)\s*-->")
_SKIP_LINE = re.compile(r"<!--\s*recipe:\s*skip-line\s+/(.+?)/:\s*(.+?)\s*-->")


@dataclass
class Block:
    path: str  # relative to the repo
    line: int  # 1-based line of the block's first line
    commands: list[str]
    skip_reason: str | None = None
    skip_lines: list[tuple[re.Pattern, str]] = field(default_factory=list)

    @property
    def id(self) -> str:
        return f"{self.path}:{self.line}"

    def runnable(self) -> list[str]:
        return [c for c in self.commands if self.skip_reason is None and not any(p.search(c) for p, _ in self.skip_lines)]

    def skipped(self) -> list[tuple[str, str]]:
        if self.skip_reason is not None:
            return [(c, self.skip_reason) for c in self.commands]
        out = []
        for c in self.commands:
            reasons = [r for p, r in self.skip_lines if p.search(c)]
            if reasons:
                out.append((c, reasons[0]))
        return out


def doc_files() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def _is_command(line: str) -> bool:
    try:
        words = shlex.split(line, comments=True)
    except ValueError:
        return False
    if not words:
        return False
    if len(words) == 1 and _ASSIGN.match(words[0]):
        return True
    while words and _ASSIGN.match(words[0]):
        words = words[1:]
    return bool(words) and words[0] in COMMANDS


def _command_lines(body: list[str]) -> list[str]:
    out, cur = [], ""
    for raw in body:
        line = raw.rstrip()
        if cur:
            cur += " " + line.strip()
        else:
            cur = line.strip()
        if cur.endswith("\\"):
            cur = cur[:-1].rstrip()
            continue
        if cur and _is_command(cur):
            out.append(cur)
        cur = ""
    if cur and _is_command(cur):
        out.append(cur)
    return out


def _markers(lines: list[str], start: int) -> tuple[str | None, list[tuple[re.Pattern, str]]]:
    """Markers on the comment lines just above line index ``start`` (blank lines allowed between)."""
    reason, per_line = None, []
    i = start - 1
    while i >= 0 and (not lines[i].strip() or lines[i].strip().startswith("<!--")):
        m = _SKIP_BLOCK.search(lines[i])
        if m:
            reason = m.group(1)
        m = _SKIP_LINE.search(lines[i])
        if m:
            per_line.append((re.compile(m.group(1)), m.group(2)))
        i -= 1
    return reason, per_line


def blocks_of(path: Path) -> list[Block]:
    lines = path.read_text(encoding="utf-8").split("\n")
    rel = str(path.relative_to(REPO))
    out: list[Block] = []
    i, prev_blank, in_list = 0, True, False
    while i < len(lines):
        line = lines[i]
        fence = re.match(r"^(\s*)```(\S*)\s*$", line)
        if fence:
            j = i + 1
            while j < len(lines) and not re.match(r"^\s*```\s*$", lines[j]):
                j += 1
            if fence.group(2) in SHELL_LANGS:
                cmds = _command_lines(lines[i + 1:j])
                if cmds:
                    out.append(Block(rel, i + 1, cmds, *_markers(lines, i)))
            i, prev_blank = j + 1, False
            continue
        if prev_blank and not in_list and line.startswith("    ") and line.strip():
            j, body = i, []
            while j < len(lines) and (lines[j].startswith("    ") or not lines[j].strip()):
                body.append(lines[j][4:])
                j += 1
            cmds = _command_lines(body)
            if cmds:
                out.append(Block(rel, i + 1, cmds, *_markers(lines, i)))
            i, prev_blank = j, True
            continue
        if line.strip():
            # an indented line under a list item continues the item, it is no code block
            in_list = bool(re.match(r"^\s*([*+-]|\d+[.)])\s", line)) or (in_list and line.startswith(" "))
        prev_blank = not line.strip()
        i += 1
    return out


def all_blocks() -> list[Block]:
    return [b for p in doc_files() for b in blocks_of(p)]


# ----------------------------------------------------------------------------- rewriting to run offline

MODEL_FLAGS = ("--model", "-m")
MODEL_COMMANDS = ("run", "translate", "build")  # estimate keeps its model: it only counts tokens
NOUNS = ("runs", "build")  # groups whose verb the rewriting looks at (`runs estimate`, `build translate`)


def _pairs(tokens: list[str], flags: tuple[str, ...]) -> list[int]:
    return [k for k, t in enumerate(tokens[:-1]) if t in flags]


def _drop(tokens: list[str], flag: str) -> list[str]:
    out, k = [], 0
    while k < len(tokens):
        if tokens[k] == flag and k + 1 < len(tokens):
            k += 2
            continue
        if tokens[k].startswith(flag + "="):
            k += 1
            continue
        out.append(tokens[k])
        k += 1
    return out


def rewrite_glotbench(args: list[str], stub: str, places: dict[str, list[str]]) -> list[str]:
    """One ``glotbench ...`` argument list made offline: models and judges to the stub server
    (``recorded:`` files kept), every server URL to the stub, ``--limit`` capped at
    :data:`LIMIT_CAP` (and added to ``run``), placeholders (``RUN_DIR``...) to prepared paths."""
    args = [x for a in args for x in places.get(a, [a])]
    args = [re.sub(r"(base_url=)https?://\S+", lambda m: m.group(1) + stub, a) for a in args]
    sub = args[0] if args else ""
    if sub in NOUNS and len(args) > 1:  # `runs estimate`, `build translate`: the verb decides
        sub = args[1] if args[1] in ("estimate", "translate") else sub
    if sub in MODEL_COMMANDS:
        if sub in ("run", "translate") and not any(a in MODEL_FLAGS for a in args):
            args += ["--model", "openai:stub"]
        args = _drop(args, "--base-url")
        for k in _pairs(args, MODEL_FLAGS):
            if not args[k + 1].startswith("recorded:"):
                args[k + 1] = "openai:stub" + ("" if ";" not in args[k + 1] else args[k + 1][args[k + 1].index(";"):])
        if any(a in MODEL_FLAGS and not b.startswith("recorded:") for a, b in zip(args, args[1:])):
            args += ["--base-url", stub]
    if "--judge" in args:
        args = _drop(args, "--judge-base-url")
        for k in _pairs(args, ("--judge",)):
            args[k + 1] = "openai:stub"
        args += ["--judge-base-url", stub]
    if sub == "run" and "loglikelihood" in args:  # log-probabilities: the embedded model (the stub has none)
        for k in _pairs(args, MODEL_FLAGS):
            args[k + 1] = "embedded"
        args = _drop(args, "--base-url")
    if sub in ("run", "estimate", "translate"):
        for k in _pairs(args, ("--limit", "--sample")):
            args[k + 1] = str(min(int(args[k + 1]), LIMIT_CAP))
        sampled = "--sample" in args
        for k in _pairs(args, ("--set",)):  # the setting spelling: --set sample=N,...
            capped = re.sub(r"(^|,)sample=(\d+)", lambda m: f"{m.group(1)}sample={min(int(m.group(2)), LIMIT_CAP)}",
                            args[k + 1])
            sampled, args[k + 1] = sampled or bool(re.search(r"(^|,)sample=", capped)), capped
        if sub != "estimate" and "--limit" not in args and not sampled:  # sample N chooses the items
            args += ["--limit", str(LIMIT_CAP)]
    return args


def _join(words: list[str]) -> str:
    """``shlex.join``, but a word holding ``$`` goes in double quotes, so ``$D`` still expands."""
    return " ".join('"' + w.replace('"', '\\"') + '"' if "$" in w else shlex.quote(w) for w in words)


def output_of(args: list[str]) -> str | None:
    """The ``-o`` / ``--output`` of a ``glotbench run`` argument list."""
    for k in _pairs(args, ("-o", "--output")):
        return args[k + 1]
    return None


def with_output(command: str, name: str) -> tuple[str, str | None]:
    """``command`` with an ``-o name`` added to its ``glotbench run`` when it has none, and the
    run's output folder (None when the command runs no ``glotbench run``)."""
    words = shlex.split(command, comments=True)
    if "glotbench" not in words:
        return command, None
    k = words.index("glotbench")
    args = words[k + 1:]
    if not args or args[0] != "run":
        return command, None
    cut = min([i for i, w in enumerate(args) if w in ("&&", "||", "|", ";")] or [len(args)])
    out = output_of(args[:cut])
    if out is not None:
        return command, out
    return _join([*words[:k + 1], *args[:cut], "-o", name, *args[cut:]]), name


def to_script(command: str, stub: str, places: dict[str, list[str]]) -> str:
    """The shell line to run: each ``glotbench`` segment of a ``&&`` chain rewritten."""
    words = shlex.split(command, comments=True)
    segments, cur = [], []
    for w in words:
        if w in ("&&", "||", "|", ";"):
            segments.append((cur, w))
            cur = []
        else:
            cur.append(w)
    segments.append((cur, ""))
    parts = []
    for seg, sep in segments:
        env = []
        while seg and _ASSIGN.match(seg[0]) and len(seg) > 1:
            env.append(seg.pop(0))
        if seg and seg[0] == "glotbench":
            seg = ["glotbench", *rewrite_glotbench(seg[1:], stub, places)]
        elif seg and seg[0] in ("python", "python3") and "-c" in seg:  # the Python API: its limit= capped too
            seg = [re.sub(r"\blimit=(\d+)", lambda m: f"limit={min(int(m.group(1)), LIMIT_CAP)}", w) for w in seg]
        parts.append(" ".join([*env, _join(seg)]) + (f" {sep}" if sep else ""))
    return " ".join(parts)
