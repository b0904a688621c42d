"""Bootstrap time of the metrics that filter or group items first: the per-resample loop vs the
vectorised form, interleaved in one process, on synthetic scored items.

    python bench/bootstrap_forms.py [--sizes 1000 10000] [--resamples 1000] [--reps 3]

The loop is ``metrics.loop_stats`` (the metric called on every resample: what ``bootstrap_ci`` does
for a metric without a ``fast=`` form); the form is ``bootstrap_ci`` now. Each row also says whether
both gave the same interval. The machine is shared: the ratio counts, absolutes do not.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import glotbench.plugins  # noqa: E402
glotbench.plugins.load()  # every built-in metric
import glotbench.scoring.extractive_qa_scorer  # noqa: E402,F401  no_answer_* metrics
from glotbench.scoring.metrics import ScoredItem, bootstrap_ci, get_metric, loop_stats  # noqa: E402
from glotbench.scoring.resample import percentile_interval  # noqa: E402


def labels(rng, n, gold_key, pred_key, n_labels):
    """Parsed items (90%) carry numeric gold/pred labels, 5% of preds a label no gold has."""
    out = []
    for _ in range(n):
        if rng.random() < 0.1:
            out.append(ScoredItem(gold=None, pred=None, values={"cb_parsed": 0.0}))
            continue
        g = float(rng.integers(0, n_labels))
        r = rng.random()
        p = 9.0 if r < 0.05 else (g if r < 0.7 else float(rng.integers(0, n_labels)))
        out.append(ScoredItem(gold=None, pred=None, values={"cb_parsed": 1.0, gold_key: g, pred_key: p}))
    return out


def topics(rng, n, n_topics=57):
    out = []
    for t in rng.integers(0, n_topics, n):
        values = {"cb_parsed": 0.0} if rng.random() < 0.1 else {"cb_parsed": 1.0, "cb_correct": float(rng.random() < 0.6)}
        out.append(ScoredItem(gold="A", pred=None, values=values, metadata={"subject": f"subject_{t}"}))
    return out


def no_answer(rng, n):
    return [ScoredItem(gold="x", pred=None, values={"no_answer_gold": float(rng.random() < 0.3),
                                                     "no_answer_pred": float(rng.random() < 0.35)}) for _ in range(n)]


DATA = {
    "cb_macro_f1": lambda rng, n: labels(rng, n, "cb_gold", "cb_pred", 3),
    "cb_na_macro_f1": lambda rng, n: labels(rng, n, "cb_na_gold", "cb_na_pred", 2),
    "cb_topic_accuracy": topics,
    "no_answer_accuracy": no_answer,
    "no_answer_macro_f1": no_answer,
}


def loop_ci(items, metric, n_resamples, seed=0):
    return percentile_interval(loop_stats(items, metric, n_resamples, seed))


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--reps", type=int, default=3, help="form timings per row (median); the loop runs once")
    args = ap.parse_args()
    warnings.simplefilter("ignore")  # scikit-learn's ill-defined-label warnings inside the loop
    print(f"{'metric':<20} {'n':>7} {'loop s':>8} {'form s':>8} {'ratio':>7}  same interval")
    for n in args.sizes:
        for name, make in DATA.items():
            items = make(np.random.default_rng(n), n)
            metric = get_metric(name)
            form_times = []
            t_loop, ci_loop = timed(lambda: loop_ci(items, metric, args.resamples))
            for _ in range(args.reps):
                t, ci_form = timed(lambda: bootstrap_ci(items, metric, args.resamples, seed=0))
                form_times.append(t)
            t_form = statistics.median(form_times)
            print(f"{name:<20} {n:>7} {t_loop:>8.2f} {t_form:>8.3f} {t_loop / t_form:>6.0f}x  {ci_loop == ci_form}",
                  flush=True)


if __name__ == "__main__":
    from catalog_root import build_catalog

    build_catalog()
    main()
