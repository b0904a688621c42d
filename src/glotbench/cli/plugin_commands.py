"""CLI sub-commands a benchmark package adds to a command group (``bench.command(group, module)``):
the module registers its commands on the group's typer app when imported, and is imported only
when that group runs (or the whole tree is loaded)."""

from __future__ import annotations

import importlib

GROUP_MODULES: dict[str, list[str]] = {}


def add_group_module(group: str, module: str) -> None:
    mods = GROUP_MODULES.setdefault(group, [])
    if module not in mods:
        mods.append(module)


def import_group(group: str) -> None:
    """Import the benchmark modules that add sub-commands to ``group``."""
    from glotbench import plugins

    plugins.load()
    for mod in GROUP_MODULES.get(group, []):
        importlib.import_module(mod)
