"""Factuality grades and scores (CO, NA, IN, CGA, F), pinned to the papers' tables."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from glotbench.errors import DataError
from glotbench.scoring.grades import (
    CORRECT,
    INCORRECT,
    JUDGE_ERROR,
    NOT_ATTEMPTED,
    Grade,
    by_category,
    factuality_scores,
    scores_from_counts,
)
from glotbench.scoring.metrics import ScoredItem, bootstrap_ci, get_metric

FIXTURE = Path(__file__).parent / "fixtures" / "hu_simpleqa_sample.jsonl"


@pytest.mark.parametrize(
    "co, in_, na, cga, f, digits",
    [
        # OpenHuEval Table 8, GPT-4o on HuSimpleQA.
        (50.3, 40.61, 9.09, 55.33, 52.69, 2),
        # Chinese SimpleQA Table 2, o1-preview.
        (63.8, 24.0, 12.2, 72.7, 67.9, 1),
        # Chinese SimpleQA Table 2, GPT-4-turbo. (Not every row reproduces from the rounded
        # percentages: Baichuan3-turbo's 45.2/45.8 gives CGA 49.67, the table says 49.6.)
        (45.6, 40.2, 14.2, 53.1, 49.1, 1),
    ],
)
def test_paper_rows(co, in_, na, cga, f, digits):
    s = scores_from_counts(co, in_, na)  # ratios: percentages work as counts
    assert round(100 * s["CGA"], digits) == cga
    assert round(100 * s["F"], digits) == f
    assert round(100 * s["CO"], digits) == co


def test_f_is_harmonic_mean_of_co_and_cga():
    for c, i, n in [(7, 2, 1), (1, 8, 5), (30, 0, 3), (5, 5, 90)]:
        s = scores_from_counts(c, i, n)
        hm = 2 * s["CO"] * s["CGA"] / (s["CO"] + s["CGA"])
        assert s["F"] == pytest.approx(hm)
        assert s["F"] == pytest.approx(2 * c / (2 * c + 2 * i + n))


def test_counts_and_judge_errors_are_outside_denominators():
    grades = [CORRECT] * 6 + [INCORRECT] * 3 + [NOT_ATTEMPTED] * 1 + [JUDGE_ERROR] * 2
    s = factuality_scores(grades, ci=False)
    assert s["n"] == 12 and s["n_gradeable"] == 10 and s["judge_error"] == 2
    assert s["counts"] == {"CORRECT": 6, "INCORRECT": 3, "NOT_ATTEMPTED": 1, "JUDGE_ERROR": 2}
    assert (s["CO"], s["IN"], s["NA"]) == pytest.approx((0.6, 0.3, 0.1))
    assert s["CGA"] == pytest.approx(6 / 9)
    assert s["F"] == pytest.approx(12 / 19)


def test_grades_accept_strings_in_any_case():
    s = factuality_scores(["correct", "Not Attempted", "INCORRECT", Grade.CORRECT], ci=False)
    assert s["counts"]["CORRECT"] == 2 and s["counts"]["NOT_ATTEMPTED"] == 1


def test_unknown_grade_is_a_one_line_error_naming_the_item():
    with pytest.raises(DataError, match=r"grade #1: unknown grade 'MAYBE'"):
        factuality_scores(["CORRECT", "MAYBE"])
    with pytest.raises(DataError, match=r"grade #2: unknown grade \['x'\]"):  # unhashable, after a spelling
        factuality_scores(iter(["CORRECT", "correct", ["x"]]))


def test_edge_cases():
    none_attempted = factuality_scores([NOT_ATTEMPTED] * 4, ci=False)
    assert none_attempted["CGA"] == 0.0 and none_attempted["F"] == 0.0 and none_attempted["NA"] == 1.0
    only_errors = factuality_scores([JUDGE_ERROR] * 3, ci=True)
    assert only_errors["n_gradeable"] == 0
    assert all(math.isnan(v) for v in (only_errors["CO"], only_errors["F"]))
    assert all(math.isnan(v) for pair in only_errors["ci"].values() for v in pair)


def test_bootstrap_is_seeded_and_brackets_the_estimate():
    grades = [CORRECT] * 55 + [INCORRECT] * 35 + [NOT_ATTEMPTED] * 10
    a = factuality_scores(grades, seed=3)
    b = factuality_scores(grades, seed=3)
    assert a["ci"] == b["ci"]
    for k in ("CO", "CGA", "F"):
        lo, hi = a["ci"][k]
        assert lo < a[k] < hi
        assert hi - lo < 0.3
    # Agrees with the generic bootstrap in scoring.metrics on CO (same resampling scheme).
    items = [ScoredItem(gold=None, pred=g, values={"correct": float(g is CORRECT)}) for g in grades]
    lo, hi = bootstrap_ci(items, get_metric("mean:correct"), seed=3)
    assert (lo, hi) == pytest.approx(tuple(a["ci"]["CO"]), abs=0.02)


def test_registered_metrics_read_the_grade_from_pred():
    items = [ScoredItem(gold="x", pred=g) for g in [CORRECT, CORRECT, INCORRECT, NOT_ATTEMPTED]]
    assert get_metric("factuality_f")(items) == pytest.approx(4 / 7)
    assert get_metric("factuality_cga")(items) == pytest.approx(2 / 3)


def test_by_category_on_husimpleqa_fixture():
    records = [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines()]
    assert 8 <= len(records) <= 10
    for r in records:
        assert {"qid", "question", "answer", "hu_specific_dim"} <= set(r)
    grades = [CORRECT if k % 3 == 0 else INCORRECT if k % 3 == 1 else NOT_ATTEMPTED for k in range(len(records))]
    table = by_category(grades, [r["hu_specific_dim"] for r in records])
    assert list(table) == sorted({r["hu_specific_dim"] for r in records})
    assert sum(t["n"] for t in table.values()) == len(records)
    figure = table["figure"]  # records 5 and 8 -> NOT_ATTEMPTED, NOT_ATTEMPTED
    assert figure["n"] == 2 and figure["NA"] == 1.0


def test_by_category_length_mismatch():
    with pytest.raises(DataError, match="3 grades but 2 category"):
        by_category([CORRECT] * 3, ["a", "b"])


def test_by_category_on_real_chinese_simpleqa_slice():
    from glotbench.paths import resolve_data_file

    path = resolve_data_file("chinese_simpleqa/chinese_simpleqa.jsonl")
    if not path.is_file():
        pytest.skip(f"Chinese SimpleQA data not found at {path}")
    with path.open(encoding="utf-8") as f:
        recs = [json.loads(next(f)) for _ in range(200)]
    grades = [CORRECT if k % 2 else INCORRECT for k in range(len(recs))]
    prim = by_category(grades, [r["primary_category"] for r in recs])
    sec = by_category(grades, [r["secondary_category"] for r in recs])
    assert sum(v["n"] for v in prim.values()) == 200 == sum(v["n"] for v in sec.values())
    assert len(sec) >= len(prim)


def test_scores_from_counts_is_the_vectorised_arithmetic():
    """The scalar path gives _rates' numbers to the last bit (counts, sums of floats, percentages)."""
    import itertools

    from glotbench.scoring.grades import _rates, scores_from_counts

    values = [0, 1, 2, 3, 7, 10, 0.5, 1 / 3, 33.3, 66.7, 1e-9, 2000]
    for c, i, n in itertools.product(values, repeat=3):
        got = scores_from_counts(c, i, n)
        want = _rates(np.array(c), np.array(i), np.array(n))
        assert set(got) == set(want)
        for k in got:
            assert type(got[k]) is float
            assert np.array_equal(np.float64(got[k]), want[k], equal_nan=True), (c, i, n, k)


