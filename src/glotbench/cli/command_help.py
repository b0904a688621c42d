"""The help line of a top-level command, read from the source of the module that defines it, without
importing it (``glotbench --help`` stays fast). The one source is what typer itself shows: a command's
``help=`` or its function's docstring (``@app.command("NAME")``, ``@app.command()`` on ``def NAME``,
``app.command("NAME")(f)``, following ``f.__doc__ = g.__doc__``); a group's ``typer.Typer(help=...)``
added with ``app.add_typer(X, name="NAME")`` (``X`` defined there or imported from another module of
this package). tests/test_cli_lazy.py checks the lazy help equals the help with every module imported."""

from __future__ import annotations

import ast
from pathlib import Path

HERE = Path(__file__).parent


def _tree(module: str) -> ast.Module:
    return ast.parse((HERE / f"{module}.py").read_text(encoding="utf-8"))


def _kw(call: ast.Call, name: str):
    for k in call.keywords:
        if k.arg == name and isinstance(k.value, ast.Constant):
            return k.value.value
    return None


def _is_app(node: ast.expr, attr: str) -> bool:
    """``app.<attr>`` (the top-level Typer of glotbench.cli)."""
    return isinstance(node, ast.Attribute) and node.attr == attr and isinstance(node.value, ast.Name) \
        and node.value.id == "app"


def _docstring(tree: ast.Module, fn: str) -> str | None:
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == fn:
            doc = ast.get_docstring(node)
            if doc is not None:
                return doc
    for node in tree.body:  # fn.__doc__ = other.__doc__ (+ more text: the help line is the first one's)
        value = node.value.left if isinstance(getattr(node, "value", None), ast.BinOp) else getattr(node, "value", None)
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Attribute)
                and node.targets[0].attr == "__doc__" and isinstance(node.targets[0].value, ast.Name)
                and node.targets[0].value.id == fn and isinstance(value, ast.Attribute)
                and isinstance(value.value, ast.Name)):
            return _docstring(tree, value.value.id)
    return None


def _typer_help(module: str, tree: ast.Module, var: str) -> str | None:
    """The ``help=`` of ``var = typer.Typer(...)`` in ``module`` or the module it imports ``var`` from."""
    for node in tree.body:
        if (isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == var for t in node.targets)
                and isinstance(node.value, ast.Call)):
            return _kw(node.value, "help")
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("glotbench.cli.") \
                and any((a.asname or a.name) == var for a in node.names):
            other = node.module.rsplit(".", 1)[1]
            return _typer_help(other, _tree(other), var)
    return None


def registered(module: str) -> dict[str, tuple[str, bool]]:
    """The top-level commands and groups ``module`` adds: name -> (help, hidden)."""
    tree = _tree(module)
    found: dict[str, tuple[str, bool]] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):  # @app.command(...) def f
            for dec in node.decorator_list:
                if isinstance(dec, ast.Call) and _is_app(dec.func, "command"):
                    name = dec.args[0].value if dec.args else node.name.replace("_", "-")
                    found[name] = (_kw(dec, "help") or _docstring(tree, node.name) or "", bool(_kw(dec, "hidden")))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Call) and _is_app(node.func.func, "command") \
                and node.args and isinstance(node.args[0], ast.Name):  # app.command("NAME")(f)
            dec = node.func
            name = dec.args[0].value if dec.args else node.args[0].id.replace("_", "-")
            found[name] = (_kw(dec, "help") or _docstring(tree, node.args[0].id) or "", bool(_kw(dec, "hidden")))
        elif isinstance(node, ast.Call) and _is_app(node.func, "add_typer") and node.args \
                and isinstance(node.args[0], ast.Name):  # app.add_typer(X, name="NAME")
            name = _kw(node, "name")
            found[name] = (_kw(node, "help") or _typer_help(module, tree, node.args[0].id) or "",
                           bool(_kw(node, "hidden")))
    return found


def command_help(name: str, modules: tuple[str, ...]) -> tuple[str, bool]:
    """(help, hidden) of the top-level command ``name``, from the first of ``modules`` that adds it."""
    for module in modules:
        got = registered(module).get(name)
        if got is not None:
            return got
    raise LookupError(f"no module of {modules} adds the command {name!r}")
