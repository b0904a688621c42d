"""Stated-confidence parsing, ECE / Brier / reliability table, Best-of-N, and the two PNG plots."""

from __future__ import annotations

import numpy as np
import pytest

from glotbench.errors import DataError
from glotbench.scoring.best_of_n import accuracy_at_k
from glotbench.scoring.calibration import (
    brier_score,
    calibration_report,
    expected_calibration_error,
    reliability_table,
)
from glotbench.extract.confidence import parse_stated_answer
from glotbench.scoring.grades import CORRECT, INCORRECT, JUDGE_ERROR, NOT_ATTEMPTED

# --- parsing the {"answer", "confidence_score"} reply ---------------------------------------


@pytest.mark.parametrize(
    "text, answer, conf",
    [
        ('{"answer": "Kölcsey Ferenc", "confidence_score": 95}', "Kölcsey Ferenc", 95.0),
        ('```json\n{\n  "answer": "足阳明胃经",\n  "confidence_score": 80\n}\n```', "足阳明胃经", 80.0),
        ('Íme a válaszom:\n{"answer": "1526", "confidence_score": "70%"}\nKöszönöm!', "1526", 70.0),
        ('{"answer": "Kékes", "confidence_score": 87.5}', "Kékes", 87.5),
        ('{"answer": "x", "confidence_score": "62,5"}', "x", 62.5),
    ],
)
def test_parse_stated_answer(text, answer, conf):
    got = parse_stated_answer(text)
    assert (got.answer, got.confidence, got.error) == (answer, conf, None)


@pytest.mark.parametrize(
    "text, answer, why",
    [
        ("Nem tudom.", None, "no JSON object"),
        ('{"answer": "Balaton"}', "Balaton", "no confidence_score"),
        ('{"answer": "Balaton", "confidence_score": 140}', "Balaton", "not a number in 0-100"),
        ('{"answer": "Balaton", "confidence_score": "high"}', "Balaton", "not a number in 0-100"),
        ('{"answer": "Balaton", "confidence_score": true}', "Balaton", "not a number in 0-100"),
    ],
)
def test_unparseable_confidence_keeps_the_answer(text, answer, why):
    got = parse_stated_answer(text)
    assert got.confidence is None and got.answer == answer and why in got.error


# --- ECE, Brier, reliability table ------------------------------------------------------------


def test_hand_computed_values():
    # bins: 0.9 bin has 95, 95, 100 (2 right); 0.5 bin has 50, 55 (1 right); 0.1 bin has 10 (wrong)
    conf = [95, 95, 100, 50, 55, 10]
    grades = [CORRECT, CORRECT, INCORRECT, CORRECT, NOT_ATTEMPTED, INCORRECT]
    rows = reliability_table(conf, grades)
    assert len(rows) == 10
    b9, b5, b1 = rows[9], rows[5], rows[1]
    assert (b9["count"], b9["accuracy"]) == (3, pytest.approx(2 / 3))
    assert b9["mean_confidence"] == pytest.approx(290 / 300)
    assert (b5["count"], b5["accuracy"], b5["mean_confidence"]) == (2, 0.5, pytest.approx(0.525))
    assert (b1["count"], b1["accuracy"], b1["mean_confidence"]) == (1, 0.0, pytest.approx(0.10))
    assert rows[0]["count"] == 0 and rows[0]["accuracy"] is None
    ece = 3 / 6 * abs(2 / 3 - 290 / 300) + 2 / 6 * abs(0.5 - 0.525) + 1 / 6 * 0.10
    assert expected_calibration_error(conf, grades) == pytest.approx(ece)
    brier = np.mean([0.05**2, 0.05**2, 1.0, 0.5**2, 0.55**2, 0.1**2])
    assert brier_score(conf, grades) == pytest.approx(brier)


def test_bin_edges_are_left_closed_and_100_goes_to_the_last_bin():
    rows = reliability_table([0, 10, 70, 99.9, 100], [CORRECT] * 5)
    assert [r["count"] for r in rows] == [1, 1, 0, 0, 0, 0, 0, 1, 0, 2]


def test_report_counts_what_it_leaves_out():
    rep = calibration_report([90, None, 80, 30], [CORRECT, CORRECT, JUDGE_ERROR, INCORRECT])
    assert rep["n_used"] == 2 and rep["unparseable_confidence"] == 1 and rep["judge_error"] == 1
    assert rep["accuracy"] == 0.5 and rep["mean_confidence"] == pytest.approx(0.6)
    assert rep["ece"] == pytest.approx(0.5 * 0.1 + 0.5 * 0.3)


