"""The one "did you mean" helper: the known names nearest a misspelt one, closest first.

Every unknown-name message (tasks and suites, metrics, scorers and the other registries, command-line
options) asks :func:`closest` or :func:`known_hint`, so a typo gets the few nearest names instead of a
list of every name. Similarity is rapidfuzz's Indel ratio (``fuzz.ratio``, 0-100), ties in name order.
Imports nothing of glotbench (the registry uses it).
"""

from __future__ import annotations

from typing import Iterable

LIMIT = 5  # at most this many suggestions
CUTOFF = 60.0  # a name scoring below this is not offered
SHOW_ALL = 10  # a registry this small is listed whole (closest first)


def closest(name: str, known: Iterable[str], *, limit: int = LIMIT) -> list[str]:
    """Up to ``limit`` names of ``known`` nearest ``name`` (closest first); [] when none is near."""
    from rapidfuzz import fuzz, process

    names = sorted(set(known))
    hits = process.extract(name, names, scorer=fuzz.ratio, limit=limit, score_cutoff=CUTOFF)
    return [hit[0] for hit in sorted(hits, key=lambda h: (-h[1], h[0]))]


def known_hint(name: str, known: Iterable[str], *, limit: int = LIMIT) -> str:
    """What an unknown-name message adds: ``did you mean a, b?``; a small set listed whole, the
    nearest first (``known: a, b, c``); else how many there are."""
    names = sorted(set(known))
    near = closest(name, names, limit=limit)
    if len(names) <= SHOW_ALL:
        return "known: " + ", ".join(near + [n for n in names if n not in near])
    if near:
        return f"did you mean {', '.join(near)}?"
    return f"none of the {len(names)} known names is close"
