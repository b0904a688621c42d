"""glotbench build review export / import on a hand-made dataset: the sheet's columns, Cohen's kappa
against a hand computation, disagreements for the arbiter, verdicts applied (keep, drop, fix by
label or by text), and every kind of bad input as one line naming file, row and field (exit 2)."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from glotbench.build.provenance import read_items, write_items
from glotbench.build.review import export_sheet, import_reviews
from glotbench.errors import DataError

SRC = str(Path(__file__).resolve().parents[1] / "src")


def _items(n=6):
    return [{"id": f"i{k}", "question": f"Věta {k} _ tady.",
             "choices": [{"label": lb, "text": f"{lb.lower()}{k}"} for lb in "ABCD"], "answerKey": "A",
             "answer": f"a{k}", "provenance": [{"step": "cloze", "source": f"s.txt:{k}", "seed": 1}]}
            for k in range(1, n + 1)]


def _sheet(path: Path, rows: list[tuple], header=("id", "verdict", "corrected_answer", "comment")):
    delim = "\t" if path.suffix == ".tsv" else ","
    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, delimiter=delim)
        w.writerow(header)
        w.writerows(rows)
    return path


def test_export_columns_csv_and_tsv(tmp_path):
    export_sheet(_items(2), tmp_path / "r.csv")
    export_sheet(_items(2), tmp_path / "r.txt", "tsv")
    rows = list(csv.DictReader((tmp_path / "r.csv").open(encoding="utf-8")))
    assert list(rows[0]) == ["id", "question", "options", "answer", "provenance", "verdict", "corrected_answer", "comment"]
    assert rows[0]["options"] == "A. a1 | B. b1 | C. c1 | D. d1"
    assert rows[0]["answer"] == "A. a1"
    assert rows[0]["provenance"] == "cloze s.txt:1 seed=1"
    assert rows[0]["verdict"] == rows[0]["corrected_answer"] == rows[0]["comment"] == ""
    assert (tmp_path / "r.txt").read_text(encoding="utf-8").splitlines()[0].count("\t") == 7


def test_kappa_disagreements_and_arbiter(tmp_path):
    items = _items(6)
    a = _sheet(tmp_path / "a.csv", [("i1", "keep", "", ""), ("i2", "keep", "", ""), ("i3", "drop", "", "bad"),
                                   ("i4", "fix", "B", ""), ("i5", "keep", "", "")])
    b = _sheet(tmp_path / "b.tsv", [("i1", "keep", "", ""), ("i2", "drop", "", "two fit"), ("i3", "drop", "", ""),
                                   ("i4", "fix", "B", ""), ("i5", "fix", "lepší", "")])
    # hand computation: A keep 3 drop 1 fix 1; B keep 1 drop 2 fix 2; agree on i1 i3 i4 (3 of 5)
    p_o = 3 / 5
    p_e = (3 * 1 + 1 * 2 + 1 * 2) / 25
    res = import_reviews(items, [a, b])
    assert res.kappa["1-2"] == pytest.approx((p_o - p_e) / (1 - p_e))
    assert res.disagreements == ["i2", "i5"] and res.undecided == 2 and res.not_reviewed == 1
    arb = _sheet(tmp_path / "arb.csv", [("i2", "keep", "", ""), ("i5", "fix", "lepší", "better wording")])
    res = import_reviews(items, [a, b], arb)
    kept = {it["id"]: it for it in res.kept}
    assert sorted(kept) == ["i1", "i2", "i4", "i5", "i6"]
    assert kept["i4"]["answerKey"] == "B" and kept["i4"]["answer"] == "b4"          # fix by label
    assert kept["i5"]["choices"][0]["text"] == "lepší" and kept["i5"]["answer"] == "lepší"  # fix by text
    assert kept["i5"]["provenance"][-1] == {"step": "review", "verdicts": ["keep", "fix"], "final": "fix",
                                           "arbiter": True, "comment": "better wording", "corrected_answer": "lepší"}
    assert "review" not in json.dumps(kept["i6"]["provenance"])  # not reviewed: unchanged
    assert [(d["id"], d["removed_by"], d["reason"]) for d in res.dropped] == [("i3", "review", "bad")]
    assert items[3]["answerKey"] == "A"  # the input items are not modified


@pytest.mark.parametrize("rows,header,message", [
    ([("i1", "keep", "")], ("id", "verdict", "comment"), "row 1: missing column 'corrected_answer' (has: id, verdict, comment)"),
    ([("i1", "keep", "", ""), ("i2", "maybe", "", "")], None, "row 3: field 'verdict': 'maybe' is not one of keep, drop, fix"),
    ([("i9", "keep", "", "")], None, "row 2: field 'id': item 'i9' is not in the dataset"),
    ([("i1", "fix", "", "")], None, "row 2: field 'corrected_answer': empty, but the verdict is fix"),
    ([("i1", "keep", "", ""), ("i1", "drop", "", "")], None, "row 3: field 'id': item 'i1' already on row 2"),
])
def test_bad_sheet_is_one_line(tmp_path, rows, header, message):
    bad = _sheet(tmp_path / "bad.csv", rows, header or ("id", "verdict", "corrected_answer", "comment"))
    good = _sheet(tmp_path / "good.csv", [("i1", "keep", "", "")])
    with pytest.raises(DataError) as err:
        import_reviews(_items(3), [good, bad])
    assert str(err.value) == f"{bad}: {message}"


def test_annotators_must_cover_the_same_items_and_arbiter_every_disagreement(tmp_path):
    a = _sheet(tmp_path / "a.csv", [("i1", "keep", "", ""), ("i2", "keep", "", "")])
    b = _sheet(tmp_path / "b.csv", [("i1", "drop", "", "")])
    with pytest.raises(DataError, match=r"b\.csv: no row for item 'i2' \(annotated in .*a\.csv\)"):
        import_reviews(_items(3), [a, b])
    b = _sheet(tmp_path / "b.csv", [("i1", "drop", "", ""), ("i2", "drop", "", "")])
    arb = _sheet(tmp_path / "arb.csv", [("i1", "keep", "", "")])
    with pytest.raises(DataError, match=r"arb\.csv: no row for disagreement 'i2'"):
        import_reviews(_items(3), [a, b], arb)


def test_cli_import_fresh_process(tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (SRC, os.environ.get("PYTHONPATH", "")) if p)}
    write_items(tmp_path / "d.jsonl", _items(3))

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "glotbench", "build", "review", *args], env=env, cwd=tmp_path,
                              capture_output=True, text=True, timeout=300)

    done = cli("export", "d.jsonl", "-o", "sheet.tsv")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "sheet.tsv").read_text(encoding="utf-8").startswith("id\tquestion\t")
    _sheet(tmp_path / "a.csv", [("i1", "keep", "", ""), ("i2", "drop", "", "x")])
    _sheet(tmp_path / "b.csv", [("i1", "keep", "", ""), ("i2", "keep", "", "")])
    done = cli("import", "d.jsonl", "a.csv", "b.csv", "-o", "out.jsonl")
    # disagreements and no --arbiter: the sheet for the arbiter is written, the dataset is not, and the
    # command refuses (exit 2, one line) instead of exiting 0 with nothing written (issue 41)
    assert done.returncode == 2, done.stderr
    assert "Cohen's kappa, annotators 1-2: 0.000" in done.stdout
    assert done.stderr.strip().splitlines()[-1].startswith("error: 1 items have no final verdict")
    assert "rerun with --set arbiter=FILE" in done.stderr and not (tmp_path / "out.jsonl").exists()
    dis = list(csv.DictReader((tmp_path / "out.disagreements.csv").open(encoding="utf-8")))
    assert [(r["id"], r["annotator_1_verdict"], r["annotator_2_verdict"], r["verdict"]) for r in dis] == [
        ("i2", "drop", "keep", "")]
    _sheet(tmp_path / "arb.csv", [("i2", "drop", "", "arbiter: off topic")])
    done = cli("import", "d.jsonl", "a.csv", "b.csv", "-o", "out.jsonl", "--arbiter", "arb.csv")
    assert done.returncode == 0, done.stderr
    assert [i["id"] for i in read_items(tmp_path / "out.jsonl")] == ["i1", "i3"]
    assert [(d["id"], d["reason"]) for d in read_items(tmp_path / "out.dropped.jsonl")] == [("i2", "arbiter: off topic")]
    _sheet(tmp_path / "b.csv", [("i1", "keep", "", ""), ("i2", "perhaps", "", "")])
    done = cli("import", "d.jsonl", "a.csv", "b.csv", "-o", "out.jsonl")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "error: b.csv: row 3: field 'verdict': 'perhaps' is not one of keep, drop, fix"]


def test_three_annotators_pairwise_kappa(tmp_path):
    from sklearn.metrics import cohen_kappa_score

    v = {"a": ["keep", "keep", "drop", "keep"], "b": ["keep", "drop", "drop", "keep"], "c": ["drop", "drop", "drop", "keep"]}
    sheets = [_sheet(tmp_path / f"{k}.csv", [(f"i{n + 1}", x, "", "") for n, x in enumerate(vs)]) for k, vs in v.items()]
    res = import_reviews(_items(4), sheets)
    assert set(res.kappa) == {"1-2", "1-3", "2-3"}
    assert res.kappa["1-3"] == pytest.approx(cohen_kappa_score(v["a"], v["c"]))
    # a vs b by hand: agree 3/4; a keep 3 drop 1, b keep 2 drop 2 -> p_e = (3*2 + 1*2)/16 = 0.5
    assert res.kappa["1-2"] == pytest.approx((0.75 - 0.5) / 0.5)
    assert res.disagreements == ["i1", "i2"]


def test_formula_cells_are_escaped_and_read_back_and_latin1_sheet_is_one_line(tmp_path):
    """issue 42, finding 8: an exported cell starting with = + - @ is text for a spreadsheet (a leading
    '), read back as written; a sheet saved as Latin-1 is one line naming the file, not a traceback."""
    items = _items(2)
    items[0]["question"] = "=1+1"
    items[0]["id"] = "-i1"
    sheet = tmp_path / "r.csv"
    export_sheet(items, sheet)
    rows = list(csv.DictReader(sheet.open(encoding="utf-8")))
    assert rows[0]["question"] == "'=1+1" and rows[0]["id"] == "'-i1"
    filled = _sheet(tmp_path / "a.csv", [("'-i1", "keep", "", "'=ok"), ("i2", "keep", "", "")])
    res = import_reviews(items, [filled, filled])
    assert res.reviewed == 2
    bad = tmp_path / "latin1.csv"
    bad.write_bytes("id,verdict,corrected_answer,comment\ni2,keep,,árvíztűrő".encode("cp1250"))
    good = _sheet(tmp_path / "b.csv", [("-i1", "keep", "", ""), ("i2", "keep", "", "")])
    env = {**os.environ, "PYTHONPATH": SRC}
    data = tmp_path / "d.jsonl"
    write_items(data, items)
    done = subprocess.run([sys.executable, "-m", "glotbench", "build", "review", "import", str(data), str(good), str(bad),
                           "-o", str(tmp_path / "out.jsonl")], env=env, capture_output=True, text=True, timeout=120)
    lines = [x for x in done.stderr.splitlines() if x.strip()]
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-800:]
    assert len(lines) == 1 and str(bad) in lines[0] and "UTF-8" in lines[0], lines
