"""`glotbench build review import --kind label|rating SHEET...`: annotators' labels or ratings
aggregated (:mod:`glotbench.build.annotations`), with the agreement statistics printed and written
to ``<output stem>.review.json``. Called from build_items_cmd's ``review import``."""

from __future__ import annotations

import json
from pathlib import Path

import typer


CAUSES = {"sd": "dropped, rating SD not below --max-sd", "conflict": "dropped, label conflicts with --against",
          "not_unanimous": "dropped, not unanimous", "no_majority": "dropped, no strict majority",
          "too_few_annotators": "dropped, fewer than --min-annotators", "not_annotated": "dropped, not annotated",
          "not_in_against": "kept, not in --against (not checked)"}


def _fmt(v) -> str:
    return "undefined (one category throughout)" if v is None else f"{round(v, 3) + 0.0:.3f}"  # no "-0.000"


def import_annotations(sheets: list[Path], output: Path, *, kind: str, fmt=None, dataset=None, column=None,
                       label_field="label", unanimous=False, strict_majority=False, min_annotators=1, scale=None,
                       max_sd=None, sd="sample", against=None, against_field="label") -> None:
    from glotbench.build.annotations import aggregate, agreement, read_against, read_annotations
    from glotbench.build.provenance import dropped_path, read_items, write_items
    from glotbench.errors import DataError

    if kind == "label" and (max_sd is not None or scale):
        raise DataError("--max-sd and --scale are for --kind rating")
    if kind == "rating" and (against is not None or strict_majority):
        raise DataError("--against and --strict-majority are for --kind label (a rating's mean is not a label)")
    if min_annotators < 1:
        raise DataError(f"--min-annotators {min_annotators}: expected 1 or more")
    if max_sd is not None and not max_sd > 0:
        raise DataError(f"--max-sd {max_sd}: expected a positive number")
    ann = read_annotations(sheets, kind, column, scale, fmt)
    other = read_against(against, against_field) if against is not None else None
    items = read_items(dataset) if dataset is not None else None
    stats = agreement(ann, sd)
    res = aggregate(ann, unanimous=unanimous, strict_majority=strict_majority, min_annotators=min_annotators,
                    max_sd=max_sd, sd=sd, against=other, against_name=str(against), dataset=items, label_field=label_field)
    fk = stats["fleiss_kappa"]
    typer.echo(f"{stats['items']} items, {stats['annotators']} annotators")
    if kind == "label":
        typer.echo(f"Fleiss' kappa: {_fmt(fk['value'])} over {fk['items']} items with {fk['ratings_per_item']} labels each"
                   + (f" ({fk['left_out']} items with another number of labels left out)" if fk["left_out"] else ""))
    for level, a in stats["krippendorff_alpha"].items():
        typer.echo(f"Krippendorff's alpha ({level}): {_fmt(a['value'])} over {a['items']} items with 2+ annotations")
    if "mean_sd" in stats and stats["mean_sd"]["value"] is not None:
        typer.echo(f"mean rating SD ({sd}): {stats['mean_sd']['value']:.3f} over {stats['mean_sd']['items']} items with 2+ ratings")
    if res.ties:
        shown = ", ".join(res.ties[:10]) + (f" and {len(res.ties) - 10} more" if len(res.ties) > 10 else "")
        typer.echo(f"ties (not broken, dropped): {len(res.ties)}: {shown}")
    for cause, n in sorted(res.counts.items()):
        if cause != "tie":
            typer.echo(f"{CAUSES.get(cause, cause)}: {n}")
    summary = {"kind": kind, "sheets": [str(s) for s in sheets], **stats, "annotator_names": ann.annotators,
               "kept": len(res.kept), "dropped": len(res.dropped), "ties": res.ties, "counts": dict(res.counts),
               "rules": {"unanimous": unanimous, "strict_majority": strict_majority, "min_annotators": min_annotators,
                         "max_sd": max_sd, "sd": sd if kind == "rating" else None, "scale": scale,
                         "against": str(against) if against else None}}
    write_items(output, res.kept)
    write_items(dropped_path(output), res.dropped)
    stem = output.name[: -len(".jsonl")] if output.name.endswith(".jsonl") else output.stem
    summary_path = output.with_name(stem + ".review.json")
    summary_path.write_text(json.dumps(summary, indent=2, ensure_ascii=False), encoding="utf-8")
    typer.echo(f"wrote {output}: {len(res.kept)} items kept, {len(res.dropped)} dropped -> {dropped_path(output)}; "
               f"agreement: {summary_path}")
