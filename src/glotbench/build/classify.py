"""``build classify --labels FILE|NAME``: a judge model puts each item into one of a label set's
labels (OpenHuEval C.3 reclassifies its QA pairs into its 8 dimensions, Chinese SimpleQA sorts its
pairs into 6 topics). One call per item, through the build journal (resumable).

A label set is a YAML file (docs/building-a-benchmark.md, "Labelling items")::

    name: my_topics                  # [a-z][a-z0-9_-]*
    field: topic                     # the item field the label goes to (default: the name)
    source: ...                      # where the labels come from (optional, recorded)
    language: en                     # the prompt for items whose language has none (optional)
    labels:                          # label -> what it covers (shown to the judge)
      L: Language ...
    other: Others                    # optional extra label for "none of these" (OpenHuEval C.2's Others)
    prompt:                          # language -> jinja2 template: the item's fields, lang, labels_block
      en: "... {{ question }} ... {{ labels_block }} ... end with one line: LABEL: <label>"

Shipped sets are found by name among the benchmark packages' files (``build/labels/NAME.labels.yaml``,
:func:`builtin_sets`). The reply is read strictly (:func:`parse_label`): a ``LABEL:`` line (the last
one; lines naming different labels make the reply ambiguous) whose value is exactly one label (case
and surrounding markup aside), or a reply that is exactly one label. Anything else is ``unparsed``:
counted, never guessed.
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from glotbench.build.user_prompts import printed_names, render, template_fields
from glotbench.errors import TaskSpecError
from glotbench.yamlfile import read_mapping, validate

SUFFIX = ".labels.yaml"
SHIPPED = "build/labels"
NAME = re.compile(r"^[a-z][a-z0-9_-]{0,63}$")
PROVIDED = frozenset({"lang", "labels_block", "labels"})
_LINE = re.compile(r"^[\s>*#_\-]*(?:label|címke|kategória|kategorie|štítek|类别|类别标签|标签|分类)\s*[:：]\s*(.*?)\s*$",
                   re.I | re.M)
_TRIM = " \t*_`'\"“”„«»[](){}<>.。,，;；!！"


class LabelSetFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    field: str | None = None
    source: str | None = None
    description: str | None = None
    language: str | None = None
    labels: dict[str, str] = Field(min_length=2)
    other: str | None = None
    prompt: dict[str, str] = Field(min_length=1)
    max_tokens: int | None = Field(default=None, ge=1, le=8192)


class LabelSet:
    def __init__(self, spec: LabelSetFile, path: Path, text: str):
        self.spec, self.path, self.text = spec, Path(path), text
        self.name = spec.name
        self.field = spec.field or spec.name
        self.labels = list(spec.labels) + ([spec.other] if spec.other else [])
        self.fields: dict[str, set[str]] = {}
        for lang, src in spec.prompt.items():
            template_fields(src, path, f"prompt.{lang}")  # a syntax error or an unsafe template: refused here
            self.fields[lang] = printed_names(src)  # what every item must have (not null)
        self._fold = {_norm(x): x for x in self.labels}

    def labels_block(self) -> str:
        lines = [f"- {k}: {v}" for k, v in self.spec.labels.items()]
        if self.spec.other:
            lines.append(f"- {self.spec.other}")
        return "\n".join(lines)

    def prompt(self, item: dict, lang: str) -> str:
        return render(self.spec.prompt[lang], {**item, "lang": lang, "labels_block": self.labels_block(),
                                               "labels": self.labels})

    def parse(self, reply: str) -> str | None:
        return parse_label(reply, self._fold)


def _norm(s: str) -> str:
    return " ".join(str(s).strip(_TRIM).split()).casefold()


def parse_label(reply: str, labels: dict[str, str]) -> str | None:
    """The label a reply names (``labels``: normalised label -> label), or None (unparsed).

    A ``LABEL: x`` line counts when x is exactly one label; several such lines must agree (else the
    reply is ambiguous: None). Without such a line, the whole reply must be exactly one label."""
    text = re.sub(r"<think>.*?</think>", "", reply or "", flags=re.S)
    said = [m.group(1) for m in _LINE.finditer(text)]
    if said:
        read = {labels.get(_norm(x)) for x in said}
        return read.pop() if len(read) == 1 else None
    return labels.get(_norm(text))


def load_label_set(path: Path) -> LabelSet:
    path = Path(path)
    raw = read_mapping(path, "label set", TaskSpecError)
    spec = validate(LabelSetFile, raw, path, TaskSpecError)
    if not NAME.match(spec.name):
        raise TaskSpecError(f"{path}: field 'name': {spec.name!r} is not a label set name ([a-z][a-z0-9_-]*)")
    if spec.field is not None and not re.match(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$", spec.field):
        raise TaskSpecError(f"{path}: field 'field': {spec.field!r} is not a field name")
    if spec.language is not None and spec.language not in spec.prompt:
        raise TaskSpecError(f"{path}: field 'language': no prompt for {spec.language!r} (prompts: {', '.join(spec.prompt)})")
    seen: dict[str, str] = {}
    for key in [*spec.labels, *([spec.other] if spec.other else [])]:
        n = _norm(key)
        if not n:
            raise TaskSpecError(f"{path}: field 'labels': an empty label")
        if n in seen:
            raise TaskSpecError(f"{path}: field 'labels': {key!r} reads the same as {seen[n]!r}")
        seen[n] = key
    for lang, src in spec.prompt.items():
        if "labels_block" not in template_fields(src, path, f"prompt.{lang}") and "labels" not in template_fields(src, path, f"prompt.{lang}"):
            raise TaskSpecError(f"{path}: field 'prompt.{lang}': never shows the labels ({{{{ labels_block }}}} or {{{{ labels }}}})")
    return LabelSet(spec, path, path.read_text(encoding="utf-8"))


def builtin_sets() -> dict[str, Path]:
    """The label sets the benchmark packages ship, by name."""
    from glotbench.build.user_prompts import shipped

    return shipped(SHIPPED, SUFFIX)


def resolve(ref: str) -> Path:
    """``--labels``: a file, or the name of a shipped set."""
    p = Path(ref).expanduser()
    if p.is_file():
        return p
    shipped = builtin_sets()
    if ref in shipped:
        return shipped[ref]
    raise TaskSpecError(f"--labels {ref}: neither a file nor a shipped label set (shipped: {', '.join(sorted(shipped)) or 'none'})")


def classify_calls(items: list[dict], items_path: Path, ls: LabelSet, max_tokens: int):
    """One call per item; every item checked against the prompts and every prompt rendered first."""
    from glotbench.build.user_prompts import prompt_calls

    return prompt_calls(items, items_path, ls, set(PROVIDED), f"classify:{ls.name}", max_tokens)
