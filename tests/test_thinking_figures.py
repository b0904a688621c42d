"""OpenHuEval's Fig. 6 as a per-response distribution and the Fig. 9 cross-tab (complexity x correctness of
the reasoning segments), as ``analyze thinking --judge`` summarises them (thinking_judge.summarise), checked
against plain re-statements in tests/value_oracles.py on generated judge results."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from glotbench.benchmarks.openhueval.thinking_judge import DIMENSIONS, summarise
from value_oracles import plain_crosstab, plain_ratio_histogram

OUTCOMES = ("CORRECT", "INCORRECT", "NOT_ATTEMPTED")
CORRECTNESS = (*DIMENSIONS["Dimension1"][1], "", "Odd Tag")
COMPLEXITY = (*DIMENSIONS["Dimension2"][1], "")
tag = st.fixed_dictionaries({"Dimension1": st.sampled_from(CORRECTNESS), "Dimension2": st.sampled_from(COMPLEXITY)})
row = st.fixed_dictionaries({
    "outcome": st.sampled_from(OUTCOMES),
    "segments": st.lists(st.just("s"), min_size=0, max_size=3),
    "tags": st.lists(tag, max_size=4),
    "thought_scores": st.lists(st.sampled_from([0, 1, 2, None]), max_size=7),
})


@settings(max_examples=200, deadline=None)
@given(st.lists(row, max_size=25))
def test_fig6_distribution_and_fig9_crosstab_equal_plain_loops(rows):
    rep = summarise(rows)
    for outcome in (*OUTCOMES, "ALL"):
        judged = [r for r in rows if r["segments"] and (outcome == "ALL" or r["outcome"] == outcome)]
        dist = rep[outcome]["correct_ratio_distribution"]
        want = plain_ratio_histogram([r["thought_scores"] for r in judged])
        assert [b["n"] for b in dist] == want
        total = sum(want)
        assert [b["share"] for b in dist] == [(n / total if total else None) for n in want]
        # the distribution's non-zero part is the share the Fig. 6 headline reports
        if total:
            assert abs(1 - want[0] / total - rep[outcome]["share_with_correct_thought"]) < 1e-12
        pairs = [(t["Dimension2"], t["Dimension1"]) for r in judged for t in r["tags"]]
        fig9 = rep[outcome]["fig9"]
        cells = {(a, b): v for a, cs in fig9["counts"].items() for b, v in cs.items() if v}
        assert cells == plain_crosstab(pairs)
        assert fig9["n_segments"] == len(pairs)
        for (a, b), v in cells.items():
            assert fig9["share"][a][b] == v / len(pairs)
            assert fig9["row_share"][a][b] == v / sum(1 for p in pairs if p[0] == a)
    assert rep["fig6"]["distribution"]["INCORRECT"] == rep["INCORRECT"]["correct_ratio_distribution"]


def test_ratio_bins_are_right_closed_in_exact_arithmetic():
    rows = [{"outcome": "INCORRECT", "segments": ["s"], "thought_scores": s}
            for s in ([2, 0, 0, 0, 0, 0, 0, 0, 0, 0], [2, 2, 2, 0, 0, 0, 0, 0, 0, 0], [0], [2], [None, 2, 0])]
    dist = summarise(rows)["INCORRECT"]["correct_ratio_distribution"]
    got = {(b["lo"], b["hi"]): b["n"] for b in dist if b["n"]}
    assert got == {(0.0, 0.1): 1, (0.2, 0.3): 1, (0.0, 0.0): 1, (0.9, 1.0): 1, (0.4, 0.5): 1}
