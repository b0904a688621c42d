"""`glotbench build dedup --against OTHER.jsonl ...`: cross-set dedup (:func:`glotbench.build.dedup.dedup_against`)
and the duplicates listed side by side (``<output stem>.duplicates.csv``). Called from build_qa_cmd's ``dedup``."""

from __future__ import annotations

from pathlib import Path


def read_others(paths: list[Path]) -> list[tuple[str, list[tuple[str, dict]]]]:
    from glotbench.data.loaders import iter_jsonl
    from glotbench.errors import DataError

    out = []
    for p in paths:
        if not Path(p).exists():
            raise DataError(f"{p}: no such file (--against)")
        out.append((str(p), [(f"line {n}", rec) for n, rec in iter_jsonl(Path(p))]))
    return out


def cross_set(kept: list[dict], dropped: list[dict], within: list, others, output: Path, threshold: float,
              field: str, against_field: str | None) -> list[dict]:
    """Drops (into ``dropped``) the kept items that duplicate another set's, writes the side-by-side
    sheet of every duplicate pair (within the set and across), returns the items still kept."""
    from glotbench.build.dedup import SIDE_BY_SIDE_COLUMNS, dedup_against
    from glotbench.build.provenance import drop
    from glotbench.build.review import write_sheet

    still, pairs = dedup_against(kept, others, threshold, field, against_field)
    for p in pairs:
        it = p["item"]
        it["duplicate_of"], it["duplicate_in"], it["similarity"] = p["other_id"], p["other_file"], p["similarity"]
        dropped.append(drop(it, "dedup_against", f"near-duplicate of {p['other_id']} in {p['other_file']} "
                                                 f"(similarity {p['similarity']} >= {threshold})"))
    texts = {str(i.get("id")): str(i.get(field, "")) for i in kept}
    rows = [{"id": str(it.get("id", "")), "text": str(it.get(field, "")), "similarity": score, "other_file": "(this set)",
             "other_id": of, "other_text": texts.get(of, "")} for it, of, score in within]
    rows += [{k: p[k] for k in SIDE_BY_SIDE_COLUMNS} for p in pairs]
    stem = output.name[: -len(".jsonl")] if output.name.endswith(".jsonl") else output.stem
    sheet = output.with_name(stem + ".duplicates.csv")
    write_sheet(sheet, rows, SIDE_BY_SIDE_COLUMNS)
    print(f"dedup: {len(pairs)} duplicates of {len(others)} other set(s); {len(rows)} pairs side by side in {sheet}")
    return still
