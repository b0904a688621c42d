"""Human review of a built dataset: a CSV/TSV sheet per annotator, Cohen's kappa between them,
the disagreements for an arbiter, and the final verdicts applied.

Sheet columns: id, question, options, answer, provenance (compact), then the annotator's
``verdict`` (keep / drop / fix), ``corrected_answer`` (for fix: an option label such as "B", or
the corrected answer text) and ``comment``. Rows are numbered as a spreadsheet shows them (the
header is row 1). Items of the dataset that no sheet lists are kept as they are ("not reviewed"):
review only a residue, e.g. what `build filter --sequential` left.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path

from glotbench.build.provenance import add_step, drop
from glotbench.errors import DataError
from glotbench.output.csv_safe import cell, uncell

VERDICTS = ("keep", "drop", "fix")
ITEM_COLUMNS = ["id", "question", "options", "answer", "provenance"]
VERDICT_COLUMNS = ["verdict", "corrected_answer", "comment"]
REQUIRED = ["id", "verdict", "corrected_answer"]


def sheet_format(path: Path, fmt: str | None = None) -> str:
    if fmt:
        if fmt not in ("csv", "tsv"):
            raise DataError(f"--format {fmt!r}: expected csv or tsv")
        return fmt
    return "tsv" if Path(path).suffix.lower() in (".tsv", ".tab", ".txt") else "csv"


def _compact(prov: list[dict]) -> str:
    parts = []
    for p in prov or []:
        bits = [p.get("step", "?")]
        for k, v in p.items():
            if k in ("step", "sentence", "check"):
                continue
            v = ",".join(map(str, v)) if isinstance(v, list) else v
            bits.append(f"{v}" if k == "source" else f"{k}={v}")
        parts.append(" ".join(str(b) for b in bits))
    return " | ".join(parts)


def item_columns(item: dict) -> dict:
    choices = item.get("choices") or []
    if choices and isinstance(choices[0], dict):
        options = " | ".join(f"{c.get('label')}. {c.get('text')}" for c in choices)
        key = item.get("answerKey")
        text = next((c.get("text") for c in choices if c.get("label") == key), "")
        answer = f"{key}. {text}"
    else:
        options, answer = "", str(item.get("answer", ""))
    return {"id": item.get("id", ""), "question": item.get("question", ""), "options": options, "answer": answer,
            "provenance": _compact(item.get("provenance"))}


def write_sheet(path: Path, rows: list[dict], columns: list[str], fmt: str | None = None) -> int:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    delim = "\t" if sheet_format(path, fmt) == "tsv" else ","
    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=columns, delimiter=delim, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({c: cell(r.get(c, "")) for c in columns})  # no formulas (CSV injection)
    return len(rows)


def export_sheet(items: list[dict], path: Path, fmt: str | None = None) -> int:
    for n, it in enumerate(items, 1):
        if not it.get("id"):
            raise DataError(f"item {n}: field 'id': missing (review needs item ids)")
    return write_sheet(path, [item_columns(it) for it in items], ITEM_COLUMNS + VERDICT_COLUMNS, fmt)


@dataclass
class Verdict:
    verdict: str
    corrected: str
    comment: str
    row: int


def read_verdicts(path: Path, ids: set[str], fmt: str | None = None) -> dict[str, Verdict]:
    """One annotator's (or the arbiter's) sheet; any bad cell is one DataError naming file, row, field."""
    path = Path(path)
    delim = "\t" if sheet_format(path, fmt) == "tsv" else ","
    try:
        fh = path.open(encoding="utf-8-sig", newline="")
    except FileNotFoundError:
        raise DataError(f"{path}: no such file") from None
    out: dict[str, Verdict] = {}
    try:
        with fh:
            return _read_verdict_rows(path, fh, delim, ids, out)
    except UnicodeDecodeError as err:
        raise DataError(f"{path}: not UTF-8 text (byte {err.start}): save the sheet as UTF-8 CSV/TSV and import it again") from None


def _read_verdict_rows(path: Path, fh, delim: str, ids: set[str], out: dict) -> dict[str, Verdict]:
    reader = csv.DictReader(fh, delimiter=delim)
    header = reader.fieldnames or []
    for col in REQUIRED:
        if col not in header:
            raise DataError(f"{path}: row 1: missing column '{col}' (has: {', '.join(header) or 'nothing'})")
    for n, row in enumerate(reader, 2):
        iid = uncell((row.get("id") or "").strip())
        if iid not in ids:
            raise DataError(f"{path}: row {n}: field 'id': item {iid!r} is not in the dataset")
        if iid in out:
            raise DataError(f"{path}: row {n}: field 'id': item {iid!r} already on row {out[iid].row}")
        v = (row.get("verdict") or "").strip().lower()
        if v not in VERDICTS:
            raise DataError(f"{path}: row {n}: field 'verdict': {row.get('verdict')!r} is not one of "
                            f"{', '.join(VERDICTS)}")
        corrected = uncell((row.get("corrected_answer") or "").strip())
        if v == "fix" and not corrected:
            raise DataError(f"{path}: row {n}: field 'corrected_answer': empty, but the verdict is fix")
        out[iid] = Verdict(v, corrected, uncell((row.get("comment") or "").strip()), n)
    return out


def kappas(annotators: list[dict[str, Verdict]], ids: list[str]) -> dict[str, float]:
    """Cohen's kappa (scikit-learn) of the verdicts for each pair of annotators."""
    from sklearn.metrics import cohen_kappa_score

    out = {}
    for i in range(len(annotators)):
        for j in range(i + 1, len(annotators)):
            a = [annotators[i][x].verdict for x in ids]
            b = [annotators[j][x].verdict for x in ids]
            if len(set(a) | set(b)) == 1:  # one verdict throughout: kappa is undefined (0/0)
                out[f"{i + 1}-{j + 1}"] = float("nan")
            else:
                out[f"{i + 1}-{j + 1}"] = float(cohen_kappa_score(a, b, labels=list(VERDICTS)))
    return out


