"""Near-duplicate questions by rapidfuzz.

Similarity is ``rapidfuzz.fuzz.token_sort_ratio`` (0-100) of the questions after
``rapidfuzz.utils.default_process`` (lower-cased, non-alphanumerics to spaces, trimmed), so word
order and punctuation do not hide a duplicate. Items are taken in file order; an item whose question
scores at least ``threshold`` against an item already kept is dropped and names that item
(``duplicate_of``) and the score. (OpenHuEval App. B.2 deduplicates by embedding cosine similarity
with a threshold per tag; this is the string-similarity variant with one stated threshold.)
"""

from __future__ import annotations

from rapidfuzz import fuzz, process, utils

DEFAULT_THRESHOLD = 85.0
SCORER = "rapidfuzz.fuzz.token_sort_ratio"


def dedup(items: list[dict], threshold: float = DEFAULT_THRESHOLD, field: str = "question") -> tuple[list[dict], list[tuple[dict, str, float]]]:
    """``(kept, [(dropped item, id of the kept item it duplicates, score)])``."""
    kept: list[dict] = []
    texts: list[str] = []
    dropped = []
    for it in items:
        q = utils.default_process(str(it.get(field, "")))
        best = process.extractOne(q, texts, scorer=fuzz.token_sort_ratio, score_cutoff=threshold) if texts else None
        if best is not None:
            _, score, idx = best
            dropped.append((it, str(kept[idx].get("id")), round(float(score), 2)))
            continue
        kept.append(it)
        texts.append(q)
    return kept, dropped
