"""Klokánek (Czech Mathematical Kangaroo) records -> multiple-choice items.

Source: ``czech_klokanek/dataset.json`` under the data root (hynky1999/Klokan @ a42bf806, see
its SOURCE.md): a JSON array of ``{"question", "answers": {"A".."E"}, "correct_answer",
"category", "year"}``. ``post-lilac.jsonl`` beside it is the author's reviewed subset (893 of
924, flattened keys ``answers.A``...); items absent from it are flagged ``dropped_in_review``.

What the fields mean (from the author's ``export.py``): the records were parsed from the yearly
competition booklets (PDF -> text). ``category`` is the index of the question group within that
year's booklet, in booklet order, which runs from the youngest age group up; so it is an age-
group rank, not a stable name (years where a group failed to parse shift the numbers, and 2013
and 2015 have 8 groups). The exporter already dropped questions containing some picture words
("obráz", "kruh", "čtver", ...), case-sensitively.

Items that still need a picture are flagged by :data:`PICTURE_CUES`, phrases that point at a
figure the text does not contain ("Obrázek znázorňuje", "ve směru šipky", "tabulky vpravo",
"vidíte na větší stavbě", ...). It is a heuristic: it errs towards flagging; some picture items
use no such phrase ("Kolik nohou mají všechna zvířátka dohromady?"). ``broken_options`` flags
PDF-extraction damage in the options (an empty option, or two identical options).

Text repair: some booklets were extracted with "ı" + U+0301 for "í"; that is replaced and the
text NFC-normalised. Nothing else is changed.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Iterable

from glotbench.data.loaders import iter_jsonl
from glotbench.errors import DataError
from glotbench.paths import resolve_data_file

DATASET = "czech_klokanek/dataset.json"
REVIEWED = "czech_klokanek/post-lilac.jsonl"
LETTERS = ("A", "B", "C", "D", "E")

PICTURE_CUES = re.compile(
    r"obr[aá]z"  # obrázek, obrázku, obrazec
    r"|ve směru šip"  # "ve směru šipky" (arrow in a figure; not "hrál šipky", darts)
    r"|podívej se vpravo|(?:vidí[šte]*|tabulk\w*|ostrova|mapě|čtverc\w*) vpravo|vpravo vidí"
    r"|\bvidí(?:š|te|me) na\b"
    r"|znázorn"  # znázorňuje, grafické znázornění
    r"|\bv plánku\b|\bna (?:mapě|plánku|diagramu|grafu|schématu)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class KlokanekItem:
    id: str  # "<year>-c<category>-<nn>", nn = position within that year and category
    question: str
    options: dict[str, str]  # A..E
    answer: str  # gold letter
    category: int  # age-group rank within the year's booklet (0 = youngest group parsed)
    year: int
    needs_picture: bool
    broken_options: bool
    dropped_in_review: bool | None  # None when post-lilac.jsonl is not available

    @property
    def usable(self) -> bool:
        """Answerable from the text: no picture cue, options intact, kept by the review."""
        return not (self.needs_picture or self.broken_options or self.dropped_in_review)

    def to_dict(self) -> dict:
        return asdict(self)


def repair_text(s: str) -> str:
    return unicodedata.normalize("NFC", s.replace("ı\u0301", "í")).strip()


def needs_picture(question: str) -> bool:
    return PICTURE_CUES.search(repair_text(question)) is not None


def _field(rec: Any, key: str, file: str, i: int) -> Any:
    if not isinstance(rec, dict):
        raise DataError(f"{file}: record {i}: expected an object, got {type(rec).__name__}")
    if key not in rec:
        raise DataError(f"{file}: record {i}: missing field {key!r}")
    return rec[key]


def _options(rec: dict, file: str, i: int) -> dict[str, str]:
    if "answers" in rec:
        ans = rec["answers"]
        if not isinstance(ans, dict):
            raise DataError(f"{file}: record {i}: field 'answers' must be an object with keys A-E")
        got = {k: ans.get(k) for k in LETTERS}
    else:  # post-lilac.jsonl flattens them
        got = {k: rec.get(f"answers.{k}") for k in LETTERS}
    for k, v in got.items():
        if not isinstance(v, str):
            raise DataError(f"{file}: record {i}: missing or non-string option {k!r} (field 'answers')")
    return {k: repair_text(v) for k, v in got.items()}


def _key(question: str, year: Any, category: Any) -> tuple[str, Any, Any]:
    return repair_text(question), year, category


def items_from_records(
    records: Iterable[dict], file: str = DATASET, reviewed: Iterable[dict] | None = None
) -> list[KlokanekItem]:
    """Turn raw records (either file's shape) into items; ``reviewed`` = post-lilac records."""
    kept = None
    if reviewed is not None:
        kept = {_key(str(r.get("question", "")), r.get("year"), r.get("category")) for r in reviewed}
    items: list[KlokanekItem] = []
    seq: Counter = Counter()
    for i, rec in enumerate(records):
        q = _field(rec, "question", file, i)
        answer = _field(rec, "correct_answer", file, i)
        cat = _field(rec, "category", file, i)
        year = _field(rec, "year", file, i)
        if not isinstance(q, str):
            raise DataError(f"{file}: record {i}: field 'question' must be a string")
        if answer not in LETTERS:
            raise DataError(f"{file}: record {i}: field 'correct_answer' must be one of A-E, got {answer!r}")
        if not isinstance(cat, int) or not isinstance(year, int):
            raise DataError(f"{file}: record {i}: fields 'category' and 'year' must be integers")
        opts = _options(rec, file, i)
        seq[(year, cat)] += 1
        vals = list(opts.values())
        items.append(
            KlokanekItem(
                id=f"{year}-c{cat}-{seq[(year, cat)]:02d}",
                question=repair_text(q),
                options=opts,
                answer=answer,
                category=cat,
                year=year,
                needs_picture=needs_picture(q),
                broken_options=any(not v for v in vals) or len(set(vals)) < len(vals),
                dropped_in_review=None if kept is None else _key(q, year, cat) not in kept,
            )
        )
    return items


def _read_json(path: Path) -> list:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(f"{path}: Klokánek data not found (set GLOTBENCH_DATA or see shared/data/README.md)") from None
    except json.JSONDecodeError as err:
        raise DataError(f"{path}: not valid JSON (line {err.lineno})") from None
    if not isinstance(data, list):
        raise DataError(f"{path}: expected a JSON array of records")
    return data


def load_klokanek(path: str | Path | None = None, reviewed_path: str | Path | None = None) -> list[KlokanekItem]:
    """Load ``dataset.json`` (default: from the data root) and flag every item."""
    p = Path(path) if path else resolve_data_file(DATASET)
    rp = Path(reviewed_path) if reviewed_path else (p.parent / Path(REVIEWED).name)
    reviewed = [rec for _, rec in iter_jsonl(rp, encoding="utf-8")] if rp.is_file() else None
    return items_from_records(_read_json(p), str(p), reviewed)


def counts(items: Iterable[KlokanekItem]) -> dict:
    """Totals, flags, and per-category / per-answer-letter counts."""
    items = list(items)
    usable = [it for it in items if it.usable]
    return {
        "total": len(items),
        "needs_picture": sum(it.needs_picture for it in items),
        "broken_options": sum(it.broken_options for it in items),
        "dropped_in_review": sum(bool(it.dropped_in_review) for it in items),
        "usable": len(usable),
        "by_category": dict(sorted(Counter(it.category for it in items).items())),
        "by_answer": dict(sorted(Counter(it.answer for it in items).items())),
    }


# ----------------------------------------------------------------------------- the czech_bench.klokanek task


def item_record(item: KlokanekItem) -> dict:
    """The record a task sees: id, question, the five options in A-E order, gold letter, category, year."""
    return {
        "id": item.id,
        "question": item.question,
        "choices": [item.options[k] for k in LETTERS],
        "labels": list(LETTERS),
        "answer": item.answer,
        "category": item.category,
        "year": item.year,
    }


def usable_records(path: str | Path | None = None) -> tuple[list[dict], dict]:
    """Records of the usable items (see :attr:`KlokanekItem.usable`) and :func:`counts` of all."""
    items = load_klokanek(path)
    return [item_record(it) for it in items if it.usable], counts(items)


from glotbench.tasks.task import Task  # the loader above does not need it


class KlokanekTask(Task):
    """``czech_bench.klokanek`` (formerly ``cs.klokanek``): the YAML holds the prompt; this only reads the items through
    :func:`load_klokanek` so that picture items, broken options and items the author's review
    dropped are left out (47 of the 924 records on the current data; ``excluded`` has the counts).
    The item ids (``<year>-c<category>-<nn>``) are the loader's, stable across runs."""

    excluded: dict | None = None

    def raw_records(self, split: str) -> list[dict]:
        records, c = usable_records(self.split_path(split))
        self.excluded = {k: c[k] for k in ("total", "needs_picture", "broken_options", "dropped_in_review", "usable")}
        return records