def _agreed(vs: list[Verdict]) -> Verdict | None:
    first = vs[0]
    if all(v.verdict == first.verdict for v in vs) and \
            (first.verdict != "fix" or all(v.corrected == first.corrected for v in vs)):
        return first
    return None


def apply_fix(item: dict, corrected: str, where: str) -> dict:
    item = dict(item)
    choices = item.get("choices")
    if choices and isinstance(choices[0], dict):
        labels = [c.get("label") for c in choices]
        if corrected in labels:
            item["answerKey"] = corrected
            item["answer"] = choices[labels.index(corrected)].get("text")
        else:
            if any(c.get("text") == corrected and c.get("label") != item.get("answerKey") for c in choices):
                raise DataError(f"{where}: field 'corrected_answer': {corrected!r} is another option's text; "
                                f"give its label instead")
            item["choices"] = [{**c, "text": corrected} if c.get("label") == item.get("answerKey") else c
                               for c in choices]
            item["answer"] = corrected
    else:
        item["answer"] = corrected
    return item


@dataclass
class ReviewOutcome:
    kappa: dict[str, float]
    reviewed: int
    agreed: int
    disagreements: list[str]
    kept: list[dict] = field(default_factory=list)
    dropped: list[dict] = field(default_factory=list)
    fixed: int = 0
    not_reviewed: int = 0
    undecided: int = 0


def import_reviews(items: list[dict], sheets: list[Path], arbiter: Path | None = None,
                   fmt: str | None = None) -> ReviewOutcome:
    if len(sheets) < 2:
        raise DataError("review import: give at least two annotators' files (kappa compares two)")
    ids = [str(it.get("id")) for it in items]
    idset = set(ids)
    anns = [read_verdicts(p, idset, fmt) for p in sheets]
    covered = set(anns[0])
    for p, a in zip(sheets[1:], anns[1:]):
        missing = sorted(covered - set(a)) or sorted(set(a) - covered)
        if missing:
            has, lacks = (sheets[0], p) if missing[0] in covered else (p, sheets[0])
            raise DataError(f"{lacks}: no row for item {missing[0]!r} (annotated in {has}); "
                            f"every annotator must review the same items")
    reviewed = [x for x in ids if x in covered]
    finals: dict[str, Verdict] = {}
    disagreements = []
    for x in reviewed:
        v = _agreed([a[x] for a in anns])
        if v is None:
            disagreements.append(x)
        else:
            finals[x] = v
    arb = read_verdicts(arbiter, idset, fmt) if arbiter else {}
    if arbiter:
        for x in disagreements:
            if x not in arb:
                raise DataError(f"{arbiter}: no row for disagreement {x!r} (field 'verdict')")
        finals.update(arb)
    out = ReviewOutcome(kappa=kappas(anns, reviewed), reviewed=len(reviewed),
                        agreed=len(reviewed) - len(disagreements), disagreements=disagreements)
    for it in items:
        x = str(it.get("id"))
        if x not in covered and x not in arb:
            out.not_reviewed += 1
            out.kept.append(it)
            continue
        if x not in finals:
            out.undecided += 1
            continue
        f = finals[x]
        info = {"verdicts": [a[x].verdict if x in a else None for a in anns], "final": f.verdict,
                "arbiter": x in arb or None, "comment": f.comment or None}
        if f.verdict == "drop":
            comments = "; ".join(a[x].comment for a in anns if x in a and a[x].comment)
            out.dropped.append(drop(add_step(dict(it, provenance=list(it.get("provenance") or [])), "review", **info),
                                    "review", f.comment or comments or "verdict drop"))
            continue
        new = apply_fix(it, f.corrected, f"{arbiter if x in arb else sheets[0]}: row {f.row}") \
            if f.verdict == "fix" else dict(it)
        if f.verdict == "fix":
            out.fixed += 1
            info["corrected_answer"] = f.corrected
        new["provenance"] = list(it.get("provenance") or [])
        out.kept.append(add_step(new, "review", **info))
    return out


def disagreement_rows(items: list[dict], sheets: list[Path], outcome: ReviewOutcome, fmt: str | None = None):
    """Rows for the arbiter: the item, each annotator's verdict, empty final verdict columns."""
    ids = {str(it.get("id")): it for it in items}
    anns = [read_verdicts(p, set(ids), fmt) for p in sheets]
    cols = list(ITEM_COLUMNS)
    for k in range(len(sheets)):
        cols += [f"annotator_{k + 1}_verdict", f"annotator_{k + 1}_corrected", f"annotator_{k + 1}_comment"]
    rows = []
    for x in outcome.disagreements:
        row = item_columns(ids[x])
        for k, a in enumerate(anns):
            row.update({f"annotator_{k + 1}_verdict": a[x].verdict, f"annotator_{k + 1}_corrected": a[x].corrected,
                        f"annotator_{k + 1}_comment": a[x].comment})
        rows.append(row)
    return rows, cols + VERDICT_COLUMNS
