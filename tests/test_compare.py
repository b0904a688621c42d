"""Cross-lingual gap, rank movement and paired tests, checked against the papers and SciPy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binomtest, chi2, kendalltau

from glotbench.report.analysis.crosslingual import crosslingual_table, pairs_from_scores, relative_gap
from glotbench.report.analysis.paired import mcnemar, paired_bootstrap
from glotbench.report.analysis.ranks import format_movement, kendall_tau, rank_movement, rank_scores
from glotbench.errors import DataError

# --- cross-lingual gap -------------------------------------------------------------------

# Czech-Bench Tables 6.1 / 6.2: (Czech, English) for every metric with both variants.
CZECH_BENCH = {
    "GPT-3.5 Turbo": {
        "ANLI acc": (44.7, 44.3), "ANLI f1": (41.9, 40.6), "ARC-C acc": (73.1, 82.9), "ARC-E acc": (85.8, 93.1),
        "Belebele acc": (80.3, 87.0), "CTKFacts acc": (61.8, 67.6), "CTKFacts f1": (47.7, 63.2),
        "GSM8K acc": (64.2, 83.1), "MMLU acc": (58.0, 64.9), "SNLI acc": (61.8, 60.6), "SNLI f1": (51.5, 43.3),
        "Subjectivity acc": (80.2, 86.8), "Subjectivity f1": (80.2, 86.8), "TruthfulQA acc": (53.5, 58.5),
    },
    "Claude 3 Haiku": {
        "ANLI acc": (51.5, 55.3), "ANLI f1": (50.8, 54.2), "ARC-C acc": (76.8, 77.6), "ARC-E acc": (85.3, 89.1),
        "Belebele acc": (88.2, 91.0), "CTKFacts acc": (69.6, 68.1), "CTKFacts f1": (62.0, 62.2),
        "GSM8K acc": (78.6, 89.0), "MMLU acc": (67.3, 73.0), "SNLI acc": (71.7, 72.7), "SNLI f1": (70.5, 53.8),
        "Subjectivity acc": (81.5, 86.6), "Subjectivity f1": (81.2, 86.6), "TruthfulQA acc": (65.8, 70.8),
    },
    "Llama 3 8B": {
        "ANLI acc": (43.0, 46.8), "ANLI f1": (39.2, 38.8), "ARC-C acc": (64.3, 78.5), "ARC-E acc": (79.4, 91.4),
        "Belebele acc": (76.5, 83.4), "CTKFacts acc": (61.7, 69.0), "CTKFacts f1": (51.6, 65.0),
        "GSM8K acc": (67.07, None),  # GSM8K EN marked "-" (invalid) in Table 6.2
        "MMLU acc": (46.8, 53.5), "SNLI acc": (60.9, 65.5), "SNLI f1": (58.7, 47.4),
        "Subjectivity acc": (78.3, 87.1), "Subjectivity f1": (77.6, 87.1), "TruthfulQA acc": (41.0, 41.6),
    },
}


def test_relative_gap_sign_and_scale():
    assert relative_gap(60.0, 80.0) == pytest.approx(0.25)  # English better: positive
    assert relative_gap(80.0, 60.0) == pytest.approx(-0.25)  # native better: negative
    assert relative_gap(0.6, 0.8) == pytest.approx(relative_gap(60, 80))  # scale-free
    assert relative_gap(0.0, 0.0) == 0.0
    assert math.isnan(relative_gap(None, 0.5)) and math.isnan(relative_gap(0.5, float("nan")))
    with pytest.raises(DataError, match="MCC"):
        relative_gap(-0.1, 0.3)


def test_crosslingual_table_reproduces_czech_bench_section_6_4():
    rows = [(m, name, cs, en) for m, pairs in CZECH_BENCH.items() for name, (cs, en) in pairs.items()]
    table = crosslingual_table(rows)
    # §6.4: "Claude 3 Haiku ... 6.3%. GPT-3.5 Turbo ... 10%, and Llama 3 ... 10.9%."
    assert round(100 * table.models["Claude 3 Haiku"].average_relative_gap, 1) == 6.3
    assert round(100 * table.models["GPT-3.5 Turbo"].average_relative_gap, 0) == 10
    assert round(100 * table.models["Llama 3 8B"].average_relative_gap, 1) == 10.9
    llama = table.models["Llama 3 8B"]
    assert (llama.n_pairs, llama.n_missing) == (13, 1)
    # "the models usually achieve higher performance in the English benchmark variants"
    for g in table.models.values():
        assert g.n_english_higher > g.n_native_higher and g.average_signed_gap > 0
    row = next(r for r in table.rows if r.model == "GPT-3.5 Turbo" and r.pair == "MMLU acc")
    assert row.difference == pytest.approx(6.9) and row.relative_gap == pytest.approx(6.9 / 64.9)
    assert table.to_dict()["models"]["Claude 3 Haiku"]["n_pairs"] == 14


def test_crosslingual_inputs():
    scores = {"m": {"mmlu_cs": 0.5, "mmlu_en": 0.6}, "n": {"mmlu_cs": 0.7}}
    table = crosslingual_table(pairs_from_scores(scores, {"MMLU": ("mmlu_cs", "mmlu_en")}))
    assert table.models["m"].average_relative_gap == pytest.approx(0.1 / 0.6)
    assert table.models["n"].n_missing == 1 and math.isnan(table.models["n"].average_relative_gap)
    dict_rows = [{"model": "m", "pair": "x", "native": 1.0, "english": 2.0}]
    assert crosslingual_table(dict_rows).rows[0].relative_gap == pytest.approx(0.5)
    with pytest.raises(DataError, match="missing field 'english'"):
        crosslingual_table([{"model": "m", "pair": "x", "native": 1.0}])
    with pytest.raises(DataError, match="duplicate"):
        crosslingual_table([("m", "x", 1, 2), ("m", "x", 1, 2)])


# --- rank movement -------------------------------------------------------------------------

def _scores_from_order(order: list[str]) -> dict[str, float]:
    return {m: float(len(order) - i) for i, m in enumerate(order)}


WILDBENCH = ["Deepseek-V3", "GPT-4o", "o1-mini", "Deepseek-R1", "Qwen2.5-Instruct-72B", "GPT-4o-mini",
             "Llama-3.1-Instruct-70B", "QwQ", "Qwen2.5-Instruct-7B", "Llama-3.1-Instruct-8B"]
HUWILDBENCH = ["Deepseek-R1", "GPT-4o", "Deepseek-V3", "o1-mini", "GPT-4o-mini", "Qwen2.5-Instruct-72B",
               "Llama-3.1-Instruct-70B", "QwQ", "Llama-3.1-Instruct-8B", "Qwen2.5-Instruct-7B"]
# The HuWildBench column of OpenHuEval Table 7, verbatim.
TABLE_7_B = ["Deepseek-R1(↑3)", "GPT-4o(-)", "Deepseek-V3(↓2)", "o1-mini(↓1)", "GPT-4o-mini(↑1)",
             "Qwen2.5-Instruct-72B(↓1)", "Llama-3.1-Instruct-70B(-)", "QwQ(-)", "Llama-3.1-Instruct-8B(↑1)",
             "Qwen2.5-Instruct-7B(↓1)"]
SIMPLEQA = ["GPT-4o", "Deepseek-R1", "Llama-3.1-Instruct-70B", "Deepseek-V3", "QwQ", "Llama-3.1-Instruct-8B",
            "Qwen2.5-Instruct-72B", "GPT-4o-mini", "o1-mini", "Qwen2.5-Instruct-7B"]
HUSIMPLEQA = ["GPT-4o", "Llama-3.1-Instruct-70B", "Deepseek-R1", "Deepseek-V3", "GPT-4o-mini", "o1-mini",
              "Llama-3.1-Instruct-8B", "Qwen2.5-Instruct-72B", "QwQ", "Qwen2.5-Instruct-7B"]
TABLE_9_B = ["GPT-4o(-)", "Llama-3.1-Instruct-70B(↑1)", "Deepseek-R1(↓1)", "Deepseek-V3(-)", "GPT-4o-mini(↑3)",
             "o1-mini(↑3)", "Llama-3.1-Instruct-8B(↓1)", "Qwen2.5-Instruct-72B(↓1)", "QwQ(↓4)",
             "Qwen2.5-Instruct-7B(-)"]


@pytest.mark.parametrize("a,b,expected", [(WILDBENCH, HUWILDBENCH, TABLE_7_B), (SIMPLEQA, HUSIMPLEQA, TABLE_9_B)])
def test_rank_movement_matches_openhueval_tables(a, b, expected):
    cmp = rank_movement(_scores_from_order(a), _scores_from_order(b))
    table = cmp.side_by_side()
    assert [r[1] for r in table] == a
    assert [r[2] for r in table] == expected
    assert cmp.share_changed == pytest.approx(0.7)  # "70% LLMs experienced ranking changes"


def test_rank_movement_signed_style_like_chinese_simpleqa():
    # Figure 8: Doubao-pro-32k 12th -> 2nd is "+10"; GPT-4 3rd -> 9th is "-6".
    assert format_movement(12 - 2, "signed") == "+10" and format_movement(3 - 9, "signed") == "-6"
    cmp = rank_movement({"a": 3, "b": 2, "c": 1}, {"a": 1, "b": 2, "c": 3}, style="signed")
    assert {r.model: r.movement for r in cmp.rows} == {"c": "+2", "b": "0", "a": "-2"}


def test_ranks_ties_missing_and_lower_is_better():
    assert rank_scores({"a": 0.9, "b": 0.9, "c": 0.5}) == {"a": 1, "b": 1, "c": 3}
    assert rank_scores({"a": 0.1, "b": 0.3}, higher_is_better=False) == {"a": 1, "b": 2}
    cmp = rank_movement({"a": 1, "b": 2, "x": 5}, {"a": 2, "b": 1, "y": 0})
    assert cmp.only_in_a == ["x"] and cmp.only_in_b == ["y"]
    assert {r.model: r.movement for r in cmp.rows} == {"a": "↑1", "b": "↓1"}
    with pytest.raises(DataError, match="NaN"):
        rank_scores({"a": float("nan")})


def test_ranks_leave_an_invalid_score_out_never_rank_it_as_a_number():
    """None / NaN (an invalid score) on either side: listed as invalid, out of the ranks and tau."""
    a = {"a": 0.9, "b": 0.5, "c": float("nan"), "d": 0.7}
    b = {"a": 0.6, "b": 0.8, "c": 0.1, "d": None}
    cmp = rank_movement(a, b)
    assert cmp.invalid == ["c", "d"] and [r.model for r in cmp.rows] == ["b", "a"]
    assert {r.model: (r.rank_a, r.rank_b) for r in cmp.rows} == {"a": (1, 2), "b": (2, 1)}
    ref = kendalltau([0.9, 0.5], [0.6, 0.8])
    assert cmp.tau == pytest.approx(ref.statistic) and cmp.to_dict()["invalid"] == ["c", "d"]


def test_kendall_tau_matches_scipy():
    a = _scores_from_order(SIMPLEQA)
    b = _scores_from_order(HUSIMPLEQA)
    tau, p = kendall_tau(a, b)
    ref = kendalltau([a[m] for m in a], [b[m] for m in a])
    assert tau == pytest.approx(ref.statistic) and p == pytest.approx(ref.pvalue)
    assert rank_movement(a, b).tau == pytest.approx(tau)
    same = rank_movement(a, a)
    assert same.tau == pytest.approx(1.0) and same.share_changed == 0
    assert math.isnan(kendall_tau({"a": 1}, {"a": 2})[0])


# --- paired comparisons --------------------------------------------------------------------

def test_paired_bootstrap_identical_inputs_give_zero():
    x = np.random.default_rng(1).random(200)
    res = paired_bootstrap(x, x, n=2000, seed=3)
    assert res.difference == 0 and res.low == 0 and res.high == 0


def test_paired_bootstrap_known_difference_in_interval():
    rng = np.random.default_rng(7)
    b = rng.random(500)
    a = b + 0.1 + rng.normal(0, 0.05, 500)  # A is better by 0.1 on every item, plus noise
    res = paired_bootstrap(a, b, n=5000, seed=0)
    assert res.low < 0.1 < res.high and res.low > 0.05
    assert res.difference == pytest.approx(np.mean(a) - np.mean(b))
    # same seed, same interval; a custom metric runs the slow path
    assert paired_bootstrap(a, b, n=5000, seed=0) == res
    med = paired_bootstrap(a, b, metric_fn=np.median, n=300, seed=0)
    assert med.low < med.difference < med.high


def test_paired_bootstrap_keeps_pairs():
    # Huge item-to-item variance shared by both models: pairing makes the interval tight.
    rng = np.random.default_rng(0)
    base = rng.normal(0, 10, 400)
    res = paired_bootstrap(base + 1.0, base, n=2000, seed=0)
    assert res.low == pytest.approx(1.0) and res.high == pytest.approx(1.0)
    with pytest.raises(DataError, match="same items"):
        paired_bootstrap([1, 0, 1], [1, 0])


def _statsmodels_mcnemar():
    sm = pytest.importorskip("statsmodels.stats.contingency_tables")
    return sm.mcnemar


@pytest.mark.parametrize("b,c,both_right,both_wrong", [(3, 9, 40, 8), (30, 12, 100, 20), (0, 0, 5, 5), (7, 7, 3, 3)])
def test_mcnemar_against_scipy_and_statsmodels(b, c, both_right, both_wrong):
    a_ok = [1] * b + [0] * c + [1] * both_right + [0] * both_wrong
    b_ok = [0] * b + [1] * c + [1] * both_right + [0] * both_wrong
    res = mcnemar(a_ok, b_ok)
    assert (res.b, res.c) == (b, c)
    if b + c == 0:
        assert res.p_value == 1.0
        return
    if b + c < 25:
        assert res.method == "exact-binomial"
        assert res.p_value == pytest.approx(binomtest(b, b + c, 0.5).pvalue)
    else:
        assert res.method == "chi2-continuity-corrected"
        stat = (abs(b - c) - 1) ** 2 / (b + c)
        assert res.statistic == pytest.approx(stat) and res.p_value == pytest.approx(chi2.sf(stat, 1))
    sm_mcnemar = _statsmodels_mcnemar()
    table = [[both_right, b], [c, both_wrong]]
    ref = sm_mcnemar(table, exact=(b + c < 25), correction=True)
    assert res.statistic == pytest.approx(ref.statistic) and res.p_value == pytest.approx(ref.pvalue)


def test_mcnemar_forced_method_and_bad_input():
    a_ok = [True] * 30 + [False] * 10
    b_ok = [False] * 30 + [True] * 10
    assert mcnemar(a_ok, b_ok, exact=True).method == "exact-binomial"
    assert mcnemar(a_ok, b_ok).p_value < 0.01
    with pytest.raises(DataError, match="0/1"):
        mcnemar([0, 2], [1, 0])
    with pytest.raises(DataError, match="items"):
        mcnemar([0, 1], [1])
