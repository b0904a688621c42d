"""Grading prompts kept in JSON files (the benchmarks' own, shipped in the benchmark packages' files/
folders, see glotbench/benchmarks/NOTICE.md), filled in as their code fills them.

Graders (``GRADERS``) are judge declarations (``*.judge.yaml`` among the task folders, see
:mod:`glotbench.tasks.judging.declaration`) whose prompt is a ``prompt_file`` and whose reply is read by
a registered ``reply.rule``; the mapping is read from those files on first use. A ``format``
template is Python ``str.format`` (``{{``/``}}`` are literal braces); a ``substitute`` template has
each placeholder replaced in one pass (templates holding literal JSON braces). The system turn, when
the declaration gives one, goes before the filled user turn.
"""

from __future__ import annotations

import hashlib
import json
import re
import string
from collections.abc import Iterator, MutableMapping
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path

from glotbench.errors import DataError
from glotbench.paths import benchmark_file


@dataclass(frozen=True)
class GraderSpec:
    file: str  # as under a data root; shipped in a benchmark package's files/ (paths.benchmark_file)
    keys: tuple[tuple[str, ...], ...]  # JSON key paths, concatenated in order into the user turn
    style: str  # "format" (str.format), "substitute" (one pass) or "replace" (str.replace of each, in order)
    placeholders: tuple[str, ...]  # template names, in (question, target, predicted_answer) order for GRADERS
    parser: str  # name of the reply parser in glotbench.tasks.judging.parse
    language: str
    system: str | None = None


ROLES = ("question", "reference", "answer")


def grader_spec(decl) -> GraderSpec:
    """The :class:`GraderSpec` of a judge declaration with a ``prompt_file``: its placeholders in the
    (question, reference, answer) order when it names exactly those, else in the declaration's order."""
    pf = decl.prompt_file
    ph = pf.placeholders
    names = tuple(ph[r] for r in ROLES) if set(ph) == set(ROLES) else tuple(ph.values())
    return GraderSpec(file=str(Path(pf.base) / pf.path) if pf.base else pf.path, keys=tuple(tuple(k.split(".")) for k in pf.keys), style=pf.style,
                      placeholders=names, parser=decl.reply.rule or "", language=decl.language or "", system=pf.system)


def placeholder_variables(decl) -> tuple[str, ...]:
    """The judge variables filling :func:`grader_spec`'s placeholders, in its order."""
    ph = decl.prompt_file.placeholders
    return ROLES if set(ph) == set(ROLES) else tuple(ph)


class _DeclaredGraders(MutableMapping):
    """name -> GraderSpec, read from the judge files among the task folders on first use (and
    settable, for tests that point a grader at another file)."""

    def __init__(self) -> None:
        self._data: dict[str, GraderSpec] | None = None

    def _load(self) -> dict[str, GraderSpec]:
        if self._data is None:
            from glotbench.tasks.judging.declaration import declared_judges, load_judge_file

            data: dict[str, GraderSpec] = {}
            from glotbench.errors import TaskSpecError, set_aside

            for name, path in declared_judges().items():
                try:
                    decl = load_judge_file(path)
                except TaskSpecError as err:  # a broken or hostile judge file never stops the others
                    set_aside(str(err))
                    continue
                if decl.prompt_file is not None and decl.reply.rule is not None:
                    data[decl.name] = grader_spec(decl)
            self._data = data
        return self._data

    def __getitem__(self, name: str) -> GraderSpec:
        return self._load()[name]

    def __setitem__(self, name: str, spec: GraderSpec) -> None:
        self._load()[name] = spec

    def __delitem__(self, name: str) -> None:
        del self._load()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._load())

    def __len__(self) -> int:
        return len(self._load())


GRADERS: MutableMapping[str, GraderSpec] = _DeclaredGraders()


