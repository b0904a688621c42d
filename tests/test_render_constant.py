"""A template without jinja2 syntax is returned as it is (stripped), exactly as jinja2 renders it."""

from __future__ import annotations

import jinja2
import pytest

from glotbench.errors import DataError
from glotbench.prompts.render import _ENV, NullValue, render

CASES = [
    "You are an AI assistant proficient in Mongolian.",
    "  Та монгол хэлээр хариулна.\n\n",
    "Line one\nline two\n",
    "100% sure # not a comment, } alone",
    "tabs\tand   spaces  ",
    "",
    # with syntax or line ends jinja2 rewrites: the jinja2 path
    "Answer {{ lang }}",
    "a\r\nb\rc",
    "{# comment #}text",
    "{% if true %}x{% endif %}",
]


@pytest.mark.parametrize("src", CASES)
def test_same_as_jinja2(src):
    assert render(src, {"lang": "mn"}, task="t", field="prompt.system") == _ENV.from_string(src).render(lang="mn").strip()


def test_syntax_errors_still_reported():
    with pytest.raises(Exception, match="template syntax error"):
        render("{{ broken", {}, task="t", field="prompt.user")
    with pytest.raises(jinja2.TemplateSyntaxError):
        _ENV.from_string("{{ broken")


SIMPLE = [
    "Question: {{ question }}\n{{choices_block}}\nAnswer:",
    "{{ label }}. {{ text }}",
    "({{label}}) {{text}}",
    "{{ n }} items, {{ missing_is_none }}",
    # not simple: jinja2 renders them
    "{{ question|upper }}", "{{ a.b }}", "{{- question }}", "{{ true }}", "{{ loop }}", "{%raw%}{{x}}{%endraw%}",
    "{{\tquestion }}", "{{ question }}\r\n",
]


@pytest.mark.parametrize("src", SIMPLE)
def test_placeholders_filled_as_jinja2_fills_them(src):
    variables = {"question": "Монгол улсын нийслэл?", "choices_block": "A. x\nB. y", "label": "B", "text": " two ",
                 "n": 3, "missing_is_none": None, "a": {"b": 1}, "loop": "L", "true": "T", "x": 1}
    if "missing_is_none" in src:  # a null is refused on both paths (issue 48: it reached the model as "None")
        with pytest.raises(DataError, match="'missing_is_none' is null"):
            render(src, variables, task="t", field="prompt.user")
        with pytest.raises(NullValue):
            _ENV.from_string(src).render(**variables)
        with pytest.raises(DataError, match="is null"):  # the jinja2 path of the same template
            render(src.replace("{{ missing_is_none }}", "{{- missing_is_none }}"), variables, task="t", field="prompt.user")
        return
    assert render(src, variables, task="t", field="prompt.user") == _ENV.from_string(src).render(**variables).strip()


def test_a_missing_variable_is_still_the_named_error():
    with pytest.raises(Exception, match="'question' is undefined"):
        render("Q: {{ question }}", {"other": 1}, task="t", field="prompt.user")


def test_every_builtin_prompt_renders_as_jinja2_renders_it():
    """Every built-in task's system, user and choice templates on its first items: the direct fill
    and jinja2 give the same text (tasks whose data is absent are skipped)."""
    from glotbench.prompts.render import choices_block, simple_parts
    from glotbench.tasks.registry import all_specs, resolve

    checked = simple = 0
    for name in sorted(all_specs()):
        try:
            task = resolve([name])[0]
            samples = task.samples(None, 3)
        except Exception:  # noqa: BLE001 - data not here (../shared/data absent) or a class needing more
            continue
        p = task.spec.prompt
        for s in samples:
            v = task._vars(s)
            for src in (p.system, p.user):
                if not src:
                    continue
                try:
                    ref = _ENV.from_string(src).render(**v).strip()
                except jinja2.UndefinedError:  # the task's class adds variables of its own
                    continue
                simple += simple_parts(src) is not None
                assert render(src, v, task=name, field="x") == ref, name
                checked += 1
            if s.choices:
                labels, texts = s.labels, [str(c) for c in s.choices]
                ref = p.choice_separator.join(_ENV.from_string(p.choice_format).render(label=lab, text=t).strip()
                                              for lab, t in zip(labels, texts))
                assert choices_block(labels, texts, p.choice_format, p.choice_separator, task=name) == ref, name
                checked += 1
    if checked == 0:
        pytest.skip("no built-in task's data is here (../shared/data)")
    assert simple > 0  # the direct fill was exercised


CHOICE_FORMATS = ["{{ label }}. {{ text }}", "({{label}}) {{text}} }", "{{text}} [{{label}}]", "{{ label }}",
                  "Option {{label}}: {{ text }} / {{ label }}", "  {{ label }}) {{ text }}  ", "{{ label }}%s {0} {{ text }}",
                  "{{ label|lower }}. {{ text }}"]


@pytest.mark.parametrize("fmt", CHOICE_FORMATS)
def test_choices_block_fills_as_jinja2_fills_each_line(fmt):
    """choices_block's str.format fill (a format of text, {{ label }} and {{ text }}) gives jinja2's lines."""
    from glotbench.prompts.render import choices_block

    labels, texts = ["A", "B", "C", "D"], ["{x}", "} and {{ y }}", " Улаанбаатар ", "100% {0} %s"]
    ref = "\n".join(_ENV.from_string(fmt).render(label=lab, text=t).strip() for lab, t in zip(labels, texts))
    assert choices_block(labels, texts, fmt, "\n", task="t") == ref


def test_choices_block_still_names_a_null_option():
    from glotbench.prompts.render import choices_block

    with pytest.raises(DataError, match="'text' is null"):
        choices_block(["A", "B"], ["x", None], "{{ label }}. {{ text }}", "\n", task="t")
