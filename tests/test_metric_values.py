"""Every registered metric, checked by value against an independent oracle (tests/value_oracles.py).

* the coverage test enumerates the live registry and fails naming every metric without an oracle;
* per metric, on item lists hypothesis generates: the metric's value equals the oracle's, and its
  bootstrap interval (the vectorised resample form where it has one) equals the percentile
  interval of the oracle called on each resample drawn as ``bootstrap_ci`` documents
  (``np.random.default_rng(seed).integers(0, n, size=n)`` in turn);
* the leaderboard's own scoring (``leaderboard/scoring.py``: its confusion-matrix bootstrap) against
  the same oracles.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from glotbench.scoring.metrics import METRICS, bootstrap_ci, get_metric
from value_oracles import METRIC_ORACLES, label_items, same

FEW = settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
FEWER = settings(max_examples=15, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])


def registered() -> list[str]:
    return METRICS.names()


def test_every_registered_metric_has_a_value_oracle():
    missing = [n for n in registered() if n not in METRIC_ORACLES]
    assert not missing, ("registered metrics without a value oracle in tests/value_oracles.py "
                         f"(add an independent re-statement for each): {missing}")
    stale = [n for n in METRIC_ORACLES if n not in registered()]
    assert not stale, f"oracles for metrics no longer registered: {stale}"


def oracle_loop_interval(items, oracle, n_resamples: int, seed: int, alpha: float = 0.05):
    """The percentile bootstrap, plainly: one resample at a time, the oracle on each."""
    n = len(items)
    if n < 2:
        return (float("nan"), float("nan"))
    rng = np.random.default_rng(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        stats = [oracle([items[j] for j in rng.integers(0, n, size=n)]) for _ in range(n_resamples)]
    stats = np.array([s for s in stats if not np.isnan(s)])
    if stats.size == 0:
        return (float("nan"), float("nan"))
    return (float(np.quantile(stats, alpha / 2)), float(np.quantile(stats, 1 - alpha / 2)))


NAMES = sorted(METRIC_ORACLES)


@pytest.mark.parametrize("name", NAMES)
def test_metric_value_equals_its_oracle(name):
    oracle = METRIC_ORACLES[name]
    metric = get_metric(name)

    @FEW
    @given(oracle.items)
    def check(items):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got, want = metric(items), oracle.compute(items)
        assert same(got, want), (name, got, want, oracle.source)

    check()


@pytest.mark.parametrize("name", NAMES)
def test_bootstrap_interval_equals_the_oracle_on_each_resample(name):
    oracle = METRIC_ORACLES[name]
    metric = get_metric(name)

    @FEWER
    @given(oracle.items.filter(lambda xs: len(xs) >= 2), st.integers(0, 3))
    def check(items, seed):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = bootstrap_ci(items, metric, n_resamples=40, seed=seed)
        want = oracle_loop_interval(items, oracle.compute, 40, seed)
        assert same(got[0], want[0]) and same(got[1], want[1]), (name, got, want, oracle.source)

    check()


# ---------------------------------------------------------------- the leaderboard's scoring


def _gold_preds(items):
    gold = {f"i{k:03d}": str(it.gold) for k, it in enumerate(items)}
    preds = {f"i{k:03d}": it.pred for k, it in enumerate(items) if it.pred is not None}
    return gold, preds


@pytest.mark.parametrize("name", ["accuracy", "mcc", "weighted_f1", "macro_f1"])
def test_leaderboard_scores_and_intervals_equal_the_oracle(name):
    pytest.importorskip("sqlalchemy")
    from glotbench.leaderboard.scoring import leaderboard_metrics, score_interval, score_predictions

    assert name in leaderboard_metrics()
    oracle = METRIC_ORACLES[name]

    @FEWER
    @given(label_items(min_size=2, max_size=30), st.integers(0, 3))
    def check(items, seed):
        gold, preds = _gold_preds(items)
        # the leaderboard orders items by id; a missing prediction is unparseable
        ordered = [items[int(k[1:])] for k in sorted(gold)]
        assert same(score_predictions(gold, preds, name), oracle.compute(ordered))
        lo, hi = score_interval(gold, preds, name, n_resamples=40, seed=seed)
        want = oracle_loop_interval(ordered, oracle.compute, 40, seed)
        got = (float("nan") if lo is None else lo, float("nan") if hi is None else hi)
        assert same(got[0], want[0]) and same(got[1], want[1]), (name, got, want)

    check()
