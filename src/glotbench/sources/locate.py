"""Which data root a task reads from: one root for all its files, never mixed file by file.

In order: ``$GLOTBENCH_DATA``, ``./shared/data``, ``../shared/data`` (and the same next to the
checkout), then the user's cache (``glotbench data pull``). A root is the task's when it holds
every file the task's ``source.fetch`` declares (a task without one: its split files).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from glotbench.paths import data_roots
from glotbench.sources import cache


@dataclass(frozen=True)
class Location:
    root: Path
    kind: str  # "local" (GLOTBENCH_DATA, shared/data) or "cache" (pulled by glotbench)


def needed(spec) -> list[str]:
    """The paths under the data root the task needs: every origin's files but the optional ones
    (an hf origin: its folder), else its split files."""
    if spec.source.fetch:
        return list(dict.fromkeys(d for o in spec.source.fetch for d in o.dests(required=True)))
    return list(dict.fromkeys(spec.dataset.splits.values()))


def _present(root: Path, rel: str) -> bool:
    p = root / rel
    if p.is_dir():
        return any(c.is_file() for c in p.rglob("*"))
    return p.is_file()


def candidate_roots() -> list[Location]:
    out = [Location(r, "local") for r in data_roots()]
    c = cache.data_dir()
    if all(loc.root != c for loc in out):
        out.append(Location(c, "cache"))
    return out


def find_location(spec) -> Location | None:
    """The first root holding every file the task needs (None: no root has them all)."""
    need = needed(spec)
    if not need or any(Path(p).expanduser().is_absolute() for p in need):
        return None
    for loc in candidate_roots():
        if loc.root.is_dir() and all(_present(loc.root, rel) for rel in need):
            return loc
    return None


def missing_line(spec, rel: str | None = None) -> str:
    """One line: the task, the file it lacks, where that comes from, and the command that fetches it."""
    origins = "; ".join(o.label() for o in spec.source.fetch) or "no source declared"
    if spec.source.url:
        origins += f"; {spec.source.url}"
    what = f"data file {rel} not found" if rel else "data not present"
    return (f"task {spec.name}: {what} (source: {origins}); fetch it with: glotbench data pull {spec.name} "
            f"(or set GLOTBENCH_DATA to a folder holding it)")
