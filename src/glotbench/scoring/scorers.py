"""Per-item scorers: turn an extracted answer and the gold target into a prediction and values.

A scorer is ``fn(extracted, target, *, sample, pack) -> (pred, values)``; ``pred`` is None when
the answer was unparseable. Task YAML files name a scorer with ``scorer:``.
"""

from __future__ import annotations

import math
import unicodedata
from typing import Any, Callable

Scorer = Callable[..., tuple[Any, dict[str, float]]]


def label(extracted, target, *, sample=None, pack=None):
    if extracted is None:
        return None, {"correct": 0.0}
    return str(extracted), {"correct": float(str(extracted) == str(target))}


def _to_float(x) -> float | None:
    if x is None:
        return None
    if isinstance(x, (int, float)):
        return float(x)
    try:
        return float(str(x).strip().replace(",", "."))
    except ValueError:
        return None


def numeric(extracted, target, *, sample=None, pack=None):
    """Numeric exact match (relative tolerance 1e-6) plus absolute and relative error."""
    gold = _to_float(target)
    pred = _to_float(extracted)
    if pred is None or gold is None or math.isnan(pred):
        return None, {"numeric_match": 0.0}
    err = abs(pred - gold)
    return pred, {
        "numeric_match": float(math.isclose(pred, gold, rel_tol=1e-6, abs_tol=1e-9)),
        "abs_error": err,
        "rel_error": err / abs(gold) if gold else (0.0 if err == 0 else float("inf")),
    }


def _norm(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold().strip()
    return " ".join("".join(ch for ch in text if not unicodedata.category(ch).startswith("P")).split())


def exact_match(extracted, target, *, sample=None, pack=None):
    if extracted is None:
        return None, {"exact_match": 0.0}
    golds = target if isinstance(target, list) else [target]
    return str(extracted), {"exact_match": float(any(_norm(str(extracted)) == _norm(str(g)) for g in golds))}


SCORERS: dict[str, Scorer] = {"label": label, "numeric": numeric, "exact_match": exact_match}


def register_scorer(name: str, fn: Scorer) -> None:
    SCORERS[name] = fn


def get_scorer(name: str) -> Scorer:
    try:
        return SCORERS[name]
    except KeyError:
        raise KeyError(f"unknown scorer {name!r}; known: {', '.join(sorted(SCORERS))}") from None
