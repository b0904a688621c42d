"""A user's criterion for ``build criteria --criterion-file FILE`` (beside the built-in five of
:mod:`glotbench.build.criteria`): OpenHuEval B.1 keeps only Hungary-specific questions, Chinese
SimpleQA §3.3 checks that a pair belongs to its category, with the paper's own prompt.

The file (YAML; docs/building-a-benchmark.md, "Your own criterion")::

    name: hungary_specific            # the criterion's name: [a-z][a-z0-9_]*, not a built-in one
    description: ...                  # optional
    language: en                      # the prompt used when an item's language has none (optional)
    prompt:                           # language -> jinja2 template over the item's fields (+ lang)
      en: |
        Is this question about Hungary? {{ question }} ... end with VERDICT: PASS or VERDICT: FAIL
    verdict:                          # how the reply is read (default: rule: verdict)
      rule: verdict                   # the built-in reading (VERDICT: PASS/FAIL, 【是】/【否】, ANO/NE)
      # or: regex: 'ANSWER:\\s*(\\w+)'  group 1 is the verdict word, looked up in
      #     pass: [YES, IGEN]  fail: [NO, NEM]   (match: last | first | only; ignore_case: true)
    max_tokens: 200                   # optional (default: the command's --max-tokens)

The file is untrusted: every field is checked and every template parsed and passed through the
sandbox check when it is read, and every item's fields against the templates, before any request;
a problem is one line naming the file and the field (or the items file, record and field).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from glotbench.build.user_prompts import printed_names, render, template_fields
from glotbench.errors import TaskSpecError
from glotbench.extract import bounded_regex
from glotbench.yamlfile import read_mapping, validate

NAME = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
PROVIDED = frozenset({"lang"})


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class VerdictRule(_Strict):
    rule: Literal["verdict"] | None = None
    regex: str | None = None
    pass_words: list[str] = Field(default_factory=list, alias="pass")
    fail_words: list[str] = Field(default_factory=list, alias="fail")
    match: Literal["last", "first", "only"] = "last"
    ignore_case: bool = True


class CriterionFile(_Strict):
    name: str
    description: str | None = None
    language: str | None = None
    prompt: dict[str, str] = Field(min_length=1)
    verdict: VerdictRule = VerdictRule(rule="verdict")
    max_tokens: int | None = Field(default=None, ge=1, le=8192)


class UserCriterion:
    """A checked criterion file: its prompts, the fields each uses, and its verdict reading."""

    def __init__(self, spec: CriterionFile, path: Path, text: str):
        self.spec, self.path, self.text = spec, Path(path), text
        self.name = spec.name
        self.fields: dict[str, set[str]] = {}
        for lang, src in spec.prompt.items():
            template_fields(src, path, f"prompt.{lang}")  # a syntax error or an unsafe template: refused here
            self.fields[lang] = printed_names(src)  # what every item must have (not null)
        v = spec.verdict
        self._regex = bounded_regex.compile(v.regex, v.ignore_case) if v.regex is not None else None

    def prompt(self, item: dict, lang: str) -> str:
        return render(self.spec.prompt[lang], {**item, "lang": lang})

    def verdict(self, reply: str) -> str:
        """``pass``, ``fail`` or ``unparsed``."""
        if self._regex is None:
            from glotbench.build.criteria import parse_verdict

            return parse_verdict(reply)
        v = self.spec.verdict
        try:
            found = [m.group(1) for m in bounded_regex.finditer(self._regex, reply or "") if m.group(1) is not None]
        except bounded_regex.RegexTimeout:
            return "unparsed"
        fold = (lambda s: s.strip().casefold()) if v.ignore_case else (lambda s: s.strip())
        read = [("pass" if fold(w) in {fold(p) for p in v.pass_words}
                 else "fail" if fold(w) in {fold(f) for f in v.fail_words} else "unparsed") for w in found]
        if not read:
            return "unparsed"
        if v.match == "only":
            return read[0] if len(set(read)) == 1 else "unparsed"
        return read[0] if v.match == "first" else read[-1]


SUFFIX = ".criterion.yaml"
SHIPPED = "build/criteria"


def shipped_files() -> dict[str, Path]:
    """The criterion files the benchmark packages ship (``files/build/criteria/NAME.criterion.yaml``), by name."""
    from glotbench.build.user_prompts import shipped

    return shipped(SHIPPED, SUFFIX)


def load_criterion_file(path: Path, taken: set[str]) -> UserCriterion:
    """Read and check one criterion file (a path, or a shipped file's name); every problem a one-line
    TaskSpecError naming file and field."""
    path = Path(path)
    if not path.is_file():
        shipped = shipped_files()
        if str(path) not in shipped:
            raise TaskSpecError(f"{path}: no such criterion file (--criterion-file; shipped: {', '.join(sorted(shipped)) or 'none'})")
        path = shipped[str(path)]
    raw = read_mapping(path, "criterion file", TaskSpecError)
    spec = validate(CriterionFile, raw, path, TaskSpecError)
    if not NAME.match(spec.name):
        raise TaskSpecError(f"{path}: field 'name': {spec.name!r} is not a criterion name ([a-z][a-z0-9_]*, at most 64)")
    if spec.name in taken:
        raise TaskSpecError(f"{path}: field 'name': {spec.name!r} is taken (a built-in criterion or another file's)")
    if spec.language is not None and spec.language not in spec.prompt:
        raise TaskSpecError(f"{path}: field 'language': no prompt for {spec.language!r} (prompts: {', '.join(spec.prompt)})")
    for lang, src in spec.prompt.items():
        if not src.strip():
            raise TaskSpecError(f"{path}: field 'prompt.{lang}': empty")
    v = spec.verdict
    if (v.rule is None) == (v.regex is None):
        raise TaskSpecError(f"{path}: field 'verdict': give exactly one of 'rule' (verdict) or 'regex'")
    if v.rule is not None and (v.pass_words or v.fail_words):
        raise TaskSpecError(f"{path}: field 'verdict.pass': words go with 'regex'; the rule 'verdict' has its own")
    if v.regex is not None:
        groups, err = bounded_regex.check(v.regex)
        if groups is None:
            raise TaskSpecError(f"{path}: field 'verdict.regex': not a regular expression ({err})")
        if groups < 1:
            raise TaskSpecError(f"{path}: field 'verdict.regex': needs a group: (...) around the verdict word")
        for key, words in (("pass", v.pass_words), ("fail", v.fail_words)):
            if not words or not all(isinstance(w, str) and w.strip() for w in words):
                raise TaskSpecError(f"{path}: field 'verdict.{key}': give the verdict words that mean {key}")
        fold = (lambda s: s.strip().casefold()) if v.ignore_case else (lambda s: s.strip())
        both = {fold(w) for w in v.pass_words} & {fold(w) for w in v.fail_words}
        if both:
            raise TaskSpecError(f"{path}: field 'verdict.fail': {sorted(both)[0]!r} is also a pass word")
    return UserCriterion(spec, path, path.read_text(encoding="utf-8"))


def user_criteria_calls(items: list[dict], items_path: Path, files: list[Path], taken: set[str], max_tokens: int):
    """``(criteria, calls)`` for the criterion files: every file read and checked, every item's
    fields against the prompts, and every prompt rendered before this returns (so before any request)."""
    from glotbench.build.user_prompts import prompt_calls

    users: list[UserCriterion] = []
    for f in files:
        u = load_criterion_file(f, taken | {x.name for x in users})
        users.append(u)
    calls = []
    for u in users:
        calls += prompt_calls(items, items_path, u, set(PROVIDED), u.name, max_tokens)
    return users, calls
