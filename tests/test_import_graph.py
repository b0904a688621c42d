"""The module import graph, measured from the AST (docs/architecture.md, "Layers").

Every ``import`` and ``from ... import`` of src/glotbench counts, lazy ones inside functions and
``TYPE_CHECKING`` blocks included, relative imports resolved. A module belongs to a *unit*: a
top-level module or subpackage of glotbench (``glotbench.engine``, ``glotbench.paths``), each
benchmark package ``glotbench.benchmarks.<name>`` a unit of its own. The order of the layers is read
from the ``layers`` contract of .importlinter, so the test and ``lint-imports`` share one list.
Counted: (a) import statements from a unit to one in a higher layer (or to an independent sibling of
its layer), (b) import cycles = strongly connected components of more than one unit.
"""

from __future__ import annotations

import ast
import configparser
import shutil
from collections import defaultdict
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src" / "glotbench"
CONFIG = REPO / ".importlinter"
LAYERS_CONTRACT = "importlinter:contract:layers"
MAX_UPWARD = 3
MAX_CYCLES = 1
# Module-level circles outside a benchmark package that are still there, each with what removes it.
# The bar (#51): at most one circle in the whole module graph, inside one benchmark package.
KNOWN_MODULE_CYCLES = {
}


def read_layers(config: Path = CONFIG) -> tuple[list[list[str]], set[str]]:
    """The layers of .importlinter's ``layers`` contract, top first, as unit names
    (``glotbench.engine``), and which layers are independent (``a | b``: siblings that never import
    each other)."""
    parser = configparser.ConfigParser()
    parser.read(config, encoding="utf-8")
    section = parser[LAYERS_CONTRACT]
    container = section["containers"].strip()
    layers, independent = [], set()
    for line in section["layers"].strip().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        sep = "|" if "|" in line else ":"
        names = [f"{container}.{n.strip().strip('()')}" for n in line.split(sep)]
        if sep == "|" and len(names) > 1:
            independent.update(names)
        layers.append(names)
    return layers, independent


