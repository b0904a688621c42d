"""Labels or ratings from any number of annotators, aggregated (`build review import --kind label|rating`).

HuLU (Ligeti-Nagy et al. 2023) §2-3 is the recipe: HuCOLA's labels are the majority decision of 4
annotators; HuRTE's test items are those 3 of 3 annotators labelled alike (unanimous) and its
Fleiss' kappa is reported; HuRTE's items whose original English label conflicts with the Hungarian
annotator's label are dropped (§3.2); HuCB's 7-point Likert ratings (-3..3) of 5 annotators are
kept when their SD < 1 (test items: SD < 0.5) and Krippendorff's alpha (interval) is reported.

A sheet is CSV/TSV (by extension) or JSONL with an ``id`` and the annotator's ``label`` (``--kind
label``) or ``rating`` (``--kind rating``); an ``annotator`` column lets one sheet hold several
annotators (long format), otherwise each sheet is one annotator. An empty cell is no annotation.
Any bad row is one DataError naming file, row and field, before anything is written.
"""

from __future__ import annotations

import csv
import math
import statistics
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from glotbench.build.agreement import LEVELS, fleiss_kappa, krippendorff_alpha
from glotbench.build.provenance import add_step, drop
from glotbench.data.loaders import iter_jsonl
from glotbench.errors import DataError
from glotbench.output.csv_safe import uncell

KINDS = ("label", "rating")


def _rows(path: Path, fmt: str | None):
    """(row number as the file shows it, record) of a CSV/TSV sheet (header = row 1) or a JSONL file (line)."""
    path = Path(path)
    if not path.exists():
        raise DataError(f"{path}: no such file")
    if (fmt or "") == "jsonl" or (not fmt and path.suffix.lower() in (".jsonl", ".json")):
        for n, rec in iter_jsonl(path):
            if not isinstance(rec, dict):
                raise DataError(f"{path}: line {n}: not a JSON object")
            yield f"line {n}", rec
        return
    delim = "\t" if (fmt == "tsv" or (not fmt and path.suffix.lower() in (".tsv", ".tab", ".txt"))) else ","
    try:
        with path.open(encoding="utf-8-sig", newline="") as fh:
            reader = csv.DictReader(fh, delimiter=delim)
            for n, row in enumerate(reader, 2):
                yield f"row {n}", {k: uncell((v or "").strip()) for k, v in row.items() if k is not None}
    except UnicodeDecodeError as err:
        raise DataError(f"{path}: not UTF-8 text (byte {err.start}): save the sheet as UTF-8 and import it again") from None


def _text(value) -> str:
    return "" if value is None else str(value).strip()


def parse_scale(scale: str | None) -> tuple[float, float] | None:
    """``-3..3`` -> (-3.0, 3.0)."""
    if not scale:
        return None
    try:
        lo, hi = (float(x) for x in scale.split(".."))
    except ValueError:
        raise DataError(f"--scale {scale!r}: expected MIN..MAX, e.g. -3..3 or 1..7") from None
    if not lo < hi:
        raise DataError(f"--scale {scale!r}: MIN must be below MAX")
    return lo, hi


@dataclass
class Annotations:
    """values[annotator][item id]; ids and annotators in first-seen order."""
    kind: str
    ids: list[str] = field(default_factory=list)
    annotators: list[str] = field(default_factory=list)
    values: dict[str, dict[str, object]] = field(default_factory=dict)
    typed: dict[str, object] = field(default_factory=dict)  # a label as a JSONL sheet first gave it (1, not "1")

    def of(self, iid: str) -> list:
        return [self.values[a][iid] for a in self.annotators if iid in self.values[a]]


