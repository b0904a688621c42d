"""The vectorised bootstrap gives the same intervals as the plain per-resample loop, for every built-in metric.

``reference_bootstrap_ci`` below is the implementation glotbench used before the vectorised engine
(the whole index matrix in memory for per-item means, the metric called on every resample
otherwise), kept verbatim as the plain statement of what an interval is; label metrics are
computed by scikit-learn on every resample. Every comparison is exact (==), not approximate.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import glotbench.plugins; glotbench.plugins.load()  # noqa: E702  every built-in metric
import glotbench.benchmarks.factuality.metrics_strict  # noqa: F401  factuality_*_strict
from glotbench.scoring import resample as rs
from glotbench.scoring.metrics import METRICS, Metric, ScoredItem, _labels, bootstrap_ci, get_metric
from glotbench.scoring.resample_forms import form_for


def _reference_vector_of(items, metric):
    return metric.vector(items) if isinstance(metric, Metric) else None


def reference_bootstrap_ci(items, metric, n_resamples=1000, alpha=0.05, seed=0):
    n = len(items)
    if n < 2:
        return (float("nan"), float("nan"))
    rng = np.random.default_rng(seed)
    fast = _reference_vector_of(items, metric)
    if fast is not None:
        idx = rng.integers(0, n, size=(n_resamples, n))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            stats = np.nanmean(fast[idx], axis=1)
    else:
        stats = np.array([metric([items[j] for j in rng.integers(0, n, size=n)]) for _ in range(n_resamples)])
    stats = stats[~np.isnan(stats)]
    if stats.size == 0:
        return (float("nan"), float("nan"))
    return (float(np.quantile(stats, alpha / 2)), float(np.quantile(stats, 1 - alpha / 2)))


def _sk_labels(items):
    golds, preds = _labels(items)
    return golds, preds, sorted(set(golds))


def sk_macro_f1(items):
    from sklearn.metrics import f1_score

    g, p, labels = _sk_labels(items)
    return float(f1_score(g, p, labels=labels, average="macro", zero_division=0))


def sk_weighted_f1(items):
    from sklearn.metrics import f1_score

    g, p, labels = _sk_labels(items)
    return float(f1_score(g, p, labels=labels, average="weighted", zero_division=0))


def sk_mcc(items):
    from sklearn.metrics import matthews_corrcoef

    g, p, _ = _sk_labels(items)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(matthews_corrcoef(g, p))


# The plain statement of each label metric: scikit-learn on the resample (the former implementation).
SKLEARN = {"macro_f1": sk_macro_f1, "weighted_f1": sk_weighted_f1, "mcc": sk_mcc}


def _ref_fn(name):
    return SKLEARN.get(name) or get_metric(name)


def _same(a, b):
    return all((x == y) or (np.isnan(x) and np.isnan(y)) for x, y in zip(a, b))


def _label_items(rng, n, n_classes, p_unparseable, skew):
    weights = np.array([skew**k for k in range(n_classes)], dtype=float)
    weights /= weights.sum()
    labels = [f"c{k}" for k in range(n_classes)]
    gold = rng.choice(labels, size=n, p=weights)
    items = []
    for g in gold:
        r = rng.random()
        pred = None if r < p_unparseable else (g if r < 0.6 else str(rng.choice(labels + ["other"])))
        items.append(ScoredItem(gold=str(g), pred=pred))
    return items


LABEL_CASES = [  # n, classes, unparseable rate, skew (rare classes go missing from some resamples)
    (2, 2, 0.0, 1.0), (7, 3, 0.3, 1.0), (60, 2, 0.1, 0.2), (150, 3, 0.05, 1.0),
    (200, 9, 0.1, 0.6), (300, 12, 0.0, 0.7), (500, 4, 0.2, 0.3),
]


@pytest.mark.parametrize("case", LABEL_CASES)
@pytest.mark.parametrize("name", ["accuracy", "macro_f1", "weighted_f1", "mcc", "answered"])
def test_label_metrics_match_the_plain_loop(case, name):
    n, k, unp, skew = case
    items = _label_items(np.random.default_rng(n * 31 + k), n, k, unp, skew)
    fn = get_metric(name)
    assert form_for(fn) is not None
    seed = n % 5
    ref = reference_bootstrap_ci(items, _ref_fn(name), n_resamples=150, seed=seed)
    got = bootstrap_ci(items, fn, n_resamples=150, seed=seed)
    assert _same(got, ref), (name, case, seed, got, ref)
    assert _same([fn(items)], [_ref_fn(name)(items)])  # the point value too


def test_single_class_and_all_wrong_resamples():
    items = [ScoredItem(gold="a", pred="a")] * 5 + [ScoredItem(gold="a", pred=None)] * 3 + [ScoredItem(gold="b", pred="a")]
    for name in ("macro_f1", "weighted_f1", "mcc", "accuracy"):
        fn = get_metric(name)
        assert _same(bootstrap_ci(items, fn, n_resamples=400, seed=1),
                     reference_bootstrap_ci(items, _ref_fn(name), 400, seed=1))
        assert _same([fn(items)], [_ref_fn(name)(items)])


@pytest.mark.parametrize("name", ["factuality_co", "factuality_na", "factuality_in", "factuality_cga", "factuality_f"])
def test_factuality_metrics_match_the_plain_loop(name):
    rng = np.random.default_rng(3)
    grades = rng.choice(["CORRECT", "incorrect", "NOT_ATTEMPTED", "JUDGE_ERROR", None], size=250,
                        p=[0.4, 0.3, 0.2, 0.05, 0.05])
    items = [ScoredItem(gold=None, pred=None if g is None else str(g)) for g in grades]
    fn = get_metric(name)
    assert _same(bootstrap_ci(items, fn, n_resamples=200, seed=5),
                 reference_bootstrap_ci(items, fn, n_resamples=200, seed=5))
    # only not-attempted: CGA is 0 by the reference rule, every other rate defined
    na = [ScoredItem(gold=None, pred="NOT_ATTEMPTED")] * 4
    assert _same(bootstrap_ci(na, fn, 50, seed=0), reference_bootstrap_ci(na, fn, 50, seed=0))


def _value_items(rng, n, keys, p_missing=0.1, whole=False):
    items = []
    for _ in range(n):
        vals = {}
        for key in keys:
            r = rng.random()
            if r < p_missing:
                continue
            v = float(rng.integers(0, 5)) if whole else float(rng.random() * 10)
            vals[key] = None if r < p_missing * 1.5 else v
        items.append(ScoredItem(gold="x", pred="x", values=vals))
    return items


MEAN_METRICS = sorted(name for name in METRICS.names() if get_metric(name).key is not None)


@pytest.mark.parametrize("name", MEAN_METRICS + ["mean:wb_score"])
def test_mean_metrics_match_the_plain_loop(name):
    fn = get_metric(name)
    key = fn.key
    items = _value_items(np.random.default_rng(len(name)), 173, [key])
    assert _same(bootstrap_ci(items, fn, n_resamples=250, seed=2), reference_bootstrap_ci(items, fn, 250, seed=2))
    empty = [ScoredItem(gold="x", pred="x")] * 3  # no item has the value: no interval
    assert _same(bootstrap_ci(empty, fn, 20), (float("nan"), float("nan")))


@pytest.mark.parametrize("name", ["blank_accuracy", "blank_accuracy_reference"])
def test_ratio_metrics_match_the_plain_loop(name):
    fn = get_metric(name)
    whole = _value_items(np.random.default_rng(9), 120, ["blank_correct", "blank_total", "variant_hits"], whole=True)
    assert _same(bootstrap_ci(whole, fn, 300, seed=4), reference_bootstrap_ci(whole, fn, 300, seed=4))
    # fractional values: the vectorised form declines and the loop runs (same answer by construction)
    frac = _value_items(np.random.default_rng(10), 40, ["blank_correct", "blank_total", "variant_hits"])
    assert form_for(fn)(frac, 10, 0) is None
    assert _same(bootstrap_ci(frac, fn, 60, seed=4), reference_bootstrap_ci(frac, fn, 60, seed=4))


def test_every_builtin_metric_has_a_vectorised_form():
    missing = sorted(name for name in METRICS.names() if form_for(get_metric(name)) is None)
    assert missing == []


# ---------------------------------------------------------------- metrics that filter or group items first
# Czech-Bench's reference-rule metrics (cb_macro_f1, cb_na_macro_f1, cb_topic_accuracy) and extractive
# QA's "is it unanswerable?" metrics leave some items out. Their forms are compared with the metric
# itself (scikit-learn for the cb_ macro-F1s) called on every resample, value by value.


def _plain_loop_stats(items, metric, n_resamples, seed):
    rng = np.random.default_rng(seed)
    n = len(items)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scikit-learn's "ill-defined" warnings on labels only predicted
        return np.array([metric([items[j] for j in rng.integers(0, n, size=n)]) for _ in range(n_resamples)])


def _assert_form_is_the_loop(items, name, n_resamples, seed):
    fn = get_metric(name)
    form = form_for(fn)
    assert form is not None, name
    got = form(items, n_resamples, seed)
    assert got is not None, name
    want = _plain_loop_stats(items, fn, n_resamples, seed)
    assert got.shape == want.shape
    assert np.array_equal(got, want, equal_nan=True), (name, np.flatnonzero(~((got == want) | (np.isnan(got) & np.isnan(want))))[:5])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert _same(bootstrap_ci(items, fn, n_resamples, seed=seed), reference_bootstrap_ci(items, fn, n_resamples, seed=seed))
    return got


def _cb_label_items(rng, n, n_labels, p_unparsed, p_stray, keys=("cb_gold", "cb_pred"), as_str=False):
    """Parsed items carry gold and pred (numbers, or strings); unparsed ones neither; some preds are
    labels no gold has (a model answering "7" to a 0-2 scale)."""
    items = []
    for _ in range(n):
        if rng.random() < p_unparsed:
            items.append(ScoredItem(gold=None, pred=None, values={"cb_parsed": 0.0}))
            continue
        g = float(rng.integers(0, n_labels))
        r = rng.random()
        p = float(rng.integers(10, 10 + 3 * n_labels)) if r < p_stray else (g if r < 0.6 else float(rng.integers(0, n_labels)))
        if as_str:
            g, p = f"l{int(g)}", f"l{int(p)}"
        items.append(ScoredItem(gold=None, pred=None, values={"cb_parsed": 1.0, keys[0]: g, keys[1]: p}))
    return items


CB_LABEL_CASES = [  # n, labels, unparsed rate, stray-pred rate, string labels
    (2, 2, 0.5, 0.0, False), (3, 3, 0.7, 0.2, False), (9, 2, 0.6, 0.1, False), (40, 3, 0.2, 0.1, False),
    (150, 5, 0.1, 0.05, True), (300, 3, 0.3, 0.3, False), (400, 40, 0.05, 0.5, False), (60, 1, 0.3, 0.0, False),
]


@pytest.mark.parametrize("case", CB_LABEL_CASES)
def test_cb_macro_f1_form_is_the_plain_loop(case):
    n, k, unp, stray, as_str = case
    items = _cb_label_items(np.random.default_rng(n + k), n, k, unp, stray, as_str=as_str)
    _assert_form_is_the_loop(items, "cb_macro_f1", 200, seed=n % 7)


@pytest.mark.parametrize("name", ["cb_macro_f1", "cb_topic_accuracy", "no_answer_accuracy", "no_answer_macro_f1"])
def test_resamples_with_nothing_kept_are_nan_as_in_the_loop(name):
    import glotbench.scoring.extractive_qa_scorer  # noqa: F401  registers the no_answer metrics

    kept = {"cb_macro_f1": {"cb_gold": 1.0, "cb_pred": 2.0}, "cb_topic_accuracy": {"cb_correct": 1.0},
            "no_answer_accuracy": {"no_answer_gold": 1.0}, "no_answer_macro_f1": {"no_answer_gold": 0.0, "no_answer_pred": 1.0}}[name]
    items = [ScoredItem(gold=None, pred=None, values=dict(kept), metadata={"subject": "s"})]
    items += [ScoredItem(gold=None, pred=None, values={"cb_parsed": 0.0}, metadata={"subject": "s"})] * 3
    stats = _assert_form_is_the_loop(items, name, 100, seed=0)
    assert np.isnan(stats).any() and not np.isnan(stats).all()  # (3/4)^4 of resamples draw no kept item


def test_cb_na_macro_f1_form_is_the_plain_loop():
    rng = np.random.default_rng(4)
    # SQuAD items carry cb_na_gold / cb_na_pred (0/1); items of other levels carry neither
    items = _cb_label_items(rng, 250, 2, 0.3, 0.0, keys=("cb_na_gold", "cb_na_pred"))
    _assert_form_is_the_loop(items, "cb_na_macro_f1", 200, seed=3)
    # only one decision ever made: one label in gold and predictions
    same = [ScoredItem(gold=None, pred=None, values={"cb_na_gold": 1.0, "cb_na_pred": 1.0})] * 5
    assert (_assert_form_is_the_loop(same, "cb_na_macro_f1", 30, seed=0) == 1.0).all()


def test_cb_macro_f1_form_declines_labels_scikit_learn_would_not_take():
    fn = get_metric("cb_macro_f1")
    for bad in (0.5, None, float("nan"), True):
        items = _cb_label_items(np.random.default_rng(1), 30, 3, 0.1, 0.0)
        items[4].values["cb_pred"] = bad
        assert form_for(fn)(items, 10, 0) is None, bad
    mixed = _cb_label_items(np.random.default_rng(1), 30, 3, 0.1, 0.0)
    mixed[2].values["cb_gold"] = "a"
    assert form_for(fn)(mixed, 10, 0) is None


def _topic_items(rng, n, n_topics, p_unparsed, skew=1.0):
    weights = np.array([skew**t for t in range(n_topics)])
    topics = rng.choice([f"subject_{t:02d}" for t in range(n_topics)], size=n, p=weights / weights.sum())
    ease = rng.random(n_topics)
    items = []
    for t in topics:
        values = {"cb_parsed": 0.0}
        if rng.random() >= p_unparsed:
            values = {"cb_parsed": 1.0, "cb_correct": float(rng.random() < ease[int(t[-2:])])}
        items.append(ScoredItem(gold="A", pred=None, values=values, metadata={"subject": str(t)}))
    return items


TOPIC_CASES = [  # n, topics, unparsed rate, skew (rare topics missing from some resamples)
    (2, 1, 0.5, 1.0), (5, 2, 0.6, 1.0), (30, 1, 0.2, 1.0), (80, 5, 0.1, 0.5), (300, 57, 0.1, 1.0),
    (500, 57, 0.3, 0.93), (120, 12, 0.0, 0.7),
]


@pytest.mark.parametrize("case", TOPIC_CASES)
def test_cb_topic_accuracy_form_is_the_plain_loop(case):
    n, t, unp, skew = case
    items = _topic_items(np.random.default_rng(n * 3 + t), n, t, unp, skew)
    _assert_form_is_the_loop(items, "cb_topic_accuracy", 200, seed=t % 5)


def test_topic_order_matters_so_the_comparison_can_fail():
    """The mean over topics is summed in the order topics first appear in the resample: on this
    data another order (sorted topics) changes some resamples' last bit, so the test above would catch it."""
    items = _topic_items(np.random.default_rng(303), 300, 57, 0.1)
    rng = np.random.default_rng(0)
    differs = 0
    for _ in range(200):
        by: dict[str, list[float]] = {}
        for j in rng.integers(0, len(items), size=len(items)):
            it = items[j]
            if "cb_correct" in it.values:
                by.setdefault(it.metadata["subject"], []).append(it.values["cb_correct"])
        drawn = np.mean([np.mean(v) for v in by.values()])
        ordered = np.mean([np.mean(by[t]) for t in sorted(by)])
        differs += bool(drawn != ordered)
    assert differs > 0