def module_name(path: Path, src: Path) -> str:
    parts = list(path.relative_to(src.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def unit_of(module: str) -> str:
    parts = module.split(".")
    if len(parts) >= 3 and parts[1] == "benchmarks":
        return ".".join(parts[:3])
    return ".".join(parts[:2])


def _resolve(name: str, modules: set[str]) -> str | None:
    """The module ``name`` names: itself, else its longest prefix that is a module."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def imports_of(path: Path, module: str, modules: set[str]) -> list[tuple[int, list[str]]]:
    """(line, target modules) of every import statement in ``path``, within the package."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    root = module.split(".")[0]
    found = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            names = [f"{mod}.{a.name}" if f"{mod}.{a.name}" in modules else mod for a in node.names]
        targets = sorted({t for n in names if n.split(".")[0] == root and (t := _resolve(n, modules))})
        if targets:
            found.append((node.lineno, targets))
    return found


def measure(src: Path, layers: list[list[str]], independent: set[str]):
    """(upward imports as ``file:line -> target`` lines, cycles as sorted unit lists, units in no layer)."""
    files = {module_name(p, src): p for p in sorted(src.rglob("*.py")) if "__pycache__" not in p.parts}
    modules = set(files)
    rank = {u: i for i, layer in enumerate(layers) for u in layer}
    top = src.name

    def layer_of(unit: str) -> int | None:
        if unit == top:  # the package's own __init__: the facade above every layer
            return -1
        if unit.startswith(f"{top}.benchmarks.") and unit not in rank:
            return rank.get(f"{top}.benchmarks")
        return rank.get(unit)

    upward, graph, unplaced = [], defaultdict(set), set()
    for module, path in files.items():
        unit = unit_of(module)
        for line, targets in imports_of(path, module, modules):
            up = []
            for target in targets:
                other = unit_of(target)
                if other == unit:
                    continue
                graph[unit].add(other)
                mine, theirs = layer_of(unit), layer_of(other)
                if mine is None or theirs is None:
                    unplaced.update(u for u, r in ((unit, mine), (other, theirs)) if r is None)
                elif theirs < mine or (theirs == mine and unit in independent and other in independent):
                    up.append(target)
            if up:
                upward.append(f"{path.relative_to(src.parent)}:{line} -> {', '.join(up)}")
    return upward, _cycles(graph), sorted(unplaced)


def module_cycles(src: Path) -> list[list[str]]:
    """Circles of the module graph itself (strongly connected components of more than one module)."""
    files = {module_name(p, src): p for p in sorted(src.rglob("*.py")) if "__pycache__" not in p.parts}
    graph = defaultdict(set)
    for module, path in files.items():
        for _, targets in imports_of(path, module, set(files)):
            graph[module].update(t for t in targets if t != module)
    return _cycles(graph)


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one node (Tarjan, iterative)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    member = stack.pop()
                    on.discard(member)
                    comp.append(member)
                    if member == node:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return sorted(out)


def _report(upward, cycles) -> str:
    lines = [f"{len(upward)} upward import(s):", *(f"  {u}" for u in upward), f"{len(cycles)} cycle(s):"]
    return "\n".join(lines + [f"  {' <-> '.join(c)}" for c in cycles])


def test_the_import_graph_follows_the_layers():
    """At most 3 upward imports and at most 1 cycle (between benchmark packages only); every unit
    has a layer."""
    layers, independent = read_layers()
    upward, cycles, unplaced = measure(SRC, layers, independent)
    print(_report(upward, cycles))
    assert not unplaced, f"units in no layer of .importlinter: {unplaced}"
    assert len(upward) <= MAX_UPWARD, _report(upward, cycles)
    assert len(cycles) <= MAX_CYCLES, _report(upward, cycles)
    assert all(u.startswith("glotbench.benchmarks.") for c in cycles for u in c), _report(upward, cycles)


def test_module_cycles_are_one_benchmark_circle_and_the_known_ones():
    """Module-level circles: at most one inside a benchmark package; any other is one of
    KNOWN_MODULE_CYCLES (printed with what removes it), so the list can only shrink."""
    cycles = module_cycles(SRC)
    bench = [c for c in cycles if len({unit_of(m) for m in c}) == 1 and c[0].startswith("glotbench.benchmarks.")]
    other = [c for c in cycles if c not in bench]
    print(f"{len(cycles)} module cycle(s):")
    for c in cycles:
        why = next((w for k, w in KNOWN_MODULE_CYCLES.items() if k in c), "inside one benchmark package")
        print(f"  {' <-> '.join(c)}  [{why}]")
    assert len(bench) <= 1, bench
    unknown = [c for c in other if not any(k in c for k in KNOWN_MODULE_CYCLES)]
    assert not unknown, unknown
    stale = [k for k in KNOWN_MODULE_CYCLES if not any(k in c for c in other)]
    assert not stale, f"gone: drop from KNOWN_MODULE_CYCLES: {stale}"


def test_the_counter_sees_a_planted_upward_import_and_cycle(tmp_path):
    """The measure can fail: in a tiny tree, a lazy upward import and a relative one are counted per
    statement, with file and line, and the circle they close is one cycle."""
    pkg = tmp_path / "toy"
    for name, text in {
        "__init__.py": "",
        "low/__init__.py": "",
        "low/a.py": "import os\n\ndef f():\n    from toy.high import b  # lazy, upward\n",
        "low/c.py": "from ..high.b import g  # relative, upward\nfrom . import a\n",
        "high/__init__.py": "",
        "high/b.py": "from toy.low import a\n\ndef g():\n    pass\n",
        "mid.py": "import toy.low.a\n",
    }.items():
        (pkg / name).parent.mkdir(parents=True, exist_ok=True)
        (pkg / name).write_text(text, encoding="utf-8")
    layers = [["toy.high"], ["toy.mid"], ["toy.low"]]
    upward, cycles, unplaced = measure(pkg, layers, set())
    assert upward == ["toy/low/a.py:4 -> toy.high.b", "toy/low/c.py:1 -> toy.high.b"]
    assert cycles == [["toy.high", "toy.low"]] and unplaced == []
    assert module_cycles(pkg) == [["toy.high.b", "toy.low.a"]]
    # siblings declared independent (``a | b``) may not import each other (mid -> low); others may
    upward, _, _ = measure(pkg, [["toy.high"], ["toy.mid", "toy.low"]], {"toy.mid", "toy.low"})
    assert upward[-1] == "toy/mid.py:1 -> toy.low.a" and len(upward) == 3
    upward, _, _ = measure(pkg, [["toy.high"], ["toy.mid", "toy.low"]], set())
    assert len(upward) == 2
    # a unit the layers do not name is reported, not silently placed
    assert measure(pkg, [["toy.high"], ["toy.low"]], set())[2] == ["toy.mid"]


def test_the_real_tree_with_a_planted_import_is_caught(tmp_path):
    """A copy of src/glotbench with one lazy upward import (errors -> cli) is one more upward
    import than the tree itself."""
    layers, independent = read_layers()
    base = len(measure(SRC, layers, independent)[0])
    copy = tmp_path / "glotbench"
    shutil.copytree(SRC, copy, ignore=shutil.ignore_patterns("__pycache__"))
    errors = copy / "errors.py"
    errors.write_text(errors.read_text(encoding="utf-8") + "\n\ndef _planted():\n    from glotbench.cli import app\n",
                      encoding="utf-8")
    upward, _, _ = measure(copy, layers, independent)
    assert len(upward) == base + 1
    assert any(u.startswith("glotbench/errors.py:") and u.endswith("-> glotbench.cli") for u in upward)


@pytest.mark.parametrize("line, expect", [("a | b", ["glotbench.a", "glotbench.b"]), ("(c)", ["glotbench.c"])])
def test_layer_lines_are_read_like_import_linter(tmp_path, line, expect):
    cfg = tmp_path / "il.ini"
    cfg.write_text(f"[{LAYERS_CONTRACT}]\ncontainers = glotbench\nlayers =\n    top\n    {line}\n", encoding="utf-8")
    layers, independent = read_layers(cfg)
    assert layers == [["glotbench.top"], expect]
    assert independent == (set(expect) if len(expect) > 1 else set())