def read_annotations(sheets: list[Path], kind: str, column: str | None = None, scale: str | None = None,
                     fmt: str | None = None) -> Annotations:
    if kind not in KINDS:
        raise DataError(f"--kind {kind!r}: expected one of {', '.join(KINDS)}")
    if fmt not in (None, "csv", "tsv", "jsonl"):
        raise DataError(f"--format {fmt!r}: expected csv, tsv or jsonl")
    col = column or kind
    bounds = parse_scale(scale)
    out = Annotations(kind)
    where: dict[tuple[str, str], str] = {}
    seen_ids: set[str] = set()
    for path in sheets:
        has_col = False
        for row_at, rec in _rows(path, fmt):
            if col not in rec:
                raise DataError(f"{path}: {row_at}: missing field '{col}' (has: {', '.join(rec) or 'nothing'})")
            has_col = True
            iid = _text(rec.get("id"))
            if not iid:
                raise DataError(f"{path}: {row_at}: field 'id': empty")
            ann = _text(rec.get("annotator")) if "annotator" in rec else str(path)
            if not ann:
                raise DataError(f"{path}: {row_at}: field 'annotator': empty")
            if iid not in seen_ids:  # listed with an empty cell only: "not annotated" in the dropped file
                seen_ids.add(iid)
                out.ids.append(iid)
            raw = rec.get(col)
            if _text(raw) == "":
                continue  # no annotation of this item by this annotator
            value: object = _text(raw)
            if kind == "label" and isinstance(raw, (int, float)) and not isinstance(raw, bool):
                out.typed.setdefault(str(value), raw)
            if kind == "rating":
                try:
                    value = float(raw)
                except (TypeError, ValueError):
                    raise DataError(f"{path}: {row_at}: field '{col}': {raw!r} is not a number") from None
                if not math.isfinite(value) or (bounds and not bounds[0] <= value <= bounds[1]):
                    raise DataError(f"{path}: {row_at}: field '{col}': {raw!r} is outside the scale {scale}")
            if (ann, iid) in where:
                raise DataError(f"{path}: {row_at}: field 'id': item {iid!r} already annotated by {ann} at "
                                f"{where[(ann, iid)]}")
            where[(ann, iid)] = f"{path}: {row_at}"
            if ann not in out.values:
                out.annotators.append(ann)
                out.values[ann] = {}
            out.values[ann][iid] = value
        if not has_col:
            raise DataError(f"{path}: no annotations (an empty sheet, or no rows with '{col}')")
    if not out.ids:
        raise DataError("review import: the sheets hold no annotation")
    return out


def _number(v) -> float | None:
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def agreement(ann: Annotations, sd: str = "sample") -> dict:
    """Fleiss' kappa over the items with the most common number (>= 2) of annotations (Fleiss needs
    the same number per item; the others are counted as left out), Krippendorff's alpha over every
    item with two or more (nominal always; ordinal and interval when every value is a number)."""
    per_item = [ann.of(i) for i in ann.ids]
    counts = Counter(len(v) for v in per_item if len(v) >= 2)
    out: dict = {"items": len(ann.ids), "annotators": len(ann.annotators)}
    if counts:
        n = max(counts, key=lambda c: (counts[c], c))
        rows = [[str(x) for x in v] for v in per_item if len(v) == n]
        k = fleiss_kappa(rows)
        out["fleiss_kappa"] = {"value": None if math.isnan(k) else k, "items": len(rows), "ratings_per_item": n,
                               "left_out": len(per_item) - len(rows)}
    else:
        out["fleiss_kappa"] = {"value": None, "items": 0, "ratings_per_item": None, "left_out": len(per_item)}
    pairable = [v for v in per_item if len(v) >= 2]
    numeric = all(_number(x) is not None for v in pairable for x in v)
    alphas = {}
    for level in LEVELS:
        if level != "nominal" and not numeric:
            continue
        units = [[x if level == "nominal" and ann.kind == "label" else _number(x) for x in v] for v in pairable]
        a = krippendorff_alpha(units, level)
        alphas[level] = {"value": None if math.isnan(a) else a, "items": len(pairable)}
    out["krippendorff_alpha"] = alphas
    if ann.kind == "rating":  # HuCB reports the SD over the corpus (1.01): the mean of the items' SDs
        sds = [(statistics.stdev if sd == "sample" else statistics.pstdev)([float(x) for x in v]) for v in pairable]
        out["mean_sd"] = {"value": statistics.fmean(sds) if sds else None, "items": len(sds), "sd": sd}
    return out


@dataclass
class Aggregated:
    kept: list[dict] = field(default_factory=list)
    dropped: list[dict] = field(default_factory=list)
    ties: list[str] = field(default_factory=list)
    counts: Counter = field(default_factory=Counter)


