"""Render a task's jinja2 templates into chat messages or a plain-completion prompt."""

from __future__ import annotations

from functools import lru_cache

import jinja2

from glotbench.errors import TaskSpecError

_ENV = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=False, autoescape=False)


@lru_cache(maxsize=512)
def compile_template(source: str) -> jinja2.Template:
    return _ENV.from_string(source)


def render(source: str, variables: dict, *, task: str, field: str) -> str:
    if "{" not in source and "\r" not in source:
        # no jinja2 syntax (it all starts with "{") and no line ends jinja2 would rewrite: the text
        # is its own rendering (a system prompt, mostly; tests/test_render_constant.py)
        return source.strip()
    try:
        return compile_template(source).render(**variables).strip()
    except jinja2.TemplateSyntaxError as err:
        raise TaskSpecError(f"task {task}: field '{field}': template syntax error line {err.lineno}: {err.message}") from None
    except jinja2.UndefinedError as err:
        raise TaskSpecError(f"task {task}: field '{field}': {err.message} (known variables: {', '.join(sorted(variables))})") from None


_MARK = "\x00"


@lru_cache(maxsize=128)
def _choices_loop(fmt: str) -> jinja2.Template | None:
    """All options of one item in one render (one jinja2 context instead of one per option)."""
    if _MARK in fmt:
        return None
    try:
        return _ENV.from_string("{% for label, text in __pairs %}{% if not loop.first %}" + _MARK
                                + "{% endif %}" + fmt + "{% endfor %}")
    except jinja2.TemplateError:
        return None  # the per-option path below reports the error with its field name


def choices_block(labels: list[str], texts: list[str], fmt: str, sep: str, *, task: str) -> str:
    loop = _choices_loop(fmt)
    if loop is not None and not any(_MARK in t for t in texts):
        try:
            parts = loop.render(__pairs=list(zip(labels, texts))).split(_MARK)
        except jinja2.TemplateError:
            parts = None
        if parts is not None and len(parts) == min(len(labels), len(texts)):
            return sep.join(p.strip() for p in parts)
    return sep.join(render(fmt, {"label": lab, "text": txt}, task=task, field="prompt.choice_format") for lab, txt in zip(labels, texts))


def plain_from_chat(system: str | None, shots: list[tuple[str, str]], user: str, answer_cue: str) -> str:
    """The default plain-completion rendering: system, solved examples, question, answer cue."""
    parts = [system] if system else []
    for q, a in shots:
        parts.append(f"{q}\n{answer_cue}{(' ' if answer_cue else '')}{a}".strip())
    parts.append(f"{user}\n{answer_cue}".rstrip())
    return "\n\n".join(parts)