def test_cb_topic_accuracy_form_declines_values_other_than_0_and_1():
    items = _topic_items(np.random.default_rng(2), 40, 3, 0.1)
    items[next(k for k, i in enumerate(items) if "cb_correct" in i.values)].values["cb_correct"] = 0.5
    assert form_for(get_metric("cb_topic_accuracy"))(items, 10, 0) is None


def _no_answer_items(rng, n, p_missing, p_pred_missing, p_unanswerable):
    items = []
    for _ in range(n):
        values = {"exact_match": 1.0}
        if rng.random() >= p_missing:
            values["no_answer_gold"] = float(rng.random() < p_unanswerable)
            if rng.random() >= p_pred_missing:  # a missing pred counts "answerable"
                values["no_answer_pred"] = float(rng.random() < 0.4)
        items.append(ScoredItem(gold="x", pred=None, values=values))
    return items


NO_ANSWER_CASES = [  # n, no-gold rate, no-pred rate, unanswerable rate
    (2, 0.5, 0.0, 0.5), (6, 0.7, 0.2, 0.3), (50, 0.1, 0.1, 0.0), (50, 0.0, 0.0, 1.0), (400, 0.2, 0.1, 0.3),
]


@pytest.mark.parametrize("case", NO_ANSWER_CASES)
@pytest.mark.parametrize("name", ["no_answer_accuracy", "no_answer_macro_f1"])
def test_no_answer_forms_are_the_plain_loop(case, name):
    import glotbench.scoring.extractive_qa_scorer  # noqa: F401  registers the metrics

    n, miss, pmiss, ua = case
    items = _no_answer_items(np.random.default_rng(n + int(miss * 10)), n, miss, pmiss, ua)
    _assert_form_is_the_loop(items, name, 200, seed=n % 3)


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
    from glotbench.benchmarks.factuality.metrics import _CODE, _rates, bootstrap_factuality_ci, normalise_grades

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
    from glotbench.scoring import grades as fa

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