def aggregate(ann: Annotations, *, unanimous: bool = False, strict_majority: bool = False, min_annotators: int = 1,
              max_sd: float | None = None, sd: str = "sample", against: dict[str, str] | None = None,
              against_name: str = "", dataset: list[dict] | None = None, label_field: str = "label") -> Aggregated:
    """One record per item: the majority label (ties reported and dropped, never broken) or the mean
    rating, with the filters applied in order: too few annotators, tie / no majority, unanimous-only,
    SD (strictly below ``max_sd``), conflict with ``against``. Dropped items keep their reason."""
    if sd not in ("sample", "population"):
        raise DataError(f"--sd {sd!r}: expected sample or population")
    base = {str(it.get("id")): it for it in dataset} if dataset is not None else None
    if base is not None:
        unknown = [i for i in ann.ids if i not in base]
        if unknown:
            raise DataError(f"review import: item {unknown[0]!r} is annotated but not in the dataset "
                            f"({len(unknown)} such items)")
    out = Aggregated()
    order = [str(it.get("id")) for it in dataset] if dataset is not None else ann.ids
    for iid in order:
        vals = ann.of(iid)
        item = dict(base[iid]) if base is not None else {"id": iid}
        item["provenance"] = list(item.get("provenance") or [])
        info: dict = {"annotations": {a: ann.values[a][iid] for a in ann.annotators if iid in ann.values[a]}}
        reason = cause = None
        if not vals:
            cause, reason = "not_annotated", "not annotated"
        elif len(vals) < min_annotators:
            cause, reason = "too_few_annotators", f"{len(vals)} annotations, fewer than --min-annotators {min_annotators}"
        elif ann.kind == "label":
            votes = Counter(str(v) for v in vals)
            info["votes"] = dict(votes.most_common())
            top = votes.most_common()
            if len(top) > 1 and top[0][1] == top[1][1]:
                out.ties.append(iid)
                cause, reason = "tie", "tie: " + ", ".join(f"{k} {c}" for k, c in top if c == top[0][1]) + " votes"
            elif strict_majority and top[0][1] * 2 <= len(vals):
                cause, reason = "no_majority", f"no majority: {top[0][0]} has {top[0][1]} of {len(vals)} votes"
            elif unanimous and len(top) > 1:
                cause, reason = "not_unanimous", "not unanimous: " + ", ".join(f"{k} {c}" for k, c in top)
            else:
                info["label"] = ann.typed.get(top[0][0], top[0][0])
        else:
            nums = [float(v) for v in vals]
            mean = statistics.fmean(nums)
            spread = (statistics.stdev(nums) if len(nums) > 1 else 0.0) if sd == "sample" else statistics.pstdev(nums)
            info.update({"label": mean, "rating_sd": spread})
            if unanimous and len(set(nums)) > 1:
                cause, reason = "not_unanimous", "not unanimous: ratings " + ", ".join(f"{x:g}" for x in nums)
            elif max_sd is not None and not spread < max_sd:
                cause, reason = "sd", f"rating SD {spread:.3f} is not below --max-sd {max_sd:g}"
        if reason is None and against is not None and iid in against:
            other = against[iid]
            info["against"] = other
            if str(other) != str(info["label"]):
                cause, reason = "conflict", f"label {info['label']} conflicts with {other} in {against_name}"
        if reason is None and against is not None and iid not in against:
            out.counts["not_in_against"] += 1
        step = {k: v for k, v in info.items() if k != "label"}
        step["label"] = info.get("label")
        add_step(item, "review", **step)
        if reason is not None:
            out.counts[cause] += 1
            out.dropped.append(drop(item, "review", reason))
            continue
        item[label_field] = info["label"]
        if ann.kind == "rating":
            item["rating_sd"] = info["rating_sd"]
        else:
            item["votes"] = info["votes"]
        out.kept.append(item)
    return out


def read_against(path: Path, field_name: str = "label", fmt: str | None = None) -> dict[str, str]:
    """Another language's labels: id -> label (CSV/TSV/JSONL), for the conflict check."""
    out: dict[str, str] = {}
    for row_at, rec in _rows(path, fmt):
        iid = _text(rec.get("id"))
        if not iid:
            raise DataError(f"{path}: {row_at}: field 'id': empty")
        if _text(rec.get(field_name)) == "":
            raise DataError(f"{path}: {row_at}: field '{field_name}': missing or empty")
        if iid in out:
            raise DataError(f"{path}: {row_at}: field 'id': item {iid!r} listed twice")
        out[iid] = _text(rec.get(field_name))
    return out
