"""Klokánek loader on the real raw data (skipped when shared/data is absent)."""

from __future__ import annotations

import json

import pytest

from glotbench.benchmarks.czech_bench.klokanek import DATASET, counts, items_from_records, load_klokanek, needs_picture
from glotbench.errors import DataError
from glotbench.paths import resolve_data_file


@pytest.fixture(scope="module")
def items():
    path = resolve_data_file(DATASET)
    if not path.is_file():
        pytest.skip(f"Klokánek data not found at {path} (shared/data/czech_klokanek; set GLOTBENCH_DATA)")
    return load_klokanek(path)


def test_counts_match_source_md(items):
    c = counts(items)
    # SOURCE.md: 924 records; gold letters A 134, B 203, C 219, D 220, E 148; categories 0..7.
    assert c["total"] == 924
    assert c["by_answer"] == {"A": 134, "B": 203, "C": 219, "D": 220, "E": 148}
    assert c["by_category"] == {0: 136, 1: 147, 2: 175, 3: 175, 4: 167, 5: 92, 6: 16, 7: 16}
    assert c["dropped_in_review"] == 924 - 893  # post-lilac.jsonl keeps 893
    assert 0 < c["needs_picture"] < 50 and 0 < c["broken_options"] < 50
    assert c["usable"] == sum(it.usable for it in items)


def test_item_shape(items):
    it = next(i for i in items if i.question.startswith("Kolik je čísel, která jsou větší než 10"))
    assert it.options == {"A": "2", "B": "4", "C": "6", "D": "7", "E": "8"}
    assert (it.answer, it.category, it.year) == ("D", 0, 2014)
    assert not it.needs_picture and it.usable
    assert len({i.id for i in items}) == len(items)
    assert all("ı\u0301" not in i.question for i in items)  # PDF artefact repaired


def test_picture_items_flagged(items):
    arrow = next(i for i in items if "ve směru šipky" in i.question)  # SOURCE.md's example
    assert arrow.needs_picture and arrow.dropped_in_review and not arrow.usable
    darts = next(i for i in items if i.question.startswith("Ivo hrál šipky"))
    assert not darts.needs_picture  # darts, not an arrow in a figure
    assert needs_picture("Obrázek znázorňuje půdorys pokoje.")
    assert not needs_picture("Kolik je dvouciferných čísel, kde cifra vpravo má větší hodnotu než cifra vlevo?")


def test_broken_options_flagged(items):
    broken = [i for i in items if i.broken_options]
    assert all(any(not v for v in i.options.values()) or len(set(i.options.values())) < 5 for i in broken)


def test_bad_records_name_the_field(tmp_path):
    with pytest.raises(DataError, match=r"x.json: record 0: missing field 'correct_answer'"):
        items_from_records([{"question": "q", "answers": {}, "category": 0, "year": 2004}], "x.json")
    rec = {"question": "q", "answers": {"A": "1", "B": "2"}, "correct_answer": "A", "category": 0, "year": 2004}
    with pytest.raises(DataError, match="record 0: missing or non-string option 'C'"):
        items_from_records([rec], "x.json")
    f = tmp_path / "d.json"
    f.write_text(json.dumps({"not": "a list"}), encoding="utf-8")
    with pytest.raises(DataError, match="expected a JSON array"):
        load_klokanek(f)
    with pytest.raises(DataError, match="not found"):
        load_klokanek(tmp_path / "missing.json")
