"""`glotbench build review import --kind label|rating`: annotators' labels and ratings aggregated
(HuLU §2-3: majority vote, unanimous test items, Fleiss' kappa; HuCB's Likert ratings with
Krippendorff's alpha and the SD < 1 filter; the conflict check against another language's labels).

Every statistic against its value oracle (tests/value_oracles.py: statsmodels' fleiss_kappa, the
krippendorff package, plain loops for majority / unanimous / SD), the CLI in a fresh process."""

from __future__ import annotations

import csv
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from glotbench.build.agreement import fleiss_kappa, krippendorff_alpha
from glotbench.build.annotations import aggregate, agreement, read_annotations
from glotbench.build.provenance import read_items, write_items
from glotbench.errors import DataError
from value_oracles import (krippendorff_package_alpha, plain_majority, plain_sd, same, statsmodels_fleiss_kappa)

SRC = str(Path(__file__).resolve().parents[1] / "src")
SETTINGS = settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])


# ---------------------------------------------------------------- the statistics against their oracles

@st.composite
def full_ratings(draw):
    n_raters = draw(st.integers(2, 5))
    labels = draw(st.sampled_from([["a", "b"], ["a", "b", "c"], ["x"], ["1", "2", "3", "4"]]))
    return draw(st.lists(st.lists(st.sampled_from(labels), min_size=n_raters, max_size=n_raters), min_size=1, max_size=30))


@SETTINGS
@given(full_ratings())
def test_fleiss_kappa_equals_statsmodels(ratings):
    assert same(fleiss_kappa(ratings), statsmodels_fleiss_kappa(ratings), rel=1e-9, abs_=1e-12)


@st.composite
def reliability(draw):
    """annotators x items, None where an annotator did not rate the item; ratings on a 7-point scale."""
    n_ann, n_items = draw(st.integers(2, 5)), draw(st.integers(1, 20))
    scale = draw(st.sampled_from([[-3, -2, -1, 0, 1, 2, 3], [0, 1], [1, 5, 6]]))
    cell = st.one_of(st.none(), st.sampled_from(scale))
    return draw(st.lists(st.lists(cell, min_size=n_items, max_size=n_items), min_size=n_ann, max_size=n_ann))


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_krippendorff_alpha_equals_the_package(level):
    @SETTINGS
    @given(reliability())
    def check(matrix):
        units = [[row[j] for row in matrix if row[j] is not None] for j in range(len(matrix[0]))]
        want = krippendorff_package_alpha(matrix, level)
        got = krippendorff_alpha(units, level)
        if sum(len(u) >= 2 for u in units) == 0:
            assert got != got  # nothing pairable: undefined, NaN
        else:
            assert same(got, want, rel=1e-9, abs_=1e-12), (got, want, matrix)

    check()