@pytest.mark.parametrize("name", ["factuality_co_strict", "factuality_cga_strict", "factuality_f_strict"])
def test_strict_factuality_metrics_match_the_plain_loop(name):
    rng = np.random.default_rng(8)
    items = []
    for g in rng.choice(["c", "i", "n", "err"], size=180, p=[0.4, 0.3, 0.2, 0.1]):
        vals = ({"strict_correct": None} if g == "err" else
                {"strict_correct": float(g == "c"), "strict_incorrect": float(g == "i"), "strict_not_attempted": float(g == "n")})
        items.append(ScoredItem(gold=None, pred=None, values=vals))
    fn = get_metric(name)
    assert form_for(fn) is not None
    assert _same(bootstrap_ci(items, fn, 200, seed=1), reference_bootstrap_ci(items, fn, 200, seed=1))


def test_a_finished_runs_metric_definition_gets_the_same_form():
    m = Metric.from_dict(get_metric("factuality_cga").to_dict())  # function imported lazily by reference
    items = [ScoredItem(gold=None, pred=g) for g in ["CORRECT", "INCORRECT", "NOT_ATTEMPTED", "CORRECT"] * 10]
    assert form_for(m) is not None
    assert _same(bootstrap_ci(items, m, 100, seed=2), reference_bootstrap_ci(items, m, 100, seed=2))


