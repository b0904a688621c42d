"""Every metric's fast bootstrap form equals the plain per-resample loop, and the engine under it.

The oracle is :func:`glotbench.scoring.metrics.loop_stats`: the metric's own function called on each
resample in turn. For every registered metric, on items the metric's value oracle generates
(tests/value_oracles.py, up to five lists joined: 200 items), ``Metric.resample_stats`` (its
``fast=`` form, or the resampled mean of its per-item values) must give the same array, bit for
bit, or decline (None). tests/test_metric_values.py checks the functions themselves against
independent oracles (scikit-learn, the reference rules). Then the edge cases (NaN, nothing kept,
forms that decline) and the engine's own guarantees (chunks, kept counts, memory bounds).
"""

from __future__ import annotations

import json

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import glotbench.catalog; glotbench.catalog.build()  # noqa: E702  every built-in metric
import glotbench.benchmarks.factuality.metrics_strict  # noqa: F401  factuality_*_strict
import glotbench.scoring.extractive_qa_scorer  # noqa: F401  no_answer_*
from glotbench.scoring import resample as rs
from glotbench.scoring.metrics import METRICS, Metric, ScoredItem, _labels, bootstrap_ci, get_metric, loop_stats
from value_oracles import METRIC_ORACLES

FAST = settings(max_examples=10, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _loop(items, metric, n_resamples, seed):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scikit-learn's "ill-defined" warnings on labels only predicted
        return loop_stats(items, metric, n_resamples, seed)


def _diff(got, want):
    return np.flatnonzero(~((got == want) | (np.isnan(got) & np.isnan(want))))[:5]


def assert_fast_is_the_loop(items, metric, n_resamples, seed, whole_sums=True):
    got = metric.resample_stats(items, n_resamples, seed)
    if got is None:  # declined: bootstrap_ci runs the loop itself
        return None
    want = _loop(items, metric, n_resamples, seed)
    assert got.shape == want.shape
    if whole_sums:
        assert np.array_equal(got, want, equal_nan=True), (metric.name, _diff(got, want), got[_diff(got, want)])
    else:  # see test_the_fast_form_of_every_registered_metric_is_the_plain_loop
        assert np.allclose(got, want, rtol=1e-12, atol=0, equal_nan=True), (metric.name, _diff(got, want))
    return got


def _fast_form(m):
    """The metric's own fast form: its kind's, or for a kind with a table of stats, its stat's row's."""
    impl = m.implementation()
    return impl.stats[dict(m.params)["stat"]][1] if impl.stats else impl.fast


def test_every_registered_metric_has_a_fast_form():
    missing = sorted(n for n in METRICS.names() if not get_metric(n).per_item_mean and _fast_form(get_metric(n)) is None)
    assert missing == []
    # the check can fail: a kind's stat without a fast form and without a per-item form is found
    from glotbench.scoring.metric_kinds import by_stat

    bare = Metric("bare", kind=by_stat("test.bare", {"x": (lambda items: 0.0, None)}), params={"stat": "x"})
    assert not bare.per_item_mean and _fast_form(bare) is None


def _whole(items, key):
    return all(float(v).is_integer() for i in items if (v := i.values.get(key)) is not None)


# fast forms over real-valued sums (log-likelihoods, probabilities): numpy's vector sums, exp and
# division run in another order than the plain function's Python floats, so they agree to 1e-12
# relative, not to the last bit (ECE bins, pooled NLL ratios)
FLOAT_FORMS = {"bits_per_byte", "perplexity", "word_perplexity", "byte_perplexity", "continuation_perplexity", "ll_ece",
               "ll_auroc_macro"}


@pytest.mark.parametrize("name", sorted(METRICS.names()))
def test_the_fast_form_of_every_registered_metric_is_the_plain_loop(name):
    """Exact for every declared ``fast=`` form. A mean of fractional per-item values with some
    missing is compared to 1e-13: the resampled mean sums a row with zeros in the missing places,
    and numpy's pairwise sum groups the terms by position, so the last bit can differ from the
    mean of the values alone (as it always did; the intervals are unchanged)."""
    metric = get_metric(name)
    many = st.lists(METRIC_ORACLES[name].items, min_size=1, max_size=5).map(lambda ls: [i for xs in ls for i in xs])

    @FAST
    @given(many.filter(lambda xs: len(xs) >= 2), st.integers(0, 3))
    def check(items, seed):
        whole = (metric.key is None and name not in FLOAT_FORMS) or (metric.key is not None and _whole(items, metric.key))
        assert_fast_is_the_loop(items, metric, 25, seed, whole_sums=whole)

    check()


# ---------------------------------------------------------------- edge cases


def _label_items(rng, n, n_classes, p_unparseable):
    labels = [f"c{k}" for k in range(n_classes)]
    items = []
    for g in rng.choice(labels, size=n):
        r = rng.random()
        pred = None if r < p_unparseable else (g if r < 0.6 else str(rng.choice(labels + ["other"])))
        items.append(ScoredItem(gold=str(g), pred=pred))
    return items


def _sk(name, items):
    from sklearn.metrics import f1_score, matthews_corrcoef

    g, p = _labels(items)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if name == "mcc":
            return float(matthews_corrcoef(g, p))
        return float(f1_score(g, p, labels=sorted(set(g)), average=name.removesuffix("_f1"), zero_division=0))


@pytest.mark.parametrize("case", [(2, 2, 0.0), (60, 2, 0.1), (300, 12, 0.05)])
@pytest.mark.parametrize("name", ["macro_f1", "weighted_f1", "mcc"])
def test_label_metrics_are_scikit_learn_on_every_resample_to_the_last_bit(case, name):
    """The confusion-matrix arithmetic is scikit-learn's step by step: the same floats, not close ones."""
    n, k, unp = case
    items = _label_items(np.random.default_rng(n + k), n, k, unp)
    got = get_metric(name).resample_stats(items, 60, seed=1)
    assert np.array_equal(got, _loop(items, lambda xs: _sk(name, xs), 60, 1))


def test_one_class_and_all_wrong_resamples():
    items = [ScoredItem(gold="a", pred="a")] * 5 + [ScoredItem(gold="a", pred=None)] * 3 + [ScoredItem(gold="b", pred="a")]
    for name in ("macro_f1", "weighted_f1", "mcc", "answered", "accuracy"):
        assert_fast_is_the_loop(items, get_metric(name), 200, 1)


@pytest.mark.parametrize("name", ["cb_macro_f1", "cb_topic_accuracy", "no_answer_accuracy", "no_answer_macro_f1"])
def test_resamples_with_nothing_kept_are_nan_as_in_the_loop(name):
    kept = {"cb_macro_f1": {"cb_gold": 1.0, "cb_pred": 2.0}, "cb_topic_accuracy": {"cb_correct": 1.0},
            "no_answer_accuracy": {"no_answer_gold": 1.0}, "no_answer_macro_f1": {"no_answer_gold": 0.0, "no_answer_pred": 1.0}}[name]
    items = [ScoredItem(gold=None, pred=None, values=dict(kept), metadata={"subject": "s"})]
    items += [ScoredItem(gold=None, pred=None, values={"cb_parsed": 0.0}, metadata={"subject": "s"})] * 3
    stats = assert_fast_is_the_loop(items, get_metric(name), 100, 0)
    assert np.isnan(stats).any() and not np.isnan(stats).all()  # (3/4)^4 of resamples draw no kept item


def test_no_value_no_interval_and_under_two_items_none():
    fn = get_metric("exact_match")
    assert np.isnan(bootstrap_ci([ScoredItem(gold="x", pred="x")] * 3, fn, 20)).all()
    assert np.isnan(bootstrap_ci([ScoredItem(gold="x", pred="x", values={"exact_match": 1.0})], fn, 20)).all()
    assert np.isnan(bootstrap_ci([], get_metric("factuality_co"), 20)).all()


def _cb_labels(rng, n, n_labels, p_stray):
    items = []
    for _ in range(n):
        g = float(rng.integers(0, n_labels))
        r = rng.random()
        p = float(rng.integers(10, 10 + 3 * n_labels)) if r < p_stray else (g if r < 0.6 else float(rng.integers(0, n_labels)))
        items.append(ScoredItem(gold=None, pred=None, values={"cb_gold": g, "cb_pred": p}))
    return items


def test_cb_macro_f1_with_many_labels_is_the_loop():
    """40 labels and stray predictions: more than PAIR_CODES pair codes, so the three-sums path."""
    assert_fast_is_the_loop(_cb_labels(np.random.default_rng(0), 400, 40, 0.5), get_metric("cb_macro_f1"), 100, 3)


def _topic_items(rng, n, n_topics, p_unparsed):
    ease = rng.random(n_topics)
    items = []
    for t in rng.integers(0, n_topics, n):
        values = {"cb_parsed": 0.0}
        if rng.random() >= p_unparsed:
            values = {"cb_parsed": 1.0, "cb_correct": float(rng.random() < ease[t])}
        items.append(ScoredItem(gold="A", pred=None, values=values, metadata={"subject": f"subject_{t:02d}"}))
    return items


def test_topic_accuracy_sums_the_topics_in_the_order_they_are_drawn():
    """The reference fills a dict as it reads a resample, so the per-topic accuracies are summed in
    the order topics first appear: on these 57 topics sorted order changes some resamples' last bit,
    and the fast form still equals the loop."""
    items = _topic_items(np.random.default_rng(303), 300, 57, 0.1)
    assert_fast_is_the_loop(items, get_metric("cb_topic_accuracy"), 200, 0)
    rng = np.random.default_rng(0)
    differs = 0
    for _ in range(200):
        by: dict[str, list[float]] = {}
        for j in rng.integers(0, len(items), size=len(items)):
            if "cb_correct" in items[j].values:
                by.setdefault(items[j].metadata["subject"], []).append(items[j].values["cb_correct"])
        differs += bool(np.mean([np.mean(v) for v in by.values()]) != np.mean([np.mean(by[t]) for t in sorted(by)]))
    assert differs > 0


def _declines(name, items, loop_runs=True):
    metric = get_metric(name)
    assert metric.resample_stats(items, 10, 0) is None, name
    if loop_runs:  # bootstrap_ci runs the loop instead
        want = rs.percentile_interval(_loop(items, metric, 40, 2))
        assert np.array_equal(np.array(bootstrap_ci(items, metric, 40, seed=2)), np.array(want), equal_nan=True)


def test_fast_forms_decline_what_they_cannot_state_exactly():
    frac = [ScoredItem(gold="x", pred="x", values={"blank_correct": v, "blank_total": 3.0}) for v in (0.5, 1.0, 2.25)]
    _declines("blank_accuracy", frac)  # fractional sums: Python's left-to-right sum is the rule
    for bad in (0.5, None, float("nan"), True):  # labels scikit-learn would not take as classes
        items = _cb_labels(np.random.default_rng(1), 30, 3, 0.0)
        items[4].values["cb_pred"] = bad
        _declines("cb_macro_f1", items, loop_runs=False)  # scikit-learn itself refuses most of these
    mixed = _cb_labels(np.random.default_rng(1), 30, 3, 0.0)
    mixed[2].values["cb_gold"] = "a"
    _declines("cb_macro_f1", mixed, loop_runs=False)
    topics = _topic_items(np.random.default_rng(2), 40, 3, 0.1)
    topics[next(k for k, i in enumerate(topics) if "cb_correct" in i.values)].values["cb_correct"] = 0.5
    _declines("cb_topic_accuracy", topics)
    strict = [ScoredItem(gold=None, pred=None, values={"strict_correct": 1.0, "strict_incorrect": 1.0})] * 3
    _declines("factuality_co_strict", strict + [ScoredItem(gold=None, pred=None, values={"strict_correct": 0.0})])


def test_a_metric_is_a_kind_and_a_finished_runs_definition_has_the_kinds_fast_form():
    with pytest.raises(ValueError, match="key= is the mean kind"):
        Metric("m", key="v", kind="label")
    m = get_metric("factuality_cga")
    assert m.to_dict()["kind"] == "grade_rate" and "fast" not in m.to_dict()  # words and values, no code
    rebuilt = Metric.from_dict(json.loads(json.dumps(m.to_dict())))  # a finished run's metric, found by its kind
    items = [ScoredItem(gold=None, pred=g) for g in ["CORRECT", "INCORRECT", "NOT_ATTEMPTED", "CORRECT"] * 10]
    assert rebuilt.implementation() is m.implementation() and rebuilt.implementation().fast is not None
    assert bootstrap_ci(items, rebuilt, 100, seed=2) == bootstrap_ci(items, m, 100, seed=2)


def test_bootstrap_cis_equal_bootstrap_ci_metric_by_metric():
    from glotbench.scoring.metrics import bootstrap_cis

    rng = np.random.default_rng(4)
    items = [ScoredItem(gold=str(g), pred=str(p) if p < 4 else None,
                        values={"exact_match": float(g == p), "strict_correct": float(g == p), "strict_incorrect": float(g != p),
                                "strict_not_attempted": 0.0}) for g, p in zip(rng.integers(0, 3, 150), rng.integers(0, 5, 150))]
    graded = [ScoredItem(gold=None, pred=g) for g in rng.choice(["CORRECT", "INCORRECT", "NOT_ATTEMPTED", "JUDGE_ERROR"], 150)]
    names = ["accuracy", "macro_f1", "mcc", "exact_match", "answered", "factuality_co_strict", "factuality_f_strict"]
    fns = [get_metric(n) for n in names]
    assert bootstrap_cis(items, fns, 300, seed=7) == [bootstrap_ci(items, f, 300, seed=7) for f in fns]
    fns = [get_metric(f"factuality_{k}") for k in ("co", "na", "in", "cga", "f")]
    assert bootstrap_cis(graded, fns, 300, seed=7) == [bootstrap_ci(graded, f, 300, seed=7) for f in fns]
    lone = bootstrap_cis(graded[:1], fns, 300)
    assert len(lone) == 5 and all(np.isnan(lo) and np.isnan(hi) for lo, hi in lone)


# ---------------------------------------------------------------- the engine (scoring/resample.py)


def test_label_sums_use_memory_by_labels_not_labels_squared():
    # 3,000 labels: a confusion matrix per resample would be 9M cells; the per-label sums are 3 x 3,000
    rng = np.random.default_rng(0)
    gold, pred = rng.integers(0, 3000, 4000), rng.integers(0, 3000, 4000)
    shapes = []

    def stat(tp, true, pred_):
        shapes.append(tp.shape)
        return rs.macro_f1_from_sums("seen")(tp, true, pred_)

    a = rs.label_sum_stats(gold, pred, 3000, stat, 20, 1, max_cells=40_000)
    assert all(rows * (4000 + 3 * 3001) <= 40_000 for rows, _ in shapes) and a.shape == (20,)
    b = rs.label_sum_stats(gold, pred, 3000, rs.macro_f1_from_sums("seen"), 20, 1)
    assert (a == b).all()


def test_pair_counts_and_three_sums_agree(monkeypatch):
    rng = np.random.default_rng(5)
    gold, pred, keep = rng.integers(0, 6, 700), rng.integers(0, 6, 700), rng.random(700) < 0.8
    for over in ("gold", "seen"):
        stat = rs.macro_f1_from_sums(over)
        pairs = rs.label_sum_stats(gold, pred, 6, stat, 120, 2, keep=keep)
        monkeypatch.setattr(rs, "PAIR_CODES", 0)
        sums = rs.label_sum_stats(gold, pred, 6, stat, 120, 2, keep=keep, max_cells=5000)
        monkeypatch.undo()
        assert np.array_equal(pairs, sums, equal_nan=True)


def test_count_memory_is_bounded_with_many_codes_and_few_items():
    shapes = []
    rs.count_stats(np.arange(3), 10_000, lambda c: shapes.append(c.shape) or c[:, 0], 50, 0, max_cells=100_000)
    assert sum(s[0] for s in shapes) == 50 and all(rows * (3 + 10_000) <= 100_000 for rows, _ in shapes)


def test_chunks_are_the_rows_of_one_draw_and_bounded():
    n, r = 37, 101
    whole = np.random.default_rng(11).integers(0, n, size=(r, n))
    chunks = list(rs.index_chunks(n, r, 11, max_cells=200))
    assert max(c.size for c in chunks) <= 200 and len(chunks) > 10
    assert (np.concatenate(chunks) == whole).all()
    # a chunk holds at least one row even when one row is bigger than the budget
    assert [c.shape for c in rs.index_chunks(500, 3, 0, max_cells=100)] == [(1, 500)] * 3


def test_chunk_size_does_not_change_the_statistics():
    rng = np.random.default_rng(1)
    gold, pred = rng.integers(0, 4, 300), rng.integers(0, 5, 300)
    a = rs.confusion_stats(gold, pred, 5, rs.macro_f1_from_confusion, 200, 3)
    b = rs.confusion_stats(gold, pred, 5, rs.macro_f1_from_confusion, 200, 3, max_cells=301)
    assert (a == b).all() and a.shape == (200,)
    v = rng.random(300)
    v[::7] = np.nan
    assert np.array_equal(rs.mean_stats(v, 90, 2), rs.mean_stats(v, 90, 2, max_cells=1000), equal_nan=True)


def test_factuality_summary_intervals_match_the_whole_matrix_draw():
    from glotbench.scoring.grades import _CODE, _rates, bootstrap_factuality_ci, normalise_grades

    grades = list(np.random.default_rng(0).choice(["CORRECT", "INCORRECT", "NOT_ATTEMPTED", "JUDGE_ERROR"], size=333))
    codes = np.array([_CODE[g] for g in normalise_grades(grades) if g in _CODE], dtype=np.int8)
    sample = codes[np.random.default_rng(3).integers(0, codes.size, size=(1000, codes.size))]  # the former code
    rates = _rates((sample == 0).sum(axis=1), (sample == 1).sum(axis=1), (sample == 2).sum(axis=1))
    got = bootstrap_factuality_ci(grades, seed=3, metrics=("CO", "NA", "IN", "CGA", "F"))
    for k, (lo, hi) in got.items():
        assert (lo, hi) == (float(np.quantile(rates[k], 0.025)), float(np.quantile(rates[k], 0.975)))


def test_factuality_table_intervals_taken_together_match_each_slice_alone():
    """by_category takes every slice's quantiles in one call (bootstrap_factuality_cis): each slice's
    interval must be what the whole-matrix draw of that slice alone gives (small slices, judge
    errors, a slice with no gradeable item, and more slices than one quantile batch holds)."""
    from glotbench.scoring import grades as fa  # the table intervals live with the grades

    rng = np.random.default_rng(11)
    labels = ["CORRECT", "INCORRECT", "NOT_ATTEMPTED", "JUDGE_ERROR"]
    grades = list(rng.choice(labels, size=700, p=[0.45, 0.3, 0.15, 0.1])) + ["JUDGE_ERROR"] * 3
    cats = [f"c{k}" for k in rng.integers(0, 40, size=700)] + ["only-errors"] * 3
    seed, n_boot = 5, 300
    for batch in (fa._CI_BATCH, 7):  # 7 rate arrays: the quantiles are taken in several batches
        old, fa._CI_BATCH = fa._CI_BATCH, batch
        try:
            table = fa.by_category(grades, cats, ci=True, n_resamples=n_boot, seed=seed)
        finally:
            fa._CI_BATCH = old
        for cat, row in table.items():
            mine = [g for g, c in zip(grades, cats) if c == cat]
            codes = np.array([fa._CODE[g] for g in fa.normalise_grades(mine) if g in fa._CODE], dtype=np.int8)
            if codes.size < 2:
                assert all(np.isnan(v).all() for v in row["ci"].values())
                continue
            sample = codes[np.random.default_rng(seed).integers(0, codes.size, size=(n_boot, codes.size))]
            rates = fa._rates((sample == 0).sum(axis=1), (sample == 1).sum(axis=1), (sample == 2).sum(axis=1))
            assert list(row["ci"]) == ["CO", "CGA", "F"]
            for k, (lo, hi) in row["ci"].items():
                assert (lo, hi) == (float(np.quantile(rates[k], 0.025)), float(np.quantile(rates[k], 0.975))), (cat, k)


def test_kept_counts_stay_within_their_byte_bound():
    """The per-resample counts kept for reuse are bounded in bytes, whatever the number of labels."""
    rng = np.random.default_rng(0)
    kept = len(rs._COUNTS)
    for k in range(5):  # 50 labels: 2,500 pair codes, 20 MB of counts each: never kept
        rs.confusion_stats(rng.integers(0, 50, 300), rng.integers(0, 50, 300), 50, lambda c: c.sum(axis=(1, 2)), 1000, k)
    assert len(rs._COUNTS) == kept
    for k in range(60):  # 10 labels: 800 KB each, 48 MB in all: the oldest are let go
        rs.confusion_stats(rng.integers(0, 10, 300), rng.integers(0, 10, 300), 10, lambda c: c.sum(axis=(1, 2)), 1000, k)
        assert rs._counts_bytes <= rs._COUNTS_BYTES
    assert sum(sum(c.nbytes for c in v) for v in rs._COUNTS.values()) == rs._counts_bytes
    codes = rng.integers(0, 4, 500)
    a = rs.count_stats(codes, 4, lambda c: c[:, 0] / c.sum(axis=1), 1000, 7)
    b = rs.count_stats(codes, 4, lambda c: c[:, 0] / c.sum(axis=1), 1000, 7)  # from the kept counts
    assert np.array_equal(a, b)
    with pytest.raises(ValueError):  # kept counts are read-only: a stat cannot change them for the next one
        rs.count_stats(codes, 4, lambda c: c.__iadd__(1)[:, 0], 1000, 7)


def test_few_code_counts_are_the_bincount():
    rng = np.random.default_rng(5)
    for k in range(1, rs.FEW_CODES + 1):
        for n in (1, 2, 37, 400):
            codes = rng.integers(0, k, n)
            idx = rng.integers(0, n, size=(53, n))
            few = rs._few_code_counts(codes.astype(np.int8), idx, k)
            assert few.dtype == np.intp and np.array_equal(few, rs._bincount_rows(codes, idx, k))


def test_codes_outside_their_range_are_not_counted_by_the_fast_path():
    with pytest.raises(ValueError):  # the bincount path refuses what the byte path would miscount
        rs.count_stats(np.array([0, 1, 5]), 4, lambda c: c[:, 0], 10, 0)


def test_intervals_taken_together_equal_one_by_one():
    rng = np.random.default_rng(2)
    same = rng.random(1000)
    stats = [rng.random(1000), same, same.copy(), None, np.where(rng.random(1000) < 0.1, np.nan, rng.random(1000)),
             rng.random(999), np.full(1000, np.nan), rng.integers(0, 3, 1000) / 3.0, rng.random(1000)]
    for alpha in (0.05, 0.1):
        got = rs.percentile_intervals(stats, alpha)
        want = [(float("nan"), float("nan")) if s is None else rs.percentile_interval(s, alpha) for s in stats]
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert np.array_equal(np.array(g), np.array(w), equal_nan=True)
            assert all(type(x) is float for x in g)


def test_codes_are_read_once_per_list_inside_a_block_and_every_time_outside():
    calls = []
    items = [1, 2, 3]

    def compute(xs):
        calls.append(len(xs))
        return sum(xs)

    assert rs.per_list(items, "s", compute) == rs.per_list(items, "s", compute) == 6 and len(calls) == 2
    with rs.same_items():
        assert rs.per_list(items, "s", compute) == 6
        with rs.same_items():  # nested: the same memo
            assert rs.per_list(items, "s", compute) == 6
        other = [1, 2, 3]
        assert rs.per_list(other, "s", compute) == 6  # an equal list is another list
        assert rs.per_list(items, "t", compute) == 6  # another name
    assert len(calls) == 5


def test_resampled_stats_is_one_draw_whatever_the_chunks():
    """The shared bootstrap (paired differences, drop rates, variant spreads, human ratings, model groups):
    rows drawn a few at a time (odd chunks: 7 items x 3 rows) are numpy's one (n_resamples, n) draw."""
    import numpy as np

    from glotbench.scoring.resample import percentile_interval, resampled_stats

    x = np.arange(7, dtype=float) ** 2
    whole = x[np.random.default_rng(3).integers(0, 7, size=(101, 7))].mean(axis=1)
    for cells in (7, 21, 10_000):
        got = resampled_stats(7, 101, 3, lambda idx: x[idx].mean(axis=1), max_cells=cells)
        assert np.array_equal(got, whole), cells
    assert percentile_interval(whole) == tuple(float(v) for v in np.quantile(whole, [0.025, 0.975]))
