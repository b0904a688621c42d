"""The tasks the Czech-Bench thesis planned next (§5.5) and never built: record functions for the
Hub rows whose shape a YAML field mapping cannot express, and the WikiLingua task, whose items
are an article's sections and whose English side is filtered to the Czech items (§5.5.1).

* ČSFD movie reviews (``fewshot-goes-multilingual/cs_csfd-movie-reviews``): ``rating_int`` 0..5
  becomes a sentiment label with two consecutive ratings per class, the thresholds the thesis
  names from Habernal et al. (0-1 negative -1, 2-3 neutral 0, 4-5 positive 1).
* CsFEVER NLI (``ctu-aic/csfever_nli``): ``evidence``/``claim``/``label``, the label the
  dataset's ClassLabel (REFUTES, NOT ENOUGH INFO, SUPPORTS = 0, 1, 2) as an int or its name.
* WikiLingua (``esdurmus/wiki_lingua``, the Hub's ``wiki_lingua``): one row per WikiHow article
  (``url``, ``article`` = the article's sections as lists ``section_name``, ``document``,
  ``summary``; a non-English row also ``english_url``/``english_section_name`` per section, which
  name the English section it was aligned to). One item per section (the dataset's
  document-summary pair); the item id is the aligned English section (``<english_url>#<name>``),
  on both sides, so a Czech item and its English counterpart share an id. The English task keeps
  the English sections some Czech section is aligned to, in the Czech order.
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path

from glotbench.errors import DataError
from glotbench.tasks.task import Task

NLI_LABELS = ("REFUTES", "NOT ENOUGH INFO", "SUPPORTS")


def _cls(rid, text_vars: dict, gold: int, labels: list[int]) -> dict:
    return {"id": None if rid is None else str(rid), **text_vars, "target": str(int(gold)),
            "choices": [str(x) for x in labels], "labels": [str(x) for x in labels]}


def csfd_rating_label(rating: int) -> int:
    """0-1 stars: -1, 2-3: 0, 4-5: 1 (two consecutive ratings per class, thesis §5.5.2)."""
    if not isinstance(rating, int) or isinstance(rating, bool) or not 0 <= rating <= 5:
        raise DataError(f"field 'rating_int': expected an integer 0..5, got {rating!r}")
    return -1 if rating <= 1 else (0 if rating <= 3 else 1)


def csfd_sentiment(rec: dict) -> dict:
    try:
        gold = csfd_rating_label(rec.get("rating_int"))
    except DataError as err:
        raise DataError(f"ČSFD record {rec.get('review_id', rec.get('_pos'))!r}: {err}") from None
    return _cls(rec.get("review_id", rec.get("_pos")), {"text": rec["comment"], "rating": rec["rating_int"]},
                gold, [-1, 0, 1])


def csfever_nli(rec: dict) -> dict:
    lab = rec.get("label")
    if isinstance(lab, str) and lab in NLI_LABELS:
        lab = NLI_LABELS.index(lab)
    if not isinstance(lab, int) or isinstance(lab, bool) or lab not in (0, 1, 2):
        raise DataError(f"CsFEVER record {rec.get('id')!r}: field 'label' must be 0, 1, 2 or one of {', '.join(NLI_LABELS)}; got {lab!r}")
    return _cls(rec.get("id", rec.get("_pos")), {"context": rec["evidence"], "claim": rec["claim"]}, lab, [0, 1, 2])


# ----------------------------------------------------------------------------- WikiLingua


def _sections(article, where: str) -> list[dict]:
    """A row's ``article`` as a list of per-section dicts (the Hub's parquet stores the sequence
    of dicts as a dict of lists; an older export as a list of dicts)."""
    if isinstance(article, dict):
        keys = list(article)
        n = {len(article[k] or []) for k in keys}
        if len(n) > 1:
            raise DataError(f"{where}: field 'article': its lists differ in length ({', '.join(f'{k} {len(article[k] or [])}' for k in keys)})")
        return [{k: article[k][i] for k in keys} for i in range(n.pop() if n else 0)]
    if isinstance(article, list):
        return list(article)
    raise DataError(f"{where}: field 'article': expected the sections (a dict of lists), got {type(article).__name__}")


def _parquet_rows(folder: Path, what: str, urls: set[str] | None = None) -> list[dict]:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise DataError(f"{folder}: reading WikiLingua's parquet files needs pyarrow (it comes with `datasets`: "
                        f"`pip install 'pyarrow>=15'`)") from None

    if urls is not None and not urls:
        return []
    files = sorted(folder.glob("*.parquet"))
    if not files:
        raise DataError(f"{folder}: no {what} parquet file (expected {what}/train-*.parquet from esdurmus/wiki_lingua)")
    rows: list[dict] = []
    for f in files:
        names = pq.read_schema(f).names
        for col in ("url", "article"):
            if col not in names:
                raise DataError(f"{f}: no column {col!r} (columns: {', '.join(names)})")
        # the English side: only the articles some Czech section is aligned to (the file has ~58,000)
        table = pq.read_table(f, filters=None if urls is None else [("url", "in", sorted(urls))])
        rows.extend(table.to_pylist())
    return rows


def wiki_lingua_items(folder: Path, side: str) -> tuple[list[dict], list[str]]:
    """The items of the WikiLingua task for ``side`` (``cs`` or ``en``) from a snapshot folder
    holding ``czech/`` (and for ``en`` also ``english/``), and notes for the run (duplicates,
    Czech items with no English section in the snapshot)."""
    notes: list[str] = []
    czech: list[dict] = []
    seen: set[str] = set()
    dup = 0
    for row in _parquet_rows(folder / "czech", "czech"):
        where = f"{folder / 'czech'}: article {row['url']!r}"
        for k, sec in enumerate(_sections(row["article"], where)):
            for key in ("document", "summary", "english_url", "english_section_name"):
                if not isinstance(sec.get(key), str):
                    raise DataError(f"{where}: section {k}: field {key!r} missing or not text")
            iid = f"{sec['english_url']}#{sec['english_section_name']}"
            if iid in seen:
                dup += 1
                continue
            seen.add(iid)
            czech.append({"id": iid, "url": row["url"], "section_name": sec.get("section_name", ""),
                          "document": sec["document"], "summary": sec["summary"],
                          "english_url": sec["english_url"], "english_section_name": sec["english_section_name"]})
    if dup:
        notes.append(f"WikiLingua: {dup} Czech section(s) aligned to an English section already used, left out")
    if side == "cs":
        return czech, notes
    if side != "en":
        raise DataError(f"WikiLingua: options.side must be cs or en, got {side!r}")
    english: dict[str, dict] = {}
    for row in _parquet_rows(folder / "english", "english", {c["english_url"] for c in czech}):
        where = f"{folder / 'english'}: article {row['url']!r}"
        for sec in _sections(row["article"], where):
            english[f"{row['url']}#{sec.get('section_name')}"] = sec
    out = []
    for c in czech:
        sec = english.get(c["id"])
        if sec is None:
            continue
        out.append({"id": c["id"], "url": c["english_url"], "section_name": c["english_section_name"],
                    "document": sec["document"], "summary": sec["summary"]})
    if len(out) < len(czech):
        notes.append(f"WikiLingua en: {len(czech) - len(out)} of {len(czech)} Czech item(s) have no aligned English section "
                     f"in the snapshot; the English task has {len(out)}")
    return out, notes


class WikiLinguaTask(Task):
    """Generic prompts and scoring; the rows are the sections of :func:`wiki_lingua_items`."""

    @cached_property
    def _items(self) -> list[dict]:
        folder = self.split_path(self.spec.dataset.eval_split)
        items, notes = wiki_lingua_items(folder, str(self.spec.options.get("side", "cs")))
        self.load_warnings.extend(notes)
        return items

    def raw_records(self, split: str) -> list[dict]:
        if split != self.spec.dataset.eval_split:
            raise DataError(f"task {self.name}: WikiLingua has one split here ({self.spec.dataset.eval_split}), not {split!r}")
        return list(self._items)

    def data_fingerprint(self, split: str | None = None) -> str:
        from glotbench.data.hub_folder import folder_sha256

        return folder_sha256(self.split_path(split or self.spec.dataset.eval_split))[:16]
