"""Render a task's jinja2 templates into chat messages or a plain-completion prompt."""

from __future__ import annotations

import re
from functools import lru_cache

import jinja2

from glotbench.errors import TaskSpecError

_ENV = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=False, autoescape=False)


@lru_cache(maxsize=512)
def compile_template(source: str) -> jinja2.Template:
    return _ENV.from_string(source)


_RESERVED = frozenset({"true", "false", "none", "True", "False", "None", "and", "or", "not", "in", "is", "if",
                       "else", "loop", "self", "super", "varargs", "kwargs", "caller"})
_PLACEHOLDER = re.compile(r"\{\{ *([A-Za-z_][A-Za-z0-9_]*) *\}\}")


@lru_cache(maxsize=512)
def simple_parts(source: str) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """A template that is only text and ``{{ name }}`` placeholders, as (texts, names) with one more
    text than names; None when it uses anything else of jinja2 (blocks, comments, filters, attribute
    access, whitespace control) or has a CR (jinja2 rewrites line ends): those render through jinja2."""
    if "\r" in source:
        return None
    texts, names, pos = [], [], 0
    for m in _PLACEHOLDER.finditer(source):
        texts.append(source[pos:m.start()])
        names.append(m.group(1))
        pos = m.end()
    texts.append(source[pos:])
    if any("{" in t for t in texts):  # "{%", "{#", "{{ x|f }}", "{{ a.b }}" ...: not simple
        return None
    if _RESERVED.intersection(names):  # jinja2 literals and operators ({{ true }} is True, not a variable)
        return None
    return tuple(texts), tuple(names)


def _fill(parts: tuple[tuple[str, ...], tuple[str, ...]], variables: dict) -> str:
    texts, names = parts
    out = [texts[0]]
    for name, text in zip(names, texts[1:]):
        out.append(str(variables[name]))  # what jinja2 prints for a value (None -> "None", a list -> its repr)
        out.append(text)
    return "".join(out)


def render(source: str, variables: dict, *, task: str, field: str) -> str:
    # Text and {{ name }} placeholders only: filled in directly, as jinja2 would (0.02 ms per render
    # less, three renders per item; tests/test_render_constant.py diffs both on every built-in task)
    parts = simple_parts(source)
    if parts is not None and all(n in variables for n in parts[1]):
        return _fill(parts, variables).strip()
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
    parts = simple_parts(fmt)
    if parts is not None and set(parts[1]) <= {"label", "text"}:
        return sep.join(_fill(parts, {"label": lab, "text": txt}).strip() for lab, txt in zip(labels, texts))
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


def plain_from_messages(messages) -> str:
    """Chat messages as one plain prompt, the layout :func:`plain_from_chat` gives a task's prompt: the
    system prompt, each user turn with the assistant's answer on the next line, the last user turn;
    blocks separated by blank lines (no answer cue: the messages name none)."""
    system = "\n\n".join(str(m["content"]) for m in messages if m["role"] == "system") or None
    turns = [m for m in messages if m["role"] != "system"]
    shots: list[tuple[str, str]] = []
    pending: str | None = None
    for m in turns[:-1] if turns and turns[-1]["role"] == "user" else turns:
        if m["role"] == "user":
            if pending is not None:
                shots.append((pending, ""))
            pending = str(m["content"])
        else:
            shots.append((pending or "", str(m["content"])))
            pending = None
    if pending is not None:
        shots.append((pending, ""))
    last = str(turns[-1]["content"]) if turns and turns[-1]["role"] == "user" else ""
    return plain_from_chat(system, shots, last, "")
