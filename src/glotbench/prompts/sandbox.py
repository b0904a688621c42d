"""Templates from files (task prompts, choice templates, judge prompts, ``--chat-template``, build
step prompts, lm-eval ``doc_to_*``) are data, not code: they render in jinja2's
:class:`~jinja2.sandbox.ImmutableSandboxedEnvironment`, and a template that reaches for Python's
insides is refused when its file is read, before any request (docs/untrusted-files.md).

:func:`check` is that load-time refusal: it walks the parsed template for what only an escape needs
(an attribute or item whose name starts with ``_``, the ``attr`` filter on such a name, the
internal attributes jinja2's sandbox knows: ``mro``, ``gi_frame``, ``func_globals``, ...). The
sandbox stays the guard at render time for anything the walk cannot see (a name held in a variable).
"""

from __future__ import annotations

import re
from functools import lru_cache

import jinja2
from jinja2 import nodes
from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError

__all__ = ["SecurityError", "check", "environment", "unsafe_names"]

# names jinja2.sandbox refuses on some type (is_internal_attribute), refused here by name on any value
_INTERNAL = frozenset({"mro", "func_closure", "func_code", "func_dict", "func_defaults", "func_globals",
                       "im_class", "im_func", "im_self", "gi_frame", "gi_code", "cr_frame", "cr_code",
                       "ag_code", "ag_frame", "tb_frame", "tb_next", "f_back", "f_globals", "f_locals",
                       "f_builtins", "f_code"})


def environment(**kwargs) -> ImmutableSandboxedEnvironment:
    """The environment every file-supplied template renders in (keyword arguments as jinja2's)."""
    return ImmutableSandboxedEnvironment(**kwargs)


def _bad(name: object) -> bool:
    return isinstance(name, str) and (name.startswith("_") or name in _INTERNAL)


def unsafe_names(tree: nodes.Template) -> list[str]:
    """The attribute and item names in a parsed template that only reaching Python's insides needs."""
    found: list[str] = []
    for node in tree.find_all((nodes.Getattr, nodes.Getitem, nodes.Filter)):
        if isinstance(node, nodes.Getattr) and _bad(node.attr):
            found.append(node.attr)
        elif isinstance(node, nodes.Getitem) and isinstance(node.arg, nodes.Const) and _bad(node.arg.value):
            found.append(str(node.arg.value))
        elif isinstance(node, nodes.Filter) and node.name == "attr":
            arg = node.args[0] if node.args else None
            if not isinstance(arg, nodes.Const) or _bad(arg.value):
                found.append(f"attr({getattr(arg, 'value', '...')})")
    return found


_PARSER = environment()
# what every name :func:`unsafe_names` refuses needs in the text: a template without any of it
# (nearly all) is passed without parsing (every run reads every task file)
_MAYBE = re.compile(r"""[.\[]\s*["']?_|attr|""" + "|".join(sorted(_INTERNAL)))


def check(source: str) -> str | None:
    """Why ``source`` may not be rendered (one short phrase), or None. A syntax error is left to the
    caller's own parse, which reports it with its line."""
    if _MAYBE.search(source) is None:
        return None
    try:
        tree = _PARSER.parse(source)
    except jinja2.TemplateSyntaxError:
        return None
    bad = unsafe_names(tree)
    if bad:
        return (f"the template reaches for Python internals ({', '.join(dict.fromkeys(bad))}): templates from files "
                "render in a sandbox and may not (docs/untrusted-files.md)")
    return None


def first_unsafe(obj, prefix: str = "") -> tuple[str, str] | None:
    """(field path, why) of the first string in a file's parsed mapping that :func:`check` refuses,
    or None: every string of a task or judge file that looks like a template is looked at, so a
    template in ``options`` (lm-eval's ``doc_to_text``, a task class's own) is refused at load too."""
    stack = [(prefix, obj)]
    while stack:
        where, cur = stack.pop()
        if isinstance(cur, str):
            if "{{" in cur or "{%" in cur:
                why = _checked(cur)
                if why is not None:
                    return where or "(top level)", why
        elif isinstance(cur, dict):
            stack.extend((f"{where}.{k}" if where else str(k), v) for k, v in reversed(list(cur.items())))
        elif isinstance(cur, (list, tuple)):
            stack.extend((f"{where}[{i}]", v) for i, v in reversed(list(enumerate(cur))))
    return None


@lru_cache(maxsize=4096)
def _checked(source: str) -> str | None:
    return check(source)


def printed_paths(source: str) -> set[tuple[str, ...]]:
    """The ``name.key.key`` (or ``name['key']``) paths a template prints as they are (``{{ meta.level }}``,
    not inside a filter, a test or a condition), as tuples: a null there would be sent as "None", so
    the items are checked for it before any request (tasks/task.py)."""
    try:
        tree = _PARSER.parse(source)
    except jinja2.TemplateSyntaxError:
        return set()
    out: set[tuple[str, ...]] = set()
    for output in tree.find_all(nodes.Output):
        for node in output.nodes:
            keys: list[str] = []
            while isinstance(node, (nodes.Getattr, nodes.Getitem)):
                if isinstance(node, nodes.Getattr):
                    keys.append(node.attr)
                elif isinstance(node.arg, nodes.Const) and isinstance(node.arg.value, (str, int)):
                    keys.append(node.arg.value)
                else:
                    break
                node = node.node
            else:
                if isinstance(node, nodes.Name) and keys:
                    out.add((node.name, *reversed(keys)))
    return out
