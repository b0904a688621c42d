"""The grading prompt is cut at its placeholders once (``GraderPrompt._cut``) and filled by joining:
the text must be what the reference's own rendering gives, ``str.format`` for the Chinese SimpleQA
graders and a one-pass ``{name}`` substitution for HuSimpleQA, on the real templates and on
templates and values made to trip a hand-written splitter (doubled braces, placeholders inside the
values, a placeholder at either end, repeated fields, conversions and format specs)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from glotbench.tasks.judging.prompts import GRADERS, GraderPrompt, GraderSpec, load_grader
from glotbench.paths import resolve_data_file

VALUES = [
    ("伏兔穴所属的经脉是什么？", "足阳明胃经", "答案是 足阳明胃经"),
    ("{question}", "{target}", "{predicted_answer} {answer} {prediction}"),
    ("{{x}}", "}{", '{"evaluation": "CORRECT"}'),
    ("", "", ""),
    ("a\nb", "𝔘nicode ☃", "A"),
    (12, None, 3.5),  # not strings: both renderings take str() of them
]


def reference(g: GraderPrompt, q, t, p) -> str:
    """A plain re-statement of each benchmark's rendering (what render_user did before the cut)."""
    values = dict(zip(g.spec.placeholders, (str(q), str(t), str(p))))
    if g.spec.style == "format":
        return g.template.format(**values)
    pattern = "|".join(re.escape("{" + n + "}") for n in g.spec.placeholders)
    return re.sub(pattern, lambda m: values[m.group(0)[1:-1]], g.template)


def outcome(fn, *args):
    """The text, or the error's type (an index into an empty value fails in both renderings)."""
    try:
        return fn(*args)
    except Exception as err:  # noqa: BLE001 - compared, not hidden
        return type(err)


@pytest.mark.parametrize("name", sorted(GRADERS))
def test_real_graders_render_as_their_reference(name):
    path = resolve_data_file(GRADERS[name].file)
    if not path.is_file():
        pytest.skip(f"grading prompt file not found at {path} (shared data absent)")
    g = load_grader(name)
    assert g._cut is not None  # the real templates take the fast path
    for q, t, p in VALUES:
        assert g.render_user(q, t, p) == reference(g, q, t, p)


def _grader(template: str, style: str) -> GraderPrompt:
    names = ("question", "target", "predicted_answer") if style == "format" else ("question", "answer", "prediction")
    spec = GraderSpec(file="x.json", keys=(("T",),), style=style, placeholders=names, parser="abc", language="xx")
    return GraderPrompt(name="t", path=Path("x.json"), template=template, spec=spec)


FORMAT_TEMPLATES = [
    "{question}",
    "{question}{target}{predicted_answer}",
    "Q: {question}\nA: {target} / {predicted_answer} {{literal}} }}{{",
    "{predicted_answer} twice {predicted_answer} and {question}",
    "{{{question}}}",
    "no fields at all {{}}",
    "ends with {target}",
]
SPECIAL_FORMAT_TEMPLATES = ["{question!r} {target}", "{question:>20} {target}", "{question[0]} {target}"]
SUBSTITUTE_TEMPLATES = [
    "{question}",
    '{"question": {question}, "gold": {answer}, "pred": {prediction}}',
    "{prediction}{prediction}{{question}}",
    "{questions} {question} {answer}x{prediction",
    "nothing here",
]


@pytest.mark.parametrize("template", FORMAT_TEMPLATES + SPECIAL_FORMAT_TEMPLATES)
def test_format_templates_render_as_str_format(template):
    g = _grader(template, "format")
    assert (g._cut is None) == (template in SPECIAL_FORMAT_TEMPLATES)  # conversions, specs, indexes: str.format
    for q, t, p in VALUES:
        assert outcome(g.render_user, q, t, p) == outcome(reference, g, q, t, p)


@pytest.mark.parametrize("template", SUBSTITUTE_TEMPLATES)
def test_substitute_templates_render_as_one_pass_substitution(template):
    g = _grader(template, "substitute")
    assert g._cut is not None
    for q, t, p in VALUES:
        assert g.render_user(q, t, p) == reference(g, q, t, p)
