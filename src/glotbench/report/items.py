"""Per-item views of sample records: a metric's per-item value, and each item's outcome.

A metric is per-item when it is accuracy (gold == prediction, an unparseable answer counts as
wrong, exactly as :mod:`glotbench.scoring.metrics` does) or the mean of a per-item value
(``exact_match``, ``numeric_match``, ``mean:<key>`` ...). Corpus metrics (macro-F1, MCC) have no
per-item value; :func:`item_vector` returns None for them.
"""

from __future__ import annotations

import math
from typing import Any

from glotbench.scoring.metrics import ScoredItem, get_metric

OUTCOMES = ("correct", "partial", "wrong", "unparseable", "error")


def value_key(metric: str) -> str | None:
    """The per-item value a mean-type metric averages, or "accuracy", or None (corpus metric)."""
    try:
        fn = get_metric(metric)
    except KeyError:
        return None
    name = getattr(fn, "__name__", "")
    if name == "accuracy":
        return "accuracy"
    if name.startswith("mean_"):
        return name[len("mean_"):]
    return None


def item_value(rec: dict, metric: str) -> float | None:
    key = value_key(metric)
    if key is None:
        return None
    if key == "accuracy":
        pred = rec.get("pred")
        return float(pred is not None and str(pred) == str(rec.get("gold")))
    v = (rec.get("values") or {}).get(key)
    if v is None:
        return None
    try:
        v = float(v)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(v) else v


def item_vector(records: list[dict], metric: str) -> list[float] | None:
    """Per-item values of ``metric`` over ``records`` (None when it is a corpus metric)."""
    if value_key(metric) is None:
        return None
    return [item_value(r, metric) for r in records]


def is_binary(values: list[float | None]) -> bool:
    return bool(values) and all(v in (0.0, 1.0) for v in values)


def scored_items(records: list[dict]) -> list[ScoredItem]:
    return [ScoredItem(gold=r.get("gold"), pred=r.get("pred"), values=r.get("values") or {},
                       metadata=r.get("metadata") or {}) for r in records]


def outcome(rec: dict, metric: str | None) -> str:
    """error | unparseable | correct | partial | wrong, judged on the task's headline metric."""
    if rec.get("status") == "error":
        return "error"
    if rec.get("pred") is None:
        return "unparseable"
    v = item_value(rec, metric) if metric else None
    if v is None:  # corpus metric: fall back to gold == prediction
        v = float(str(rec.get("pred")) == str(rec.get("gold")))
    if metric in ("abs_error", "rel_error"):
        return "correct" if v == 0 else "wrong"
    if v >= 1.0:
        return "correct"
    return "partial" if v > 0 else "wrong"


def outcome_counts(records: list[dict], metric: str | None) -> dict[str, int]:
    counts = {k: 0 for k in OUTCOMES}
    for r in records:
        counts[outcome(r, metric)] += 1
    return counts


def raw_output(rec: dict) -> str:
    outs = rec.get("outputs") or []
    texts = []
    for o in outs:
        if isinstance(o, dict):
            if o.get("text") is not None:
                texts.append(str(o["text"]))
            elif "logprob" in o:
                texts.append(f"logprob {o['logprob']:.4f}")
    return "\n---\n".join(texts)


def reasoning_of(rec: dict) -> str:
    outs = rec.get("outputs") or []
    return "\n---\n".join(str(o["reasoning"]) for o in outs if isinstance(o, dict) and o.get("reasoning"))


def prompt_text(prompt: Any) -> str:
    """A prompt (chat messages or plain text) as readable text."""
    if isinstance(prompt, list):
        parts = []
        for m in prompt:
            if isinstance(m, dict):
                parts.append(f"[{m.get('role', '?')}]\n{m.get('content', '')}")
            else:
                parts.append(str(m))
        return "\n\n".join(parts)
    return "" if prompt is None else str(prompt)
