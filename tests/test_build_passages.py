"""Passages for `build qa`: JSONL, a .txt folder, CTKFacts evidence; bad input is one line naming
file, record and field."""

from __future__ import annotations

import json

import pytest

from glotbench.build.passages import ctkfacts_passages, read_passages
from glotbench.errors import DataError
from test_build_qa import PASSAGES, cli


def test_jsonl_and_folder(tmp_path):
    ps = read_passages(PASSAGES)
    assert [p["id"] for p in ps][:2] == ["p1", "p2"] and ps[0]["title"] == "Karlův most"
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "b.txt").write_text("Druhý text.\n", encoding="utf-8")
    (tmp_path / "d" / "a.txt").write_text("První text.", encoding="utf-8")
    assert read_passages(tmp_path / "d") == [{"id": "a", "title": "", "text": "První text."},
                                             {"id": "b", "title": "", "text": "Druhý text."}]


@pytest.mark.parametrize("rec, field", [({"id": "x"}, "'text'"), ({"text": "t"}, "'id'"), ({"id": "x", "text": "t", "title": 3}, "'title'")])
def test_bad_record_names_file_record_field(tmp_path, rec, field):
    p = tmp_path / "p.jsonl"
    p.write_text(json.dumps({"id": "ok", "text": "fine"}) + "\n" + json.dumps(rec) + "\n", encoding="utf-8")
    with pytest.raises(DataError) as e:
        read_passages(p)
    assert str(e.value).startswith(f"{p}: record 2: field {field}")


def test_duplicate_id(tmp_path):
    p = tmp_path / "p.jsonl"
    p.write_text('{"id": "a", "text": "x"}\n{"id": "a", "text": "y"}\n', encoding="utf-8")
    with pytest.raises(DataError, match="duplicate id 'a'"):
        read_passages(p)


def test_cli_bad_input_is_one_line(tmp_path):
    p = tmp_path / "p.jsonl"
    p.write_text('{"id": "a"}\n', encoding="utf-8")
    r = cli("qa", "-p", str(p), "-l", "cs", "-o", "qa.jsonl", "--dry-run", cwd=tmp_path, check=False)
    assert r.returncode != 0 and "Traceback" not in r.stderr
    assert f"{p}: record 1: field 'text' missing or empty" in r.stderr + r.stdout


def test_ctkfacts_evidence(data_root):
    f = next((data_root / "czech_bench" / "ctkfacts").glob("*.jsonl"), None)
    if f is None:
        pytest.skip("CTKFacts export not in the shared data")
    ps = ctkfacts_passages(f, 30)
    assert len(ps) == 30 and len({p["id"] for p in ps}) == 30 and len({p["text"] for p in ps}) == 30
    assert all(len(p["text"]) >= 200 for p in ps)
    assert any(p["title"] for p in ps)  # datelines such as "Ostrava 19. října"


def test_items_with_a_repeated_id_are_one_line(tmp_path):
    p = tmp_path / "items.jsonl"
    p.write_text('{"id": "a", "question": "Q?"}\n{"id": "b", "question": "R?"}\n{"id": "a", "question": "S?"}\n', encoding="utf-8")
    r = cli("dedup", "-i", str(p), "-o", "d.jsonl", cwd=tmp_path, check=False)
    assert r.returncode != 0 and "Traceback" not in r.stderr
    assert f"{p}: record 3: field 'id': 'a' is also record 1" in r.stdout + r.stderr
