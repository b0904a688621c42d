"""Duel scoring's statistics (glotbench.report.analysis.duels), by value against independent re-statements
in tests/value_oracles.py: statsmodels' McNemar (exact) and Holm, and plain loops for the permutation
test, the corpus-metric bootstrap p-value and the share of duels won."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from glotbench.report.analysis.duels import Duel, bootstrap_p_value, decide, holm, paired_permutation_test, task_shares
from glotbench.report.analysis.paired import mcnemar
from value_oracles import (METRIC_ORACLES, label_items, plain_bootstrap_p, plain_duel_shares, plain_sign_flip_p,
                           statsmodels_holm, statsmodels_mcnemar_exact)

P = st.floats(0, 1, allow_nan=False)


@settings(max_examples=200, deadline=None)
@given(st.lists(P, min_size=1, max_size=12))
def test_holm_equals_statsmodels(ps):
    assert np.allclose(holm(ps), statsmodels_holm(ps), rtol=1e-12, atol=1e-15)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=60))
def test_mcnemar_exact_equals_statsmodels(pairs):
    a, b = [int(x) for x, _ in pairs], [int(y) for _, y in pairs]
    assert math.isclose(mcnemar(a, b, exact=True).p_value, statsmodels_mcnemar_exact(a, b), rel_tol=1e-9, abs_tol=1e-12)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1)), min_size=1, max_size=15), st.integers(0, 2**31))
def test_permutation_test_equals_a_plain_loop(pairs, seed):
    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    assert math.isclose(paired_permutation_test(a, b, n=300, seed=seed), plain_sign_flip_p(a, b, 300, seed), rel_tol=1e-12)


def test_permutation_test_separates_a_real_difference_and_not_noise():
    rng = np.random.default_rng(5)
    base = rng.random(80)
    assert paired_permutation_test(base + 0.2, base, n=2000, seed=1) < 0.001
    assert paired_permutation_test(base, base, n=2000, seed=1) == 1.0


@settings(max_examples=15, deadline=None)
@given(label_items(min_size=4, max_size=25), label_items(min_size=4, max_size=25), st.integers(0, 2**31))
def test_corpus_bootstrap_p_equals_a_plain_loop(xs, ys, seed):
    k = min(len(xs), len(ys))
    xs, ys = xs[:k], [type(y)(gold=x.gold, pred=y.pred) for x, y in zip(xs, ys)]  # the same golds on both sides
    f1 = METRIC_ORACLES["macro_f1"].compute

    def diff(idx):
        return f1([xs[int(j)] for j in idx]) - f1([ys[int(j)] for j in idx])

    got = bootstrap_p_value(diff, k, n=60, seed=seed)
    want = plain_bootstrap_p(f1, xs, ys, 60, seed)
    assert (math.isnan(got) and math.isnan(want)) or math.isclose(got, want, rel_tol=1e-12)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["t1", "t2", "t3"]), st.floats(0, 1), st.floats(0, 1), P), max_size=12),
       st.booleans())
def test_share_of_duels_won_equals_a_plain_loop(rows, up):
    models = ["m1", "m2", "m3"]
    pairs = [(a, b) for i, a in enumerate(models) for b in models[i + 1:]]
    duels = [Duel(t, "x", *pairs[j % 3], sa, sb, 10, "permutation", p) for j, (t, sa, sb, p) in enumerate(rows)]
    shares: dict[str, dict[str, float]] = {}
    for t in sorted({d.task for d in duels}):
        mine = [d for d in duels if d.task == t]
        decide(mine, up, 0.05)
        for m, s in task_shares(mine, models).items():
            shares.setdefault(m, {})[t] = s
    got = {m: sum(v.values()) / len(v) for m, v in shares.items()}
    want = plain_duel_shares([d.to_dict() for d in duels], 0.05, {d.task: up for d in duels})
    assert got.keys() == want.keys()
    assert all(math.isclose(got[m], want[m]) for m in got)
    # Holm applied within each task: restated by statsmodels
    for t in {d.task for d in duels}:
        mine = [d for d in duels if d.task == t]
        assert np.allclose([d.p_holm for d in mine], statsmodels_holm([d.p_value for d in mine]))


def test_compare_duels_on_committed_runs_equals_the_oracle(tmp_path):
    """No data needed: three of the committed signal fixture runs (one recorded-answers model at
    steps 1000, 3000, 4000; labelled by folder, as runs of one model sharing tasks are), in a fresh
    subprocess, against the oracle of tests/test_duels_e2e.py."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    from test_duels_e2e import oracle

    root = Path(__file__).resolve().parent / "fixtures" / "signal_runs"
    runs = [root / f"ckpt-step{s}-seed1" for s in (1000, 3000, 4000)]
    out = tmp_path / "d.json"
    done = subprocess.run([sys.executable, "-m", "glotbench", "runs", "compare", "--duels", *map(str, runs), "--n-boot", "300",
                           "--json", str(out)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    got = json.loads(out.read_text(encoding="utf-8"))
    label = {r: f"recorded:answers.jsonl ({r.name})" for r in runs}
    want, shares, invalid = oracle(runs, 300, 0, 0.05, label, ("mm_eval.syntax", "hulu.cola"))
    assert invalid == [] and len(got["duels"]) == len(want) == 6
    key = lambda d: (d["task"], d["a"], d["b"])  # noqa: E731
    for g, w in zip(sorted(got["duels"], key=key), sorted(want, key=key)):
        assert key(g) == key(w)
        for k in ("score_a", "score_b", "p_holm"):
            assert math.isclose(g[k], w[k], rel_tol=1e-9, abs_tol=1e-12), (g, w)
    assert {m["model"]: m["average_share_won"] for m in got["models"]} == shares


def test_duels_refuse_bad_options_in_one_line(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    run = str(Path(__file__).resolve().parent / "fixtures" / "signal_runs" / "ckpt-step1000-seed1")
    for args, says in ((["--alpha", "1.5"], "--alpha must be between 0 and 1"),
                       (["--paired"], "choose exactly one of"),
                       (["--n-boot", "0"], "--n-boot must be at least 1")):
        done = subprocess.run([sys.executable, "-m", "glotbench", "runs", "compare", "--duels", run, run, *args],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode != 0 and says in done.stderr and "Traceback" not in done.stderr, done.stderr