@dataclass(frozen=True)
class GraderPrompt:
    name: str
    path: Path
    template: str  # the user turn before filling in
    spec: GraderSpec

    @property
    def parser(self) -> str:
        return self.spec.parser

    @cached_property
    def version(self) -> str:
        """Short hash of everything that shapes the judge request (for fingerprints and tables; once
        per prompt, not per judgment)."""
        h = hashlib.sha256(json.dumps([self.name, self.spec.system, self.template], ensure_ascii=False).encode())
        return h.hexdigest()[:12]

    def render_user(self, question: str, target: str, predicted_answer: str) -> str:
        return self.fill((question, target, predicted_answer))

    def fill(self, values: tuple) -> str:
        """The user turn with ``values`` (one per placeholder, in ``spec.placeholders`` order) filled in."""
        filled = tuple(str(v) for v in values)
        if self.spec.style == "replace":  # each in turn over the text so far, as str.replace does
            text = self.template
            for name, value in zip(self.spec.placeholders, filled):
                text = text.replace("{" + name + "}", value)
            return text
        cut = self._cut
        if cut is None:  # a format template whose fields carry conversions, format specs or indexes
            return self.template.format(**dict(zip(self.spec.placeholders, filled)))
        parts, slots = cut  # the template cut once: its texts with the values put between them
        parts = list(parts)
        for pos, k in slots:
            parts[pos] = filled[k]
        return "".join(parts)

    @cached_property
    def _cut(self) -> tuple[tuple[str, ...], tuple[tuple[int, int], ...]] | None:
        """The template's literal texts and, for each placeholder, (its position among them, which
        value goes there): what ``str.format`` (or the one-pass substitution) does to it, found once
        instead of on every judge request (the Chinese grader's 1,700 characters were parsed each
        time, 10 us). None for a ``format`` template whose fields carry a conversion, a format spec or
        an index (then ``str.format`` itself renders it)."""
        names = self.spec.placeholders
        parts: list[str] = []
        slots: list[tuple[int, int]] = []
        if self.spec.style == "format":
            for literal, field, spec, conversion in string.Formatter().parse(self.template):
                parts.append(literal)  # "{{" and "}}" already read as one brace
                if field is None:
                    continue
                if field not in names or spec or conversion:
                    return None
                slots.append((len(parts), names.index(field)))
                parts.append("")
        else:  # cut in one pass over the template: a "{answer}" inside a value is never replaced
            placeholder = "(" + "|".join(re.escape("{" + name + "}") for name in names) + ")"
            for k, piece in enumerate(re.split(placeholder, self.template)):
                if k % 2:  # a captured placeholder
                    slots.append((len(parts), names.index(piece[1:-1])))
                    piece = ""
                parts.append(piece)
        return tuple(parts), tuple(slots)

    def render(self, question: str, target: str, predicted_answer: str) -> list[dict[str, str]]:
        """Chat messages for the judge: optional system turn, then the filled grading prompt."""
        msgs = [{"role": "system", "content": self.spec.system}] if self.spec.system else []
        msgs.append({"role": "user", "content": self.render_user(question, target, predicted_answer)})
        return msgs


def _dig(obj: object, keys: tuple[str, ...], path: Path) -> str:
    cur = obj
    for k in keys:
        if not isinstance(cur, dict) or k not in cur:
            raise DataError(f"{path}: missing key {'.'.join(keys)!r}")
        cur = cur[k]
    if not isinstance(cur, str):
        raise DataError(f"{path}: key {'.'.join(keys)!r} is not a string")
    return cur


def _check_placeholders(template: str, spec: GraderSpec, path: Path) -> None:
    if spec.style == "format":
        try:
            found = {f for _, f, _, _ in string.Formatter().parse(template) if f is not None}
        except ValueError as err:
            raise DataError(f"{path}: grading template is not a valid str.format template ({err})") from None
        if found != set(spec.placeholders):
            raise DataError(f"{path}: template fields {sorted(found)} != expected {sorted(spec.placeholders)}")
    else:
        missing = [p for p in spec.placeholders if "{" + p + "}" not in template]
        if missing:
            raise DataError(f"{path}: grading template lacks placeholder(s) {', '.join('{' + m + '}' for m in missing)}")


def read_prompt_json(path: Path, what: str) -> dict:
    """A benchmark prompt file (a JSON object); a one-line DataError naming the file otherwise."""
    if not path.is_file():
        raise DataError(f"{path}: {what} not found (set GLOTBENCH_DATA to the benchmark data root)")
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as err:
        raise DataError(f"{path}: cannot read {what} ({err})") from None
    if not isinstance(obj, dict):
        raise DataError(f"{path}: {what} must hold a JSON object")
    return obj


@cache
def _load(name: str, path: Path) -> GraderPrompt:
    spec = GRADERS[name]
    obj = read_prompt_json(path, f"grading prompt file for {name!r}")
    template = "".join(_dig(obj, keys, path) for keys in spec.keys)
    _check_placeholders(template, spec, path)
    return GraderPrompt(name=name, path=path, template=template, spec=spec)


def load_grader(name: str) -> GraderPrompt:
    """Load a grader by name (see :data:`GRADERS`); raises DataError naming the file if absent."""
    if name not in GRADERS:
        raise DataError(f"unknown grader {name!r}; known: {', '.join(sorted(GRADERS))}")
    return _load(name, benchmark_file(GRADERS[name].file))


@cache
def _file_prompt(decl_json: str, base: str | None = None) -> GraderPrompt:
    from glotbench.tasks.judging.declaration import JudgeDecl

    decl = JudgeDecl.model_validate_json(decl_json)
    if base is not None:  # the folder a relative path is read from (left out of every dump)
        decl = decl.model_copy(update={"prompt_file": decl.prompt_file.model_copy(update={"base": base})})
    spec = grader_spec(decl)
    path = benchmark_file(spec.file)
    obj = read_prompt_json(path, f"grading prompt file for {decl.name!r}")
    template = "".join(_dig(obj, keys, path) for keys in spec.keys)
    _check_placeholders(template, spec, path)
    return GraderPrompt(name=decl.name, path=path, template=template, spec=spec)


def _load_file_prompt(decl) -> GraderPrompt:
    """The filled-in-prompt reader of a declaration with a ``prompt_file`` (read once per declaration)."""
    return _file_prompt(decl.model_dump_json(), decl.prompt_file.base if decl.prompt_file is not None else None)