def test_factuality_table_reuses_the_summarys_counts_and_gives_the_same_intervals():
    """The table counts each slice over four codes, as the metrics' resample form does, so a run's
    summary has made its draws already; the intervals do not depend on that."""
    from glotbench.scoring import resample as rs
    from glotbench.scoring.grades import bootstrap_factuality_ci
    from glotbench.scoring.metrics import ScoredItem, bootstrap_ci, get_metric

    grades = list(np.random.default_rng(9).choice(["CORRECT", "INCORRECT", "NOT_ATTEMPTED"], size=257))
    rs._COUNTS.clear()
    rs._counts_bytes = 0
    cold = bootstrap_factuality_ci(grades, seed=4)
    rs._COUNTS.clear()
    rs._counts_bytes = 0
    items = [ScoredItem(gold=None, pred=g) for g in grades]
    assert bootstrap_ci(items, get_metric("factuality_cga"), seed=4) == tuple(cold["CGA"])
    made = len(rs._COUNTS)
    draws = []
    real = rs.index_chunks
    try:
        rs.index_chunks = lambda *a, **k: draws.append(a) or real(*a, **k)
        assert bootstrap_factuality_ci(grades, seed=4) == cold
    finally:
        rs.index_chunks = real
    assert draws == [] and len(rs._COUNTS) == made
