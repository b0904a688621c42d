"""OpenHuEval §4 / App. F with a judge: the benchmark's own analysis prompts run over a run's traces.

For every response with a trace (rows from ``glotbench analyze thinking``): thoughts (App. F.1),
segment categories (F.2.1), four-dimension tags and the translation share (F.2.2) and thought
correctness (Fig. 6: among INCORRECT responses with an assessed thought, the share holding at least
one correct thought; and, per response, the distribution of its thought correctness ratio), and the
Fig. 9 cross-tab of the reasoning segments' correctness (Dim1) by complexity (Dim2), as
docs/openhueval.md describes them. Every judge call goes through the
caller the command passes (the run's journal); a reply that cannot be read is counted
(``unreadable``), never guessed.
"""

from __future__ import annotations

import asyncio
import math
from collections import Counter
from typing import Any

from glotbench.benchmarks.openhueval import thinking as th
from glotbench.models.base import GenRequest

CATEGORIES = ("Introduction", "Reasoning", "Review", "Summary", "Final_answer")
DIMENSIONS = {
    "Dimension1": ("correctness", ("Completely Incorrect", "Partially Correct", "Completely Correct", "Non Conclusion")),
    "Dimension2": ("complexity", ("Simple Assertion", "Complex Thought")),
    "Dimension3": ("scope", ("Only Current Blank", "Modify Previous Blanks", "Current Blank and Consecutive Blank")),
    "Dimension4": ("language_transfer", ("Contains Language Transfer", "No Language Transfer")),
}
TRANSFER = "Contains Language Transfer"
CORRECT_THOUGHT = 2  # the access_thought prompt's confidence "out of 2"


def _req(text: str, max_tokens: int) -> GenRequest:
    return GenRequest(messages=({"role": "user", "content": text},), max_tokens=max_tokens, temperature=0.0)


def is_simpleqa(task: str) -> bool:
    return "simpleqa" in task.lower()


def is_fib(task: str) -> bool:
    return "fib" in task.lower()


async def analyse_row(row: dict, task: str, caller, max_tokens: int = 4096) -> None:
    """Fill ``row`` with ``segments`` (texts), ``categories``, ``tags`` (per Reasoning segment) and
    ``thought_scores`` (0-2 or None per assessed thought); ``judge_unreadable`` counts failures."""
    trace, _ = th.split_trace(row["response"], row.get("reasoning"))
    row["judge_unreadable"] = 0
    if not trace:
        return
    sid = row["id"]
    segs: list[dict] = []
    if is_simpleqa(task):
        out = await caller(_req(th.build_shift_expression_request(row["question"], trace), max_tokens), task=task, sample_id=sid)
        found_lang, exprs = th.parse_shift_expressions(out.text)
        marked, offsets = th.mark_shift_candidates(trace, exprs)
        if offsets:
            out2 = await caller(_req(th.build_confirm_shift_request(marked), max_tokens), task=task, sample_id=sid)
            segs = [{"text": t, "category": "Reasoning"} for t in th.split_at_shifts(trace, offsets, th.parse_confirmed_shift_ids(out2.text))]
        elif found_lang is not None:
            segs = [{"text": trace, "category": "Reasoning"}]
    else:
        out = await caller(_req(th.build_fib_split_request(trace), max_tokens), task=task, sample_id=sid)
        segs = [s for s in th.parse_segments(out.text) if str(s.get("text", "")).strip()]
    if not segs:
        row["judge_unreadable"] += 1
        return
    row["segments"] = [s["text"] for s in segs]
    row["categories"] = [str(s.get("category") or "").strip() for s in segs]
    reasoning = [s for s in segs if str(s.get("category", "")).strip() == "Reasoning"]
    if is_fib(task) and reasoning:
        req = th.build_fib_classification_request(row.get("options") or [], _as_list(row.get("gold")),
                                                  _as_list(row.get("pred")), reasoning)
        out = await caller(_req(req, max_tokens), task=task, sample_id=sid)
        tagged = [s for s in th.parse_segments(out.text) if str(s.get("category", "")).strip() == "Reasoning"]
        row["tags"] = [{d: str(s.get(d) or "").strip() for d in DIMENSIONS} for s in tagged]
        if not tagged:
            row["judge_unreadable"] += 1
    expected = _gold_text(row.get("gold"))
    thoughts = [s["text"] for s in reasoning] if reasoning else row["segments"]
    scores = []
    for t in thoughts:
        out = await caller(_req(th.build_thought_assessment_request(row["question"], t, expected), max_tokens),
                           task=task, sample_id=sid)
        scores.append(th.parse_thought_assessment(out.text))
    row["thought_scores"] = scores
    row["judge_unreadable"] += sum(1 for s in scores if s is None)


def _as_list(x: Any) -> list:
    if x is None:
        return []
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _gold_text(gold: Any) -> str:
    if isinstance(gold, (list, tuple)):
        return ", ".join(str(g) for g in gold)
    return "" if gold is None else str(gold)


async def analyse_rows(rows: list[dict], task: str, caller) -> None:
    await asyncio.gather(*(analyse_row(r, task, caller) for r in rows))


# ---------------------------------------------------------------- tables

RATIO_BINS = 10  # Fig. 6's thought correctness ratio: exactly 0, then ten bins of width 0.1, (k/10, (k+1)/10]


