"""The benchmarks' own grading prompts (shipped in the benchmark packages' files/ folders, see glotbench/benchmarks/NOTICE.md), filled in.

Graders (``GRADERS``):

* ``chinese_simpleqa``: ``GRADER_TEMPLATE`` from ``chinese_simpleqa_eval_grader.json``, a
  Python ``str.format`` template with ``{question}``, ``{target}``, ``{predicted_answer}``.
  System message as in the repo's ``judge/chinese_simpleqa_easy.py``. Judge replies A/B/C.
* ``chinese_simpleqa_en``: the English variant (``judge_prompt_en``), same placeholders, no
  system message.
* ``husimpleqa``: OpenHuEval ``JUDGE_PROMPT``; as in the OpenCompass PR, the prompt is
  ``system_prompt + user_prompt`` sent as one user turn, with ``{question}``, ``{answer}`` and
  ``{prediction}`` replaced by plain substitution (the template holds literal JSON braces, so
  no ``str.format``). Judge replies ``{"evaluation": "CORRECT" | "INCORRECT" | "NOT_ATTEMPTED"}``.
"""

from __future__ import annotations

import hashlib
import json
import re
import string
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path

from glotbench.errors import DataError
from glotbench.paths import benchmark_file

CSQA_SYSTEM = "你是一个智能助手，请根据给定问题、标准答案和模型预测的答案来评估模型的回答是否正确。"


@dataclass(frozen=True)
class GraderSpec:
    file: str  # as under a data root; shipped in a benchmark package's files/ (paths.benchmark_file)
    keys: tuple[tuple[str, ...], ...]  # JSON key paths, concatenated in order into the user turn
    style: str  # "format" (str.format) or "substitute" (plain {name} replacement)
    placeholders: tuple[str, ...]  # template names, in (question, target, predicted_answer) order
    parser: str  # name of the reply parser in glotbench.judges.parse
    language: str
    system: str | None = None


GRADERS: dict[str, GraderSpec] = {
    "chinese_simpleqa": GraderSpec(
        file="chinese_simpleqa/prompts/chinese_simpleqa_eval_grader.json",
        keys=(("GRADER_TEMPLATE",),),
        style="format",
        placeholders=("question", "target", "predicted_answer"),
        parser="abc",
        language="zh",
        system=CSQA_SYSTEM,
    ),
    "chinese_simpleqa_en": GraderSpec(
        file="chinese_simpleqa/prompts/judge_chinese_simpleqa_easy.json",
        keys=(("judge_prompt_en",),),
        style="format",
        placeholders=("question", "target", "predicted_answer"),
        parser="abc",
        language="en",
    ),
    "husimpleqa": GraderSpec(
        file="openhueval/prompts/HuSimpleQA_judge_prompt.json",
        keys=(("JUDGE_PROMPT", "system_prompt"), ("JUDGE_PROMPT", "user_prompt")),
        style="substitute",
        placeholders=("question", "answer", "prediction"),
        parser="evaluation_json",
        language="hu",
    ),
}


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
        filled = (str(question), str(target), str(predicted_answer))
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
