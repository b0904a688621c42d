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


def dedup_against(items: list[dict], others: list[tuple[str, list[tuple[str, dict]]]],
                  threshold: float = DEFAULT_THRESHOLD, field: str = "question", other_field: str | None = None
                  ) -> tuple[list[dict], list[dict]]:
    """Cross-set dedup (Chinese SimpleQA §3.3 checks its questions against other sets): an item whose
    question scores at least ``threshold`` against any question of the ``others`` (``(file name,
    [(where, item)])``) is dropped. Returns ``(kept, pairs)``: each pair names the item, the other
    set's file, item id, text and the score (the best over the other sets; the first file of equal
    ones), for the side-by-side listing."""
    from glotbench.errors import DataError

    of = other_field or field
    pools = []
    for name, recs in others:
        texts, refs = [], []
        for where, rec in recs:
            if not isinstance(rec.get(of), str):
                raise DataError(f"{name}: {where}: field '{of}': missing or not a string (--against items need it)")
            texts.append(utils.default_process(rec[of]))
            refs.append(rec)
        pools.append((name, texts, refs))
    kept, pairs = [], []
    for it in items:
        q = utils.default_process(str(it.get(field, "")))
        best = None
        for name, texts, refs in pools:
            hit = process.extractOne(q, texts, scorer=fuzz.token_sort_ratio, score_cutoff=threshold) if texts else None
            if hit is not None and (best is None or hit[1] > best[1]):
                best = (name, float(hit[1]), refs[hit[2]])
        if best is None:
            kept.append(it)
            continue
        name, score, other = best
        pairs.append({"item": it, "id": str(it.get("id", "")), "text": str(it.get(field, "")), "similarity": round(score, 2),
                      "other_file": name, "other_id": str(other.get("id", "")), "other_text": other[of]})
    return kept, pairs


SIDE_BY_SIDE_COLUMNS = ["id", "text", "similarity", "other_file", "other_id", "other_text"]