def correct_ratio(scores: list) -> float | None:
    """A response's thought correctness ratio: correct thoughts (confidence 2/2) over its assessed thoughts
    (an unreadable assessment is left out of both); None when none was assessed."""
    assessed = [x for x in scores if x is not None]
    return sum(1 for x in assessed if x == CORRECT_THOUGHT) / len(assessed) if assessed else None


def ratio_distribution(ratios: list[float], n_bins: int = RATIO_BINS) -> list[dict]:
    """Fig. 6 as a distribution over responses: ``[{"lo", "hi", "n", "share"}]``, the first bin the
    responses with no correct thought (ratio exactly 0, ``lo == hi == 0``), then ``(k/n_bins, (k+1)/n_bins]``;
    ``share`` is of the responses given (None when there are none)."""
    counts = [0] * (n_bins + 1)
    for r in ratios:
        # round first: 3/10 * 10 is 3.0000000000000004 in floats, and belongs in (0.2, 0.3]
        counts[0 if r <= 0 else min(n_bins, max(1, math.ceil(round(r * n_bins, 9))))] += 1
    total = len(ratios)
    edges = [(0.0, 0.0)] + [(k / n_bins, (k + 1) / n_bins) for k in range(n_bins)]
    return [{"lo": lo, "hi": hi, "n": n, "share": n / total if total else None} for (lo, hi), n in zip(edges, counts)]


def fig9_crosstab(tags: list[dict]) -> dict:
    """Fig. 9: the tagged reasoning segments by complexity (Dim2) x correctness (Dim1): ``counts[complexity]
    [correctness]``, ``share`` of all tagged segments (the paper's: Simple Assertion and Completely Correct is
    49% of DeepSeek-R1's segments) and ``row_share`` within each complexity class (glotbench's reading beside
    it). A tag outside the declared classes is its own row or column (an empty one: "")."""
    _, corr_classes = DIMENSIONS["Dimension1"]
    _, cplx_classes = DIMENSIONS["Dimension2"]
    counts: dict[str, dict[str, int]] = {}
    for t in tags:
        row = counts.setdefault(t.get("Dimension2", ""), {})
        c = t.get("Dimension1", "")
        row[c] = row.get(c, 0) + 1
    rows = [*cplx_classes, *sorted(set(counts) - set(cplx_classes))]
    cols = [*corr_classes, *sorted({c for r in counts.values() for c in r} - set(corr_classes))]
    full = {r: {c: counts.get(r, {}).get(c, 0) for c in cols} for r in rows}
    n = len(tags)
    return {"n_segments": n, "complexity": rows, "correctness": cols, "counts": full,
            "share": {r: {c: (v / n if n else None) for c, v in cs.items()} for r, cs in full.items()},
            "row_share": {r: {c: (v / sum(cs.values()) if sum(cs.values()) else None) for c, v in cs.items()}
                          for r, cs in full.items()}}


def summarise(rows: list[dict]) -> dict[str, dict]:
    """Per outcome (and ALL): categories, dimension tags, translation share, thought correctness."""
    out: dict[str, dict] = {}
    for outcome in (*th.OUTCOMES, "ALL"):
        rs = [r for r in rows if outcome == "ALL" or r["outcome"] == outcome]
        judged = [r for r in rs if r.get("segments")]
        cats = Counter(c for r in judged for c in r.get("categories") or [])
        tags = [t for r in judged for t in r.get("tags") or []]
        dims = {name: dict(Counter(t.get(d, "") for t in tags)) for d, (name, _) in DIMENSIONS.items()}
        transfer = sum(1 for t in tags if t.get("Dimension4") == TRANSFER)
        scores = [r.get("thought_scores") or [] for r in judged]
        assessed = [s for s in scores if any(x is not None for x in s)]
        n_thoughts = sum(1 for s in scores for x in s if x is not None)
        n_correct = sum(1 for s in scores for x in s if x == CORRECT_THOUGHT)
        with_correct = sum(1 for s in assessed if CORRECT_THOUGHT in s)
        out[outcome] = {
            "n_responses": len(rs),
            "n_judged": len(judged),
            "n_unreadable": sum(r.get("judge_unreadable", 0) for r in rs),
            "segment_categories": dict(cats),
            "mean_segments": (sum(len(r["segments"]) for r in judged) / len(judged)) if judged else None,
            "n_reasoning_tagged": len(tags),
            "dimensions": dims,
            "translation_share": transfer / len(tags) if tags else None,
            "n_thoughts_assessed": n_thoughts,
            "correct_thought_share": n_correct / n_thoughts if n_thoughts else None,
            "n_with_assessed_thought": len(assessed),
            "share_with_correct_thought": with_correct / len(assessed) if assessed else None,
            "correct_ratio_distribution": ratio_distribution([correct_ratio(s) for s in assessed]),
            "fig9": fig9_crosstab(tags),
        }
    out["fig6"] = {"incorrect_with_correct_thought": out["INCORRECT"]["share_with_correct_thought"],
                   "n_incorrect_assessed": out["INCORRECT"]["n_with_assessed_thought"],
                   "distribution": {o: out[o]["correct_ratio_distribution"] for o in ("INCORRECT", "NOT_ATTEMPTED")}}
    return out
