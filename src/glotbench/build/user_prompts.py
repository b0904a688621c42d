"""Prompts a user's file gives a build step (``build criteria --criterion-file``, ``build classify
--labels``): jinja2 templates per language, untrusted like every prompt file (docs/untrusted-files.md).

At load every template is parsed and passed through :func:`glotbench.prompts.sandbox.check` (a
template reaching for Python's insides is refused, naming file and field); it renders in jinja2's
immutable sandbox with ``StrictUndefined``. Before any request, :func:`check_items` finds, for every
item, the language's prompt and every field that prompt names: an item without one is refused in one
line naming the items file, the record and the field (no request is sent for a refusable mistake).
"""

from __future__ import annotations

from pathlib import Path

import jinja2
from jinja2 import meta

from glotbench.errors import DataError, TaskSpecError
from glotbench.prompts import sandbox

_ENV = sandbox.environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=False, autoescape=False)


def template_fields(source: str, path: Path, field: str) -> set[str]:
    """The names ``source`` uses; a syntax error or an unsafe template is a one-line TaskSpecError."""
    try:
        tree = _ENV.parse(source)
    except jinja2.TemplateSyntaxError as err:
        raise TaskSpecError(f"{path}: field '{field}': template syntax error line {err.lineno}: {err.message}") from None
    why = sandbox.check(source)
    if why is not None:
        raise TaskSpecError(f"{path}: field '{field}': {why}")
    return set(meta.find_undeclared_variables(tree))


def printed_names(source: str) -> set[str]:
    """The names a template always prints (``{{ question }}``, ``{{ meta.level }}`` at its top level, not
    under an ``if`` or a ``for``, nor inside a filter or a test): an item must have each, and not as
    null (it would be sent as "None"). A name used otherwise that an item lacks fails at render, also
    before any request."""
    from jinja2 import nodes

    out: set[str] = set()
    for output in (n for n in _ENV.parse(source).body if isinstance(n, nodes.Output)):  # not under an if or a for
        for node in output.nodes:
            while isinstance(node, (nodes.Getattr, nodes.Getitem)):
                node = node.node
            if isinstance(node, nodes.Name):
                out.add(node.name)
    return out


def render(source: str, values: dict) -> str:
    try:
        return _ENV.from_string(source).render(**values)
    except sandbox.SecurityError as err:  # a name the load-time walk could not see
        raise TaskSpecError(f"refused by the template sandbox: {err}") from None


def pick_language(prompts: dict[str, str], default: str | None, item: dict) -> str | None:
    """The prompt language for ``item``: its ``language`` when the file has that prompt, else the
    file's ``language``, else the only prompt; None when none fits."""
    lang = item.get("language")
    if isinstance(lang, str) and lang in prompts:
        return lang
    if default is not None:
        return default
    return next(iter(prompts)) if len(prompts) == 1 else None


def check_items(items: list[dict], items_path: Path, prompts: dict[str, str], default: str | None,
                fields: dict[str, set[str]], provided: set[str], what: Path) -> dict[str, str]:
    """``{item id: prompt language}``; the first item the file cannot be filled for is a DataError
    naming the items file, the record and the field."""
    out = {}
    for n, it in enumerate(items, 1):
        lang = pick_language(prompts, default, it)
        if lang is None:
            raise DataError(f"{items_path}: record {n}: field 'language': {it.get('language')!r} has no prompt in "
                            f"{what} (prompts: {', '.join(prompts)}; give the file a 'language' to fall back on)")
        for name in sorted(fields[lang] - provided):
            if name not in it or it[name] is None:
                raise DataError(f"{items_path}: record {n}: field '{name}': missing, and {what}'s prompt "
                                f"'prompt.{lang}' uses it")
        out[str(it["id"])] = lang
    return out


def prompt_calls(items: list[dict], items_path: Path, source, provided: set[str], key: str, max_tokens: int) -> list:
    """One call per item from a user's prompt file (a label set, a criterion file: ``spec.prompt``,
    ``spec.language``, ``spec.max_tokens``, ``fields``, ``path``, ``prompt(item, lang)``), call id
    ``<item id>#<key>``: every item checked (:func:`check_items`), then every prompt rendered, so a
    mistake is one line before any request."""
    from glotbench.build.calls import Call, chat

    langs = check_items(items, items_path, source.spec.prompt, source.spec.language, source.fields, provided, source.path)
    calls = []
    for n, it in enumerate(items, 1):
        lang = langs[str(it["id"])]
        try:
            text = source.prompt(it, lang)
        except jinja2.UndefinedError as err:
            raise DataError(f"{items_path}: record {n}: {source.path}'s prompt 'prompt.{lang}' cannot be filled: "
                            f"{err.message}") from None
        calls.append(Call(f"{it['id']}#{key}", chat(text, max_tokens=source.spec.max_tokens or max_tokens)))
    return calls


def shipped(folder: str, suffix: str) -> dict[str, Path]:
    """The files the benchmark packages ship as ``files/<folder>/NAME<suffix>``, by NAME (the first
    package that ships a name wins)."""
    from glotbench.paths import PACKAGED_ROOTS
    from glotbench.registry import require_catalog

    require_catalog()
    out: dict[str, Path] = {}
    for root in PACKAGED_ROOTS:
        for p in sorted((Path(root) / folder).glob("*" + suffix)):
            out.setdefault(p.name[: -len(suffix)], p)
    return out
