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

import glotbench.builtins  # noqa: F401  every built-in metric
import glotbench.scoring.factuality_strict  # noqa: F401  factuality_*_strict
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
    # these filter or group items first and keep the per-resample loop (same interval, slower):
    # extractive QA's "is it unanswerable?" metrics and Czech-Bench's reference-rule metrics (merged late)
    assert missing == ["cb_macro_f1", "cb_na_macro_f1", "cb_topic_accuracy", "no_answer_accuracy", "no_answer_macro_f1"]


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
    from glotbench.scoring.factuality import _CODE, _rates, bootstrap_factuality_ci, normalise_grades

    grades = list(np.random.default_rng(0).choice(["CORRECT", "INCORRECT", "NOT_ATTEMPTED", "JUDGE_ERROR"], size=333))
    codes = np.array([_CODE[g] for g in normalise_grades(grades) if g in _CODE], dtype=np.int8)
    sample = codes[np.random.default_rng(3).integers(0, codes.size, size=(1000, codes.size))]  # the former code
    rates = _rates((sample == 0).sum(axis=1), (sample == 1).sum(axis=1), (sample == 2).sum(axis=1))
    got = bootstrap_factuality_ci(grades, seed=3, metrics=("CO", "NA", "IN", "CGA", "F"))
    for k, (lo, hi) in got.items():
        assert (lo, hi) == (float(np.quantile(rates[k], 0.025)), float(np.quantile(rates[k], 0.975)))


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