def test_agrees_with_scikit_learn():
    from sklearn.calibration import calibration_curve
    from sklearn.metrics import brier_score_loss

    rng = np.random.default_rng(7)
    # Off-edge confidences (x.5) so bin edges cannot differ by float rounding.
    conf = rng.integers(0, 100, size=500) + 0.5
    p_true = conf / 100 * 0.8  # an overconfident model
    hit = rng.random(500) < p_true
    grades = [CORRECT if h else INCORRECT for h in hit]
    prob_true, prob_pred = calibration_curve(hit, conf / 100, n_bins=10, strategy="uniform")
    counts, _ = np.histogram(conf / 100, bins=np.linspace(0, 1, 11))
    counts = counts[counts > 0]
    ece_sklearn = float(np.sum(counts / counts.sum() * np.abs(prob_true - prob_pred)))
    rep = calibration_report(list(conf), grades)
    assert rep["ece"] == pytest.approx(ece_sklearn)
    assert rep["brier"] == pytest.approx(brier_score_loss(hit, conf / 100))
    used = [r for r in rep["table"] if r["count"]]
    assert [r["accuracy"] for r in used] == pytest.approx(list(prob_true))
    assert rep["ece"] > 0.05  # the overconfidence shows


def test_perfectly_confident_and_right_is_calibrated():
    assert expected_calibration_error([100] * 4, [CORRECT] * 4) == 0.0
    assert brier_score([100] * 4, [True] * 4) == 0.0


# --- Best-of-N --------------------------------------------------------------------------------


def test_accuracy_at_k_first_k():
    items = [
        [INCORRECT, CORRECT, INCORRECT],
        [CORRECT, INCORRECT, INCORRECT],
        [NOT_ATTEMPTED, JUDGE_ERROR, INCORRECT],
        [INCORRECT, INCORRECT, CORRECT],
    ]
    assert accuracy_at_k(items) == pytest.approx([0.25, 0.5, 0.75])


def test_accuracy_at_k_unbiased_matches_brute_force():
    from itertools import permutations

    items = [[CORRECT, INCORRECT, INCORRECT, INCORRECT], [CORRECT, CORRECT, INCORRECT, NOT_ATTEMPTED]]
    got = accuracy_at_k(items, method="unbiased")
    orders = [[list(pa), list(pb)] for pa in permutations(items[0]) for pb in permutations(items[1])]
    brute = np.mean([accuracy_at_k(o) for o in orders], axis=0)
    assert got == pytest.approx(list(brute))
    assert got[-1] == 1.0 and got == sorted(got)


def test_accuracy_at_k_needs_equal_n():
    with pytest.raises(DataError, match="item #1 has 1 answers"):
        accuracy_at_k([[CORRECT, CORRECT], [CORRECT]])
    assert accuracy_at_k([]) == []


# --- plots ------------------------------------------------------------------------------------


def _png_ok(path):
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000


def test_reliability_diagram_png(tmp_path):
    pytest.importorskip("matplotlib")
    from glotbench.plots.reliability import save_reliability_diagram

    rng = np.random.default_rng(0)
    tables, eces = {}, {}
    for name, slope in (("model-a", 0.95), ("model-b", 0.6)):
        conf = list(rng.integers(20, 101, size=300))
        grades = [CORRECT if rng.random() < c / 100 * slope else INCORRECT for c in conf]
        rep = calibration_report(conf, grades)
        tables[name], eces[name] = rep["table"], rep["ece"]
    out = save_reliability_diagram(tables, tmp_path / "plots" / "reliability.png", ece=eces)
    _png_ok(out)


def test_accuracy_at_k_png(tmp_path):
    pytest.importorskip("matplotlib")
    from glotbench.plots.curve import save_accuracy_at_k

    rng = np.random.default_rng(1)
    curves = {}
    for name, p in (("model-a", 0.5), ("model-b", 0.2)):
        items = [[CORRECT if rng.random() < p * rng.random() * 2 else INCORRECT for _ in range(30)] for _ in range(50)]
        curves[name] = accuracy_at_k(items, method="unbiased")
    _png_ok(save_accuracy_at_k(curves, tmp_path / "bon.png"))
