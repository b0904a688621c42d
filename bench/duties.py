"""glotbench's per-item duties, each switched off in one process: what bench/duties_floor.py strips.

A duty is work a run does for every item that the bare client (bench/throughput.py) does not: a
guarantee or a report a user gets. Switching one off replaces one function in this process only
(nothing in glotbench changes), so a pass can measure what a run would cost without it:

    samples    the samples.jsonl file (every record written out again, read back from the journal)
    sums       every journal row's checksum (stored NULL, as in journals written before checksums)
    responses  the journal's response rows (what a rerun, the cache and `runs doctor` reuse)
    latency    the latency block of results.json (read back from the journal)
    commits    the commit of each event-loop iteration's rows (one commit at the run's end instead)
    bootstrap  every interval: not a patch, the run's own setting (``--bootstrap 0``)

Run as a script, it is the CLI with duties off: ``python bench/duties.py samples,sums -- run -t ...``
(an empty list: the CLI as it is, started the same way).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable

BOOTSTRAP = "bootstrap"  # a setting of the run, not a patch


def _no_commit(journal) -> None:
    """The loop iteration's commit, skipped: its waiters go on, the rows stay queued for the last flush."""
    done, journal._tick = journal._tick, None
    if done is not None and not done.done():
        done.set_result(None)


# duty -> (module, attribute path within it, replacement)
PATCHES: dict[str, tuple[str, str, Callable]] = {
    "samples": ("glotbench.engine.session", "export_samples", lambda *a, **k: 0),
    "sums": ("glotbench.engine.journal", "row_sum", lambda *parts: None),
    "responses": ("glotbench.engine.journal", "Journal.put_response", lambda self, *a, **k: None),
    "latency": ("glotbench.engine.journal", "Journal.latencies", lambda self, role="model": {}),
    "commits": ("glotbench.engine.journal", "Journal._commit_tick", _no_commit),
}
DUTIES = (*PATCHES, BOOTSTRAP)


def target(duty: str) -> tuple[object, str]:
    """(the object holding the function, its name) of a patched duty; AttributeError if glotbench moved it."""
    module, path, _ = PATCHES[duty]
    owner: object = importlib.import_module(module)
    *parents, name = path.split(".")
    for p in parents:
        owner = getattr(owner, p)
    getattr(owner, name)  # it must exist: a renamed function would make the pass measure nothing
    return owner, name


def strip(duties: Iterable[str]) -> list[str]:
    """Switch ``duties`` off in this process; returns the ones switched (``bootstrap`` is the caller's
    setting). An unknown duty is refused."""
    done = []
    for d in duties:
        if d not in DUTIES:
            raise SystemExit(f"unknown duty {d!r}; known: {', '.join(DUTIES)}")
        if d == BOOTSTRAP:
            continue
        owner, name = target(d)
        setattr(owner, name, PATCHES[d][2])
        done.append(d)
    return done


def parse(text: str) -> list[str]:
    """``samples,sums`` -> the duties; ``all``: every one; empty: none."""
    if text.strip() == "all":
        return list(DUTIES)
    return [d for d in (p.strip() for p in text.split(",")) if d]


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[2] != "--":
        raise SystemExit("usage: python bench/duties.py DUTY[,DUTY...] -- <glotbench arguments>")
    off = parse(sys.argv[1])
    strip(off)
    rest = sys.argv[3:]
    if BOOTSTRAP in off:
        rest = [*rest, "--bootstrap", "0"]
    from glotbench.cli import main

    sys.argv = ["glotbench", *rest]
    main()