def test_published_style_example_values():
    """Krippendorff's own worked example (reliability data of 4 coders, 12 units; 2011 paper): nominal
    0.743, interval 0.849 (three decimals as published)."""
    nan = None
    data = [[1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
            [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
            [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
            [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan]]
    units = [[r[j] for r in data if r[j] is not None] for j in range(12)]
    assert round(krippendorff_alpha(units, "nominal"), 3) == 0.743
    assert round(krippendorff_alpha(units, "interval"), 3) == 0.849


# ---------------------------------------------------------------- aggregation against plain loops

def _write(path: Path, rows: list[tuple], header=("id", "label")):
    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rows)
    return path


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("strict", [False, True])
def test_majority_and_unanimous_equal_a_plain_loop(tmp_path, seed, strict):
    rng = random.Random(seed)
    n_ann, ids = rng.randint(2, 5), [f"q{k}" for k in range(40)]
    table = {a: {i: rng.choice(["ent", "not", "neu", ""]) for i in ids} for a in range(n_ann)}
    sheets = [_write(tmp_path / f"ann{a}.csv", [(i, table[a][i]) for i in ids]) for a in range(n_ann)]
    ann = read_annotations(sheets, "label")
    for unanimous in (False, True):
        res = aggregate(ann, strict_majority=strict, unanimous=unanimous)
        want = {}
        for i in ids:
            labels = [table[a][i] for a in range(n_ann) if table[a][i]]
            if not labels:
                continue
            top = plain_majority(labels, strict)
            if top is not None and (not unanimous or len(set(labels)) == 1):
                want[i] = top
        assert {it["id"]: it["label"] for it in res.kept} == want
        assert len(res.kept) + len(res.dropped) == len(ids)  # nothing silently lost
    assert agreement(ann)["krippendorff_alpha"].keys() == {"nominal"}


@pytest.mark.parametrize("sd", ["sample", "population"])
def test_likert_sd_filter_and_mean_equal_a_plain_loop(tmp_path, sd):
    rng = random.Random(3)
    ids = [f"cb{k}" for k in range(60)]
    table = {a: {i: rng.choice([-3, -2, -1, 0, 1, 2, 3, 2, 2, None]) for i in ids} for a in range(5)}
    rows = [(i, f"a{a}", "" if table[a][i] is None else table[a][i]) for a in range(5) for i in ids]
    sheet = _write(tmp_path / "long.csv", rows, header=("id", "annotator", "rating"))  # one sheet, long format
    ann = read_annotations([sheet], "rating", scale="-3..3")
    assert len(ann.annotators) == 5
    res = aggregate(ann, max_sd=1.0, sd=sd)
    want = {}
    for i in ids:
        xs = [float(table[a][i]) for a in range(5) if table[a][i] is not None]
        if xs and plain_sd(xs, sd == "sample") < 1.0:
            want[i] = (sum(xs) / len(xs), plain_sd(xs, sd == "sample"))
    got = {it["id"]: (it["label"], it["rating_sd"]) for it in res.kept}
    assert got.keys() == want.keys() and 0 < len(got) < len(ids)
    for i in got:
        assert got[i][0] == pytest.approx(want[i][0], rel=1e-12) and got[i][1] == pytest.approx(want[i][1], rel=1e-12)
    stats = agreement(ann, sd)
    sds = [plain_sd(xs, sd == "sample") for xs in ([float(table[a][i]) for a in range(5) if table[a][i] is not None]
                                                    for i in ids) if len(xs) >= 2]
    assert stats["mean_sd"]["value"] == pytest.approx(sum(sds) / len(sds), rel=1e-12) and stats["mean_sd"]["items"] == len(sds)
    matrix = [[table[a][i] for i in ids] for a in range(5)]
    for level in ("nominal", "ordinal", "interval"):
        assert same(stats["krippendorff_alpha"][level]["value"], krippendorff_package_alpha(matrix, level), rel=1e-9)


def test_conflict_check_against_another_languages_labels(tmp_path):
    from glotbench.build.annotations import read_against

    sheet = _write(tmp_path / "hu.csv", [("r1", "entailment"), ("r2", "not_entailment"), ("r3", "entailment")])
    en = tmp_path / "en.jsonl"
    write_items(en, [{"id": "r1", "label": "entailment"}, {"id": "r2", "label": "entailment"}])
    res = aggregate(read_annotations([sheet], "label"), against=read_against(en), against_name=str(en))
    assert [i["id"] for i in res.kept] == ["r1", "r3"]
    assert res.dropped[0]["id"] == "r2" and "conflicts with entailment" in res.dropped[0]["reason"]
    assert res.counts["conflict"] == 1 and res.counts["not_in_against"] == 1


@pytest.mark.parametrize("rows, header, kind, message", [
    ([("i1", "yes"), ("i1", "no")], ("id", "label"), "label", "row 3: field 'id': item 'i1' already annotated"),
    ([("i1", "yes")], ("id", "verdict"), "label", "row 2: missing field 'label'"),
    ([("", "yes")], ("id", "label"), "label", "row 2: field 'id': empty"),
    ([("i1", "seven")], ("id", "rating"), "rating", "row 2: field 'rating': 'seven' is not a number"),
    ([("i1", "4")], ("id", "rating"), "rating", "row 2: field 'rating': '4' is outside the scale -3..3"),
])
def test_bad_sheet_is_one_line(tmp_path, rows, header, kind, message):
    sheet = _write(tmp_path / "s.csv", rows, header)
    with pytest.raises(DataError) as err:
        read_annotations([sheet], kind, scale="-3..3" if kind == "rating" else None)
    assert str(err.value).startswith(f"{sheet}: ") and message in str(err.value) and "\n" not in str(err.value)


# ---------------------------------------------------------------- the CLI in a fresh process

def _cli(tmp_path, *args):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (SRC, os.environ.get("PYTHONPATH", "")) if p)}
    return subprocess.run([sys.executable, "-m", "glotbench", "build", "review", "import", *args], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)


