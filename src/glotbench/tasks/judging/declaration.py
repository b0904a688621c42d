"""A judge declared in YAML: the grading prompt, the grades (or a numeric scale), how a reply is read,
how an unreadable reply counts, and the metrics it feeds (docs/adding-a-task.md, "A judged task").

A task file holds one under ``judge:`` (a mapping), or names a judge file by path
(``judge: rubric.judge.yaml``, relative to the task file). Judge files end in ``.judge.yaml``, so the
task scan skips them; a task class may also find one by its ``name`` among the task folders
(:func:`find_judge_file`). Every name is checked when the task loads: a problem is one line naming
the file and the field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import jinja2
from jinja2 import meta
from pydantic import BaseModel, ConfigDict, Field

from glotbench.errors import TaskSpecError
from glotbench.extract import bounded_regex
from glotbench.prompts import sandbox
from glotbench.yamlfile import read_mapping, validate

JUDGE_SUFFIX = ".judge.yaml"
METRIC_KINDS = ("score", "shares", "unreadable")
# what a jinja2 grading prompt can name besides the task's mapped fields
# (``turn``, ``dialogue``, ``history``: the dialogue so far, for a multi-turn task's judge: tasks/judged.py)
PROMPT_VARIABLES = ("question", "reference", "target", "answer", "prompt", "lang", "turn", "dialogue", "history")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PromptTurns(_Strict):
    """One language's grading prompt: jinja2 templates (``question``, ``reference``, ``answer``,
    ``prompt`` (the model's user turn), ``lang`` and every field the task maps)."""

    system: str | None = None
    user: str


class PromptFileSpec(_Strict):
    """A grading prompt kept in a JSON file shipped with glotbench or under the data root
    (``paths.benchmark_file``), filled as the file's own code fills it: ``format`` (``str.format``),
    ``substitute`` (each ``{name}`` replaced in one pass) or ``replace`` (``str.replace`` of each
    ``{name}`` in the order of ``placeholders``, over the text so far). ``keys``: dotted key paths whose
    texts, concatenated in order, are the user turn. ``placeholders``: judge variable (``question``,
    ``reference``, ``answer``, a field...) -> the file's name for it."""

    path: str
    # the folder of the file that declared ``path`` when the prompt file lies beside it (set by
    # :func:`anchor_prompt_file`, not written by users); left out of every dump, so of every hash: a
    # fingerprint does not depend on where the checkout lives
    base: str | None = Field(default=None, exclude=True)
    keys: list[str] = Field(min_length=1)
    style: Literal["format", "substitute", "replace"]
    placeholders: dict[str, str] = Field(min_length=1)
    system: str | None = None


class ReplySpec(_Strict):
    """How the judge's reply is read: ``regex`` (group 1 is the grade or the number), ``json_key``
    (a dotted key of the first JSON object in the reply), or ``rule``, a reply rule registered in
    Python (:data:`glotbench.tasks.judging.parse.PARSERS`) for rules a pattern cannot state."""

    regex: str | None = None
    # tried when ``regex`` finds nothing, or finds no number on a scale (a looser pattern, group 1)
    fallback_regex: str | None = None
    json_key: str | None = None
    rule: str | None = None
    # first: the first match counts; only: matches naming different values make the reply unreadable
    match: Literal["first", "only"] = "first"
    ignore_case: bool = False
    strip_thinking: bool = True  # read what follows a <think> trace


class ScaleSpec(_Strict):
    min: float
    max: float


class ExplicitScore(_Strict):
    score: float


class ExplicitGrade(_Strict):
    grade: str


class JudgeDecl(_Strict):
    name: str
    language: str | None = None  # the prompt used when the run names no --prompt-lang; default the task's
    prompt: dict[str, PromptTurns] | None = None  # language code -> prompt
    prompt_file: PromptFileSpec | None = None
    grades: dict[str, float] | None = None  # grade label -> score
    aliases: dict[str, str] = Field(default_factory=dict)  # what the reply may say -> grade label
    scale: ScaleSpec | None = None  # or a number read from the reply, in [min, max]
    # grade label -> CORRECT / INCORRECT / NOT_ATTEMPTED: the judge then also feeds CO / NA / IN / CGA / F
    # (automatic when the labels are those three names, in any case)
    three_way: dict[str, Literal["CORRECT", "INCORRECT", "NOT_ATTEMPTED"]] | None = None
    reply: ReplySpec
    # an unreadable reply: "exclude" (out of every denominator, counted), {grade: LABEL}, or {score: X}
    unreadable: Literal["exclude"] | ExplicitGrade | ExplicitScore
    metrics: list[Literal["score", "shares", "unreadable"]] = Field(default_factory=lambda: list(METRIC_KINDS))
    max_tokens: int = Field(512, ge=1)
    temperature: float = Field(0.0, ge=0)


THREE_WAY = ("CORRECT", "INCORRECT", "NOT_ATTEMPTED")


def three_way_map(decl: "JudgeDecl") -> dict[str, str] | None:
    """grade label -> CORRECT / INCORRECT / NOT_ATTEMPTED: the declaration's ``three_way``, or, when the
    labels are exactly those three names (any case, space or hyphen for the underscore), themselves;
    None otherwise (no CO / NA / IN / CGA / F)."""
    if decl.three_way is not None:
        return dict(decl.three_way)
    if not decl.grades:
        return None
    named = {g: g.strip().upper().replace(" ", "_").replace("-", "_") for g in decl.grades}
    return named if sorted(named.values()) == sorted(THREE_WAY) else None


def fingerprint_exclude(decl: "JudgeDecl") -> set[str]:
    """Fields left out of the declaration's hashes while unset (fields added later), so a task whose
    judge does not use them keeps its fingerprint."""
    return {"three_way"} if decl.three_way is None else set()


def _fail(where: str, field: str, msg: str) -> TaskSpecError:
    return TaskSpecError(f"{where}: field '{field}': {msg}")


def template_variables(source: str, where: str, field: str) -> set[str]:
    env = sandbox.environment(undefined=jinja2.StrictUndefined)
    try:
        tree = env.parse(source)
    except jinja2.TemplateSyntaxError as err:
        raise _fail(where, field, f"template syntax error line {err.lineno}: {err.message}") from None
    why = sandbox.check(source)
    if why is not None:
        raise _fail(where, field, why)
    return meta.find_undeclared_variables(tree)


def check_declaration(decl: JudgeDecl, where: str, prefix: str = "") -> None:
    """Names and combinations pydantic cannot check; ``prefix`` is ``"judge."`` inside a task file."""
    f = lambda name: prefix + name  # noqa: E731
    if (decl.prompt is None) == (decl.prompt_file is None):
        raise _fail(where, f("prompt"), "give exactly one of 'prompt' (per language) or 'prompt_file'")
    if decl.prompt is not None:
        if not decl.prompt:
            raise _fail(where, f("prompt"), "no language's prompt given")
        if decl.language is not None and decl.language not in decl.prompt:
            raise _fail(where, f("language"), f"no prompt for {decl.language!r} (prompts: {', '.join(decl.prompt)})")
        for lang, turns in decl.prompt.items():
            for part in ("system", "user"):
                if getattr(turns, part) is not None:
                    template_variables(getattr(turns, part), where, f(f"prompt.{lang}.{part}"))
    if (decl.grades is None) == (decl.scale is None):
        raise _fail(where, f("grades"), "give exactly one of 'grades' (label: score) or 'scale' (min, max)")
    if decl.grades is not None and not decl.grades:
        raise _fail(where, f("grades"), "no grade given")
    if decl.scale is not None and decl.scale.min >= decl.scale.max:
        raise _fail(where, f("scale"), f"min {decl.scale.min:g} is not below max {decl.scale.max:g}")
    for said, label in decl.aliases.items():
        if decl.grades is None:
            raise _fail(where, f("aliases"), "aliases map replies to grades; a scale has none")
        if label not in decl.grades:
            raise _fail(where, f(f"aliases.{said}"), f"unknown grade {label!r} (grades: {', '.join(decl.grades)})")
    if decl.three_way is not None:
        if decl.grades is None:
            raise _fail(where, f("three_way"), "maps grades to correct / incorrect / not attempted; a scale has none")
        for label in decl.three_way:
            if label not in decl.grades:
                raise _fail(where, f(f"three_way.{label}"), f"unknown grade {label!r} (grades: {', '.join(decl.grades)})")
        unmapped = [g for g in decl.grades if g not in decl.three_way]
        if unmapped:
            raise _fail(where, f("three_way"), f"grade {unmapped[0]!r} is not mapped (map every grade to CORRECT, "
                                                "INCORRECT or NOT_ATTEMPTED)")
    r = decl.reply
    given = [k for k in ("regex", "json_key", "rule") if getattr(r, k) is not None]
    if len(given) != 1:
        raise _fail(where, f("reply"), "give exactly one of 'regex', 'json_key' or 'rule'")
    if r.fallback_regex is not None and r.regex is None:
        raise _fail(where, f("reply.fallback_regex"), "a fallback for 'regex', which is not given")
    for key in ("regex", "fallback_regex"):
        if getattr(r, key) is None:
            continue
        groups, err = bounded_regex.check(getattr(r, key))
        if groups is None:
            raise _fail(where, f(f"reply.{key}"), f"not a regular expression ({err})")
        if groups < 1:
            raise _fail(where, f(f"reply.{key}"), "needs a group: (...) around the grade or number")
    if r.rule is not None:
        from glotbench.tasks.judging.parse import PARSERS

        if r.rule not in PARSERS:
            raise _fail(where, f("reply.rule"), f"unknown reply rule {r.rule!r} (known: {', '.join(sorted(PARSERS))})")
    u = decl.unreadable
    if isinstance(u, ExplicitGrade) and (decl.grades is None or u.grade not in decl.grades):
        have = ", ".join(decl.grades) if decl.grades else "none: the judge gives a number"
        raise _fail(where, f("unreadable.grade"), f"unknown grade {u.grade!r} (grades: {have})")
    if decl.scale is not None and "shares" in decl.metrics:
        raise _fail(where, f("metrics"), "'shares' counts grades; a scale has none")


def anchor_prompt_file(judge: Any, base: Path) -> Any:
    """A judge mapping whose ``prompt_file.path`` is relative and names a file beside the file that
    declares it (``base``: the task file's or judge file's folder) is read from there (``base``), as
    ``judge: FILE`` is read relative to the task file; any other path keeps its meaning (a file shipped
    in a benchmark package, else under the data root: :func:`glotbench.paths.benchmark_file`)."""
    if not isinstance(judge, dict) or not isinstance(judge.get("prompt_file"), dict):
        return judge
    rel = judge["prompt_file"].get("path")
    if not isinstance(rel, str) or Path(rel).expanduser().is_absolute():
        return judge
    beside = Path(base) / rel
    if not beside.is_file():
        return judge
    return {**judge, "prompt_file": {**judge["prompt_file"], "base": str(Path(base).resolve())}}


def load_judge_file(path: Path) -> JudgeDecl:
    """Read and check one judge file; a problem is a one-line TaskSpecError naming file and field."""
    path = Path(path)
    raw = anchor_prompt_file(read_mapping(path, "judge file", TaskSpecError), path.parent)
    decl = validate(JudgeDecl, raw, path, TaskSpecError)
    check_declaration(decl, str(path))
    return decl


def resolve_judge_field(raw: dict, path: Path) -> dict:
    """A task file's ``judge: FILE`` read in place (the declaration, checked, as a mapping), so the
    task's fingerprint holds the rubric itself and editing the judge file rescores. ``FILE`` is
    relative to the task file; a bare ``NAME.judge.yaml`` not there is looked up among the task folders."""
    ref = raw.get("judge")
    if not isinstance(ref, str):
        return raw
    target = Path(ref).expanduser()
    if not target.is_absolute():
        target = Path(path).parent / target
    if not target.is_file() and Path(ref).name == ref and ref.endswith(JUDGE_SUFFIX):
        # a bare file name not next to the task (a copied task file): the judge file of that name
        # among the task folders
        target = find_judge_file(ref[: -len(JUDGE_SUFFIX)]) or target
    if not target.is_file():
        raise TaskSpecError(f"{path}: field 'judge': judge file {ref} not found (looked at {target})")
    decl = load_judge_file(target)
    return {**raw, "judge": decl.model_dump(mode="json", exclude_defaults=False)}


def find_judge_file(name: str) -> Path | None:
    """``NAME.judge.yaml`` among the task folders (built-in ones first), or None."""
    from glotbench.tasks.task_dirs import task_dirs

    for d in task_dirs():
        hits = sorted(Path(d).rglob(name + JUDGE_SUFFIX)) if Path(d).is_dir() else []
        if hits:
            return hits[0]
    return None


def declared_judges() -> dict[str, Path]:
    """Every judge file among the task folders, by its declared name (first found wins)."""
    from glotbench.tasks.task_dirs import task_dirs

    out: dict[str, Path] = {}
    for d in task_dirs():
        for p in sorted(Path(d).rglob("*" + JUDGE_SUFFIX)) if Path(d).is_dir() else []:
            out.setdefault(p.name[: -len(JUDGE_SUFFIX)], p)
    return out


def as_decl(value: Any) -> JudgeDecl:
    return value if isinstance(value, JudgeDecl) else JudgeDecl.model_validate(value)