@pytest.mark.parametrize("name", ["cb_macro_f1", "cb_na_macro_f1", "cb_topic_accuracy", "no_answer_accuracy", "no_answer_macro_f1"])
def test_a_finished_runs_filtering_metric_gets_its_form(name):
    import glotbench.scoring.extractive_qa_scorer  # noqa: F401  registers the no_answer metrics

    m = Metric.from_dict(get_metric(name).to_dict())  # function imported by reference, params from the dict
    assert form_for(m) is not None
    items = {"cb_macro_f1": lambda: _cb_label_items(np.random.default_rng(0), 60, 3, 0.2, 0.1),
             "cb_na_macro_f1": lambda: _cb_label_items(np.random.default_rng(0), 60, 2, 0.2, 0.0, keys=("cb_na_gold", "cb_na_pred")),
             "cb_topic_accuracy": lambda: _topic_items(np.random.default_rng(0), 60, 4, 0.2),
             "no_answer_accuracy": lambda: _no_answer_items(np.random.default_rng(0), 60, 0.2, 0.1, 0.3),
             "no_answer_macro_f1": lambda: _no_answer_items(np.random.default_rng(0), 60, 0.2, 0.1, 0.3)}[name]()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert _same(bootstrap_ci(items, m, 80, seed=1), reference_bootstrap_ci(items, m, 80, seed=1))


def test_kept_counts_stay_within_their_byte_bound():
    """The per-resample counts kept for reuse are bounded in bytes, whatever the number of labels."""
    from glotbench.scoring import resample as rs

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


def test_codes_are_read_once_per_list_inside_a_block_and_every_time_outside():
    from glotbench.scoring.resample_forms import per_list, same_items

    calls = []
    items = [1, 2, 3]

    def compute(xs):
        calls.append(len(xs))
        return sum(xs)

    assert per_list(items, "s", compute) == per_list(items, "s", compute) == 6 and len(calls) == 2
    with same_items():
        assert per_list(items, "s", compute) == 6
        with same_items():  # nested: the same memo
            assert per_list(items, "s", compute) == 6
        other = [1, 2, 3]
        assert per_list(other, "s", compute) == 6  # an equal list is another list
        assert per_list(items, "t", compute) == 6  # another name
    assert len(calls) == 5
