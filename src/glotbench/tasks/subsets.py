"""Which items of a split a run takes (docs/run-config.md, "Subsets"):

* ``--limit N`` the first N (or a share): reproducible and cheap, but the first N may all carry one
  label (HuCOLA dev's first 10 are all 1): :func:`one_class_warning` says so;
* ``--sample N --seed S`` N items drawn at random with the seed (the run's ``--seed``);
* ``--stratify FIELD`` with ``--sample N``: N items spread as evenly as the data allows over the
  values of FIELD (``gold``/``target``: the gold answer; else a metadata field), drawn with the seed.

Items keep the split's order. ``sample`` and ``stratify`` are request settings: they are in the
fingerprint, the default run directory and results.json ``settings``.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable
from typing import Any

from glotbench.errors import GlotbenchError

GOLD_FIELDS = ("gold", "target", "label")


def _count(n: int | float, total: int) -> int:
    if isinstance(n, float) and n < 1:
        return min(total, max(1, math.ceil(n * total)))
    return min(total, int(n))


def _key(value: Any) -> str:
    return repr(value) if isinstance(value, (list, dict)) else str(value)


def field_value(sample, field: str, task: str):
    if field in sample.metadata:
        return sample.metadata[field]
    if field in sample.vars:
        return sample.vars[field]
    if field in GOLD_FIELDS:
        return sample.target
    raise GlotbenchError(f"--stratify {field}: task {task} item {sample.id} has no field {field!r} "
                         f"(use gold, or a metadata field: {', '.join(sorted(sample.metadata)) or 'none'})")


def sample_items(samples: list, n: int | float, seed: int) -> list:
    """``n`` items (a count, or a share 0 < n < 1) drawn with ``seed``, in the split's order."""
    k = _count(n, len(samples))
    picked = sorted(random.Random(seed).sample(range(len(samples)), k))
    return [samples[i] for i in picked]


def stratified_items(samples: list, n: int | float, seed: int, field: str, task: str) -> list:
    """``n`` items spread evenly over the values of ``field``: each value gets ``n // values`` (a value
    with fewer items gives all of them, the rest go to the others); drawn with ``seed``."""
    k = _count(n, len(samples))
    groups: dict[str, list[int]] = {}
    for i, s in enumerate(samples):
        groups.setdefault(_key(field_value(s, field, task)), []).append(i)
    rng = random.Random(seed)
    order = {v: rng.sample(idx, len(idx)) for v, idx in sorted(groups.items())}
    taken: list[int] = []
    # round-robin over the values (sorted, so the draw depends on the seed only)
    while len(taken) < k:
        progressed = False
        for v in order:
            if order[v] and len(taken) < k:
                taken.append(order[v].pop())
                progressed = True
        if not progressed:
            break
    return [samples[i] for i in sorted(taken)]


def one_class_warning(taken: list, every_targets: Iterable, limit: Any) -> str | None:
    """A warning when a ``--limit`` slice's gold labels are all one class while the split has several.
    ``every_targets`` (the split's gold labels) is read only when the slice is one class."""
    if len(taken) < 2:
        return None
    try:
        key = _key(taken[0].target)
        for s in taken:  # stops at the first other class (nearly every slice)
            if _key(s.target) != key:
                return None
    except Exception:  # noqa: BLE001 - an odd target: no warning
        return None
    first = {key}
    classes = {_key(t) for t in every_targets}
    if not 1 < len(classes) <= 50:  # one class overall, or free-text answers: nothing to warn about
        return None
    return (f"--limit {limit} takes the first {len(taken)} items, whose gold labels are all {next(iter(first))!r} "
            f"(the split has {len(classes)} classes): a constant answer scores 100%; for a representative "
            f"subset use --set sample={len(taken)} (seeded random) or --set sample={len(taken)},stratify=gold")