def test_three_annotator_sheets_aggregate_by_majority_with_fleiss_kappa_fresh_process(tmp_path):
    rng = random.Random(55)
    ids = [f"rte{k}" for k in range(30)]
    write_items(tmp_path / "d.jsonl", [{"id": i, "premise": f"p{i}", "hypothesis": f"h{i}", "label": "?"} for i in ids])
    labels = {a: {i: rng.choice(["entailment", "entailment", "not_entailment"]) for i in ids} for a in "ABC"}
    for a in "ABC":
        _write(tmp_path / f"{a}.csv", [(i, labels[a][i]) for i in ids])
    # a JSONL sheet works as well as a CSV one
    write_items(tmp_path / "C.jsonl", [{"id": i, "label": labels["C"][i]} for i in ids])
    done = _cli(tmp_path, "A.csv", "B.csv", "C.jsonl", "--kind", "label", "--dataset", "d.jsonl", "-o", "agg.jsonl")
    assert done.returncode == 0, done.stderr
    want_kappa = statsmodels_fleiss_kappa([[labels[a][i] for a in "ABC"] for i in ids])
    summary = json.loads((tmp_path / "agg.review.json").read_text(encoding="utf-8"))
    assert summary["fleiss_kappa"]["value"] == pytest.approx(want_kappa, rel=1e-9)
    assert summary["fleiss_kappa"]["items"] == 30 and summary["fleiss_kappa"]["ratings_per_item"] == 3
    assert f"Fleiss' kappa: {round(want_kappa, 3) + 0.0:.3f} over 30 items with 3 labels each" in done.stdout
    kept = read_items(tmp_path / "agg.jsonl")
    assert {it["id"]: it["label"] for it in kept} == {i: plain_majority([labels[a][i] for a in "ABC"]) for i in ids}
    assert kept[0]["premise"] == "prte0" and kept[0]["provenance"][-1]["step"] == "review"  # the dataset's items
    # unanimous-only (HuRTE's test set): the items all three labelled alike
    done = _cli(tmp_path, "A.csv", "B.csv", "C.csv", "--kind", "label", "--unanimous", "-o", "test.jsonl")
    assert done.returncode == 0, done.stderr
    same3 = [i for i in ids if len({labels[a][i] for a in "ABC"}) == 1]
    assert [it["id"] for it in read_items(tmp_path / "test.jsonl")] == same3
    assert len(read_items(tmp_path / "test.dropped.jsonl")) == len(ids) - len(same3)


def test_cli_ties_reported_likert_sd_and_refusals(tmp_path):
    _write(tmp_path / "a.csv", [("i1", "yes"), ("i2", "no")])
    _write(tmp_path / "b.csv", [("i1", "yes"), ("i2", "yes")])
    done = _cli(tmp_path, "a.csv", "b.csv", "--kind", "label", "-o", "out.jsonl")
    assert done.returncode == 0, done.stderr
    assert "ties (not broken, dropped): 1: i2" in done.stdout
    assert [d["reason"] for d in read_items(tmp_path / "out.dropped.jsonl")] == ["tie: no 1, yes 1 votes"]
    _write(tmp_path / "r1.csv", [("c1", "2"), ("c2", "-3")], ("id", "rating"))
    _write(tmp_path / "r2.csv", [("c1", "3"), ("c2", "3")], ("id", "rating"))
    done = _cli(tmp_path, "r1.csv", "r2.csv", "--kind", "rating", "--scale", "-3..3", "--max-sd", "1", "-o", "cb.jsonl")
    assert done.returncode == 0, done.stderr
    assert [(i["id"], i["label"]) for i in read_items(tmp_path / "cb.jsonl")] == [("c1", 2.5)]
    assert "Krippendorff's alpha (interval):" in done.stdout
    # refusals: one line, nothing written
    done = _cli(tmp_path, "r1.csv", "r2.csv", "--kind", "rating", "--against", "a.csv", "-o", "x.jsonl")
    assert done.returncode == 2 and done.stderr.strip().splitlines() == [
        "error: --against and --strict-majority are for --kind label (a rating's mean is not a label)"]
    done = _cli(tmp_path, "r1.csv", "r2.csv", "--kind", "rating", "--scale", "1..7", "-o", "x.jsonl")
    assert done.returncode == 2 and done.stderr.strip().splitlines() == [
        "error: r1.csv: row 3: field 'rating': '-3' is outside the scale 1..7"]
    assert not (tmp_path / "x.jsonl").exists()


def test_jsonl_number_labels_stay_numbers(tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    write_items(a, [{"id": "x", "label": 1}, {"id": "y", "label": 0}])
    write_items(b, [{"id": "x", "label": 1}, {"id": "y", "label": 0}])
    res = aggregate(read_annotations([a, b], "label"))
    assert [(i["id"], i["label"]) for i in res.kept] == [("x", 1), ("y", 0)]
