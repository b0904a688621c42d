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


def embed_run(items: list[dict], output: Path, encoder: str, cosine: float, field: str, against: list[Path] | None,
              against_field: str | None, group_field: str | None = None) -> tuple[list[dict], list[dict]]:
    """``build dedup --embed DIR``: embedding cosine dedup (:mod:`glotbench.build.embed_dedup`) within the
    set and against ``--against`` sets; every pair side by side in ``<output stem>.duplicates.csv``.
    Returns ``(kept, dropped)``."""
    from glotbench.build import embed_dedup as ed
    from glotbench.build.dedup import SIDE_BY_SIDE_COLUMNS
    from glotbench.build.provenance import add_step, drop
    from glotbench.build.review import write_sheet
    from glotbench.errors import DataError, GlotbenchError

    if not 0 < cosine <= 1:
        raise GlotbenchError(f"build dedup --embed: --cosine must be in (0, 1], got {cosine}")
    for n, it in enumerate(items, 1):
        if not isinstance(it.get(field), str):
            raise DataError(f"items: record {n}: field '{field}': missing or not a string (--embed encodes it)")
    of = against_field or field
    others_raw = []
    for name, recs in read_others(list(against or [])):
        for where, rec in recs:
            if not isinstance(rec.get(of), str):
                raise DataError(f"{name}: {where}: field '{of}': missing or not a string (--against items need it)")
        others_raw.append((name, [r for _, r in recs]))
    path = ed.encoder_dir(encoder)  # refused in one line before anything is loaded or written
    vecs = ed.encode([it[field] for it in items], path)
    others = [(name, recs, ed.encode([r[of] for r in recs], path)) for name, recs in others_raw]
    kept, pairs = ed.embed_dedup(items, vecs, cosine, others, group_field)
    info = dict(scorer=f"cosine of {ed.pooling(path)}-pooled embeddings ({path.name})", threshold=cosine, group_field=group_field)
    for it in kept:
        add_step(it, "dedup", source=it.get("passage_id"), **info)
    dropped, rows = [], []
    for p in pairs:
        it, other = p["item"], p["other"]
        add_step(it, "dedup", source=it.get("passage_id"), **info)
        it["duplicate_of"], it["similarity"] = str(other.get("id", "")), p["similarity"]
        if p["other_file"] != "(this set)":
            it["duplicate_in"] = p["other_file"]
        dropped.append(drop(it, "dedup_embed" if p["other_file"] == "(this set)" else "dedup_against",
                            f"near-duplicate of {other.get('id')} in {p['other_file']} (cosine {p['similarity']} >= {cosine})"))
        rows.append({"id": str(it.get("id", "")), "text": it[field], "similarity": p["similarity"], "other_file": p["other_file"],
                     "other_id": str(other.get("id", "")), "other_text": other.get(field if p["other_file"] == "(this set)" else of, "")})
    stem = output.name[: -len(".jsonl")] if output.name.endswith(".jsonl") else output.stem
    sheet = output.with_name(stem + ".duplicates.csv")
    write_sheet(sheet, rows, SIDE_BY_SIDE_COLUMNS)
    print(f"dedup --embed: {len(rows)} pairs side by side in {sheet}")
    return kept, dropped
