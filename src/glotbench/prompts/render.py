"""Render a task's jinja2 templates into chat messages or a plain-completion prompt."""

from __future__ import annotations

import re
from functools import lru_cache

import jinja2

from glotbench.errors import DataError, TaskSpecError
from glotbench.prompts import sandbox

# templates come from files: jinja2's immutable sandbox (prompts/sandbox.py, docs/untrusted-files.md)
class NullValue(Exception):
    """A template printed a null (``None``), which would reach the model as the text "None"."""


def _finalize(value):
    if value is None:
        raise NullValue()
    return value


_ENV = sandbox.environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=False, autoescape=False,
                           finalize=_finalize)


class UnsafeTemplate(Exception):
    """A template :func:`sandbox.check` refuses (the reason is the message)."""


@lru_cache(maxsize=512)
def compile_template(source: str) -> jinja2.Template:
    why = sandbox.check(source)
    if why is not None:
        raise UnsafeTemplate(why)
    return _ENV.from_string(source)


_RESERVED = frozenset({"true", "false", "none", "True", "False", "None", "and", "or", "not", "in", "is", "if",
                       "else", "loop", "self", "super", "varargs", "kwargs", "caller"})
_PLACEHOLDER = re.compile(r"\{\{ *([A-Za-z_][A-Za-z0-9_]*) *\}\}")


@lru_cache(maxsize=512)
def simple_parts(source: str) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """A template that is only text and ``{{ name }}`` placeholders, as (texts, names) with one more
    text than names; None when it uses anything else of jinja2 (blocks, comments, filters, attribute
    access, literals) or has a CR (jinja2 rewrites line ends)."""
    if "\r" in source:
        return None
    texts, names, pos = [], [], 0
    for m in _PLACEHOLDER.finditer(source):
        texts.append(source[pos:m.start()])
        names.append(m.group(1))
        pos = m.end()
    texts.append(source[pos:])
    if any("{" in t for t in texts) or _RESERVED.intersection(names):
        return None
    return tuple(texts), tuple(names)


@lru_cache(maxsize=512)
def constant_text(source: str) -> str | None:
    """What :func:`render` gives for a template without placeholders (any variables), or None when it
    has some (or anything else of jinja2)."""
    parts = simple_parts(source)
    if parts is None or parts[1]:
        return None
    return parts[0][0].strip()


def _null_error(task: str, field: str, record: str | None, name: str | None) -> DataError:
    what = f"variable '{name}'" if name else "a value it prints"
    rec = f" record {record}:" if record is not None else ""
    return DataError(f"task {task}:{rec} field '{field}': {what} is null and would be sent as the text \"None\"; fix "
                     "the record or give a value under 'default:' in the task file")


@lru_cache(maxsize=512)
def _fill_plan(source: str) -> tuple[str, tuple[str, ...], tuple[str, ...]] | None:
    """:func:`simple_parts` as (first text, names, the text after each name), or None."""
    parts = simple_parts(source)
    return None if parts is None else (parts[0][0], parts[1], parts[0][1:])


_ABSENT = object()


def render(source: str, variables: dict, *, task: str, field: str, record: str | None = None) -> str:
    # Text and {{ name }} placeholders (nearly every task template) are filled in directly, as jinja2
    # would: a jinja2 render per template was a tenth of a run's CPU against a fast server
    # (docs/performance.md; tests/test_render_constant.py diffs both on every built-in task).
    plan = _fill_plan(source)
    if plan is not None:
        first, names, rest = plan
        get = variables.get
        vals = [get(n, _ABSENT) for n in names]
        if _ABSENT not in vals:  # (a name not there: jinja2 names it)
            if None in vals:
                for n, v in zip(names, vals):
                    if v is None:
                        raise _null_error(task, field, record, n)
            return (first + "".join([str(v) + t for v, t in zip(vals, rest)])).strip()
    try:
        return compile_template(source).render(**variables).strip()
    except jinja2.TemplateSyntaxError as err:
        raise TaskSpecError(f"task {task}: field '{field}': template syntax error line {err.lineno}: {err.message}") from None
    except jinja2.UndefinedError as err:
        raise TaskSpecError(f"task {task}: field '{field}': {err.message} (known variables: {', '.join(sorted(variables))})") from None
    except NullValue:
        raise _null_error(task, field, record, None) from None
    except UnsafeTemplate as err:
        raise TaskSpecError(f"task {task}: field '{field}': {err}") from None
    except sandbox.SecurityError as err:
        raise TaskSpecError(f"task {task}: field '{field}': refused by the template sandbox: {err} "
                            "(docs/untrusted-files.md)") from None


@lru_cache(maxsize=512)
def _label_then_text(fmt: str) -> tuple[str, str, str] | None:
    """The texts around the placeholders of a choice format ``...{{ label }}...{{ text }}...`` (the usual
    one: filled by concatenation, no render() call per option), or None."""
    parts = simple_parts(fmt)
    if parts is None or parts[1] != ("label", "text"):
        return None
    return parts[0]


def choices_block(labels: list[str], texts: list[str], fmt: str, sep: str, *, task: str) -> str:
    # Each option line is what render() gives for {"label": ..., "text": ...} (tests/test_render_constant.py
    # compares both on every built-in task's choice format); the usual format is filled by concatenation,
    # without a render() call per option (five or more per item).
    around = _label_then_text(fmt)
    if around is not None and None not in labels and None not in texts:  # a null: render() names it
        t0, t1, t2 = around
        return sep.join([(t0 + str(lab) + t1 + str(txt) + t2).strip() for lab, txt in zip(labels, texts)])
    return sep.join(render(fmt, {"label": lab, "text": txt}, task=task, field="prompt.choice_format")
                    for lab, txt in zip(labels, texts))


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
