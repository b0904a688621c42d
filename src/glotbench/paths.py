"""Where the benchmark data lives.

Tasks name their files relative to a data root. The root is, in order: ``$GLOTBENCH_DATA``,
``./shared/data`` or ``../shared/data`` from the current directory, then the same two paths
from the repository checkout this package was imported from.
"""

from __future__ import annotations

import os
from pathlib import Path


def data_roots() -> list[Path]:
    roots: list[Path] = []
    env = os.environ.get("GLOTBENCH_DATA")
    if env:
        roots.append(Path(env))
    cwd = Path.cwd()
    here = Path(__file__).resolve()
    for base in (cwd, *here.parents[:4]):
        for rel in ("shared/data", "../shared/data"):
            roots.append((base / rel).resolve())
    seen: list[Path] = []
    for r in roots:
        if r not in seen:
            seen.append(r)
    return seen


def find_data_root() -> Path | None:
    for root in data_roots():
        if root.is_dir():
            return root
    return None


def resolve_data_file(rel: str) -> Path:
    """Return the path of ``rel`` under the first data root holding it (or the unresolved path)."""
    p = Path(rel).expanduser()
    if p.is_absolute():
        return p
    for root in data_roots():
        cand = root / rel
        if cand.exists():
            return cand
    root = find_data_root()
    return (root / rel) if root else p


# Files no upstream source serves as files (prompts extracted from Python constants), shipped in a
# benchmark package under the same relative path they have in a data root (``bench.files(folder)``;
# licences in glotbench/benchmarks/NOTICE.md).
PACKAGED_ROOTS: list[Path] = []


def add_packaged_root(folder: Path) -> None:
    if folder not in PACKAGED_ROOTS:
        PACKAGED_ROOTS.append(folder)


def packaged_file(rel: str) -> Path | None:
    """``rel`` in a benchmark package's shipped files, or None."""
    from glotbench.registry import require_catalog

    require_catalog()  # the catalog adds the packages' roots when it is built
    for root in PACKAGED_ROOTS:
        if (root / rel).is_file():
            return root / rel
    return None


def benchmark_file(rel: str) -> Path:
    """``rel`` as shipped in a benchmark package (:func:`packaged_file`) when it is one of those
    files, else :func:`resolve_data_file` (the data root)."""
    return packaged_file(rel) or resolve_data_file(rel)
