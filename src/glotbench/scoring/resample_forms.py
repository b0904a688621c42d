"""Resample forms: how a metric turns scored items into arrays for the vectorised bootstrap.

A form is ``form(items, n_resamples, seed)``: one statistic per resample (NaN where undefined),
computed by :mod:`glotbench.scoring.resample`, or ``None`` when the data does not allow an exact
vectorised form (then ``bootstrap_ci`` calls the metric once per resample). :func:`form_for`
finds a metric's form: a metric that is the mean of a per-item value (``Metric.key`` or
``Metric.per_item``) gets :func:`mean_stats`; a corpus metric gets the form registered for its
function (``"module:function"``, see :func:`register_corpus_form`) with the metric's params. A form must give the same numbers as calling the metric on each
resample drawn by ``np.random.default_rng(seed).integers(0, n, size=n)`` in turn;
tests/test_resample.py checks every built-in metric against that plain loop.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import numpy as np

from glotbench.scoring import resample as rs

Form = Callable[[Sequence[Any], int, int], "np.ndarray | None"]


def _label_codes(items: Sequence[Any]) -> tuple[np.ndarray, np.ndarray, int]:
    from glotbench.scoring.metrics import UNPARSEABLE

    golds = [str(i.gold) for i in items]
    preds = [UNPARSEABLE if i.pred is None else str(i.pred) for i in items]
    labels = sorted(set(golds) | set(preds))  # sorted, as scikit-learn orders them
    code = {lab: k for k, lab in enumerate(labels)}
    return (np.fromiter((code[g] for g in golds), np.intp, len(golds)),
            np.fromiter((code[p] for p in preds), np.intp, len(preds)), len(labels))


def confusion_form(stat: Callable[[np.ndarray], np.ndarray]) -> Form:
    """A label metric computed from each resample's confusion matrix (gold and pred compared as strings)."""

    def form(items, n_resamples, seed):
        gold, pred, k = _label_codes(items)
        return rs.confusion_stats(gold, pred, k, stat, n_resamples, seed)

    return form


def label_point(stat: Callable[[np.ndarray], np.ndarray], golds: Sequence[Any], preds: Sequence[Any]) -> float:
    """A confusion-matrix metric on the whole set (the same arithmetic as each resample's value)."""
    if not golds:
        return float("nan")
    labels = sorted({str(g) for g in golds} | {str(p) for p in preds})
    code = {lab: k for k, lab in enumerate(labels)}
    k = len(labels)
    pair = np.fromiter((code[str(g)] * k + code[str(p)] for g, p in zip(golds, preds)), np.intp, len(golds))
    return float(stat(np.bincount(pair, minlength=k * k).reshape(1, k, k))[0])


def accuracy_form(items, n_resamples, seed):
    gold, pred, _ = _label_codes(items)
    return rs.mean_stats((gold == pred).astype(float), n_resamples, seed)


def item_values(items: Sequence[Any], key: str) -> np.ndarray:
    """``item.values[key]`` per item as floats, NaN where missing or None."""
    out = np.empty(len(items))
    for k, it in enumerate(items):
        v = it.values.get(key)
        out[k] = np.nan if v is None else v
    return out


def mean_form(key: str) -> Form:
    """The mean of a per-item value over the items that have it."""

    def form(items, n_resamples, seed):
        return rs.mean_stats(item_values(items, key), n_resamples, seed)

    return form


def _exact_sums(x: np.ndarray) -> bool:
    """Whole numbers small enough that any summation order gives the same float sum."""
    return bool(np.all(np.isfinite(x)) and np.all(x == np.round(x)) and np.abs(x).sum() < 2**52)


def ratio_of_sums_form(num_key: str, den_key: str) -> Form:
    """``sum(num) / sum(den)`` over items (missing or None counts 0). Vectorised only for whole-number
    values: the reference sums left to right in Python, which numpy matches only when sums are exact."""

    def form(items, n_resamples, seed):
        num = np.array([float(i.values.get(num_key) or 0.0) for i in items])
        den = np.array([float(i.values.get(den_key) or 0.0) for i in items])
        if not (_exact_sums(num) and _exact_sums(den)):
            return None
        return rs.ratio_stats(num, den, n_resamples, seed)

    return form


def answered_form(items, n_resamples, seed):
    """The fraction of items with a parseable answer (``pred`` not None)."""
    return rs.mean_stats(np.fromiter((i.pred is not None for i in items), float, len(items)), n_resamples, seed)


_SAME: ContextVar[dict | None] = ContextVar("glotbench_same_items", default=None)


@contextmanager
def same_items() -> Iterator[None]:
    """A block in which the item lists given to forms and metric functions do not change (a task's
    metrics over one slice: ``metrics.bootstrap_cis``, ``aggregate._metrics``): what
    :func:`per_list` computes from a list is kept for the block, by the list's identity (the list is
    held meanwhile, so no other list can take its identity). Nested blocks share the outer one."""
    if _SAME.get() is not None:
        yield
        return
    token = _SAME.set({})
    try:
        yield
    finally:
        _SAME.reset(token)


def per_list(items: Any, name: Any, compute: Callable[[Any], Any]) -> Any:
    """``compute(items)``, once per list (or other object that does not change in the block, such as
    a kept counts array) inside a :func:`same_items` block; every call outside one."""
    memo = _SAME.get()
    if memo is None:
        return compute(items)
    key = (id(items), name)
    hit = memo.get(key)
    if hit is None or hit[0] is not items:
        hit = memo[key] = (items, compute(items))
    return hit[1]


def _read_only(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False  # shared by the metrics of a block: none may change it
    return a


def category_form(code_of: Callable[[Any], int], n_codes: int, stat: Callable[[np.ndarray], np.ndarray]) -> Form:
    """A metric of per-resample category counts; ``code_of(item)`` gives each item's category."""

    def codes_of(items):
        return _read_only(np.fromiter((code_of(i) for i in items), np.intp, len(items)))

    def form(items, n_resamples, seed):
        return rs.count_stats(per_list(items, ("codes", code_of), codes_of), n_codes, stat, n_resamples, seed)

    return form


def _sklearn_plain_labels(values: list[Any]) -> bool:
    """Labels whose ``sorted(set(...))`` is scikit-learn's label order and that scikit-learn takes
    as classes: all strings, or all whole finite numbers (no bools). Anything else: no form."""
    if all(type(v) is str for v in values):
        return True
    return all(isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))
               and math.isfinite(v) and v == int(v) and abs(v) < 2**53 for v in values)


def seen_labels_macro_f1_form(gold_key: str, pred_key: str) -> Form:
    """Czech-Bench's macro-F1 (``czech_bench_rules.macro_f1_of``): scikit-learn's ``f1_score(...,
    average="macro")`` over the items carrying both values, averaged over the labels in that
    resample's gold or predictions; items without them are left out (NaN when none is left)."""

    def form(items, n_resamples, seed):
        keep = np.fromiter((gold_key in i.values and pred_key in i.values for i in items), bool, len(items))
        golds = [i.values[gold_key] for i, k in zip(items, keep) if k]
        preds = [i.values[pred_key] for i, k in zip(items, keep) if k]
        if not _sklearn_plain_labels(golds + preds):
            return None
        code = {lab: c for c, lab in enumerate(sorted(set(golds) | set(preds)))}
        gold = np.zeros(len(items), np.intp)
        pred = np.zeros(len(items), np.intp)
        gold[keep] = [code[g] for g in golds]
        pred[keep] = [code[p] for p in preds]
        return rs.label_sum_stats(gold, pred, max(len(code), 1), rs.macro_f1_from_sums("seen"), n_resamples, seed,
                                  keep=keep)

    return form


def _no_answer_codes(items: Sequence[Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """extractive QA's "is it unanswerable?" decision: codes 0 answerable, 1 unanswerable (their
    sorted order as strings); kept where the item has ``no_answer_gold``."""
    keep = np.fromiter(("no_answer_gold" in i.values for i in items), bool, len(items))
    gold = np.fromiter((k and bool(i.values["no_answer_gold"]) for i, k in zip(items, keep)), np.intp, len(items))
    pred = np.fromiter((k and bool(i.values.get("no_answer_pred")) for i, k in zip(items, keep)), np.intp, len(items))
    return gold, pred, keep


def no_answer_accuracy_form(items, n_resamples, seed):
    gold, pred, keep = _no_answer_codes(items)
    return rs.mean_stats(np.where(keep, (gold == pred).astype(float), np.nan), n_resamples, seed)


def no_answer_macro_f1_form(items, n_resamples, seed):
    gold, pred, keep = _no_answer_codes(items)
    return rs.label_sum_stats(gold, pred, 2, rs.macro_f1_from_sums("gold"), n_resamples, seed, keep=keep)


def topic_accuracy_form(items, n_resamples, seed):
    """Czech-Bench's MMLU score (``czech_bench_rules.topic_macro_accuracy``): the mean of per-topic
    accuracies over the items with ``cb_correct`` (0 or 1; anything else: no form)."""
    topics: dict[str, int] = {}
    group = np.empty(len(items), np.intp)
    hits = np.zeros(len(items), np.intp)
    for k, it in enumerate(items):
        if "cb_correct" not in it.values:
            group[k] = -1
            continue
        v = it.values["cb_correct"]
        if isinstance(v, (bool, np.bool_)) or v not in (0, 1):
            return None
        group[k] = topics.setdefault(str(it.metadata.get("subject")), len(topics))
        hits[k] = int(v == 1)
    group[group < 0] = len(topics)
    return rs.group_mean_of_means_stats(group, hits, len(topics), n_resamples, seed)


# ---------------------------------------------------------------- corpus functions -> forms

_CORPUS: dict[str, Callable[..., Form]] = {}


def register_corpus_form(ref: str, factory: Callable[..., Form]) -> None:
    """``factory(**metric.params) -> form`` for the corpus function ``ref`` ("module:function")."""
    _CORPUS[ref] = factory


def _ref_of(fn: Any) -> str | None:
    ref = getattr(fn, "ref", None)  # a finished run's lazily imported function
    if isinstance(ref, str):
        return ref
    mod, qual = getattr(fn, "__module__", None), getattr(fn, "__qualname__", None)
    return f"{mod}:{qual}" if mod and qual else None


def form_for(metric: Any) -> Form | None:
    explicit = getattr(metric, "resample", None)
    if explicit is not None:
        return explicit
    if getattr(metric, "per_item_mean", False):
        return lambda items, n_resamples, seed: rs.mean_stats(metric.vector(items), n_resamples, seed)
    factory = _CORPUS.get(_ref_of(getattr(metric, "fn", None)) or "")
    return factory(**dict(getattr(metric, "params", ()) or ())) if factory is not None else None


def _memo(item: Any, name: str, compute: Callable[[Any], Any]) -> Any:
    """``compute(item)`` once per item: a task's five factuality rates, their strict twins and every
    slice read the same items (960 bootstrap calls for 2,000 judged items), so each item's code is
    kept on it (outside its fields: equality and JSON are unchanged)."""
    memo = item.__dict__.setdefault("_resample_codes", {})
    if name not in memo:
        memo[name] = compute(item)
    return memo[name]


def _grade_of(item: Any) -> int:
    from glotbench.scoring.factuality import _CODE, JUDGE_ERROR, to_grade

    return _CODE.get(JUDGE_ERROR if item.pred is None else to_grade(item.pred), 3)


def _grade_code(item: Any) -> int:
    """0 correct, 1 incorrect, 2 not attempted, 3 judge error (left out of every rate)."""
    return _memo(item, "grade", _grade_of)


def _strict_code(item: Any) -> int | None:
    """The strict one-hot values as a grade code (3: left out); None when they are not one-hot 0/1."""
    v = item.values
    if v.get("strict_correct") is None:
        return 3
    trio = (v["strict_correct"], v.get("strict_incorrect") or 0.0, v.get("strict_not_attempted") or 0.0)
    if any(x not in (0, 1) for x in trio) or sum(trio) > 1:
        return None
    return trio.index(1) if 1 in trio else 3


def _strict_codes(items: Sequence[Any]) -> np.ndarray | None:
    codes = np.empty(len(items), dtype=np.intp)
    for k, it in enumerate(items):
        code = _memo(it, "strict", _strict_code)
        if code is None:
            return None
        codes[k] = code
    return _read_only(codes)


def _rate(key: str) -> Callable[[np.ndarray], np.ndarray]:
    def stat(k: np.ndarray) -> np.ndarray:
        from glotbench.scoring.factuality import _rates

        # The five rates of one counts array are computed together: the counts of a code array are
        # kept and shared (resample.count_stats), so inside a slice's same_items block the other
        # four rates (and the strict twins, when their codes are the same) reuse them.
        return per_list(k, "factuality rates", lambda c: _rates(c[:, 0], c[:, 1], c[:, 2]))[key]

    return stat


def factuality_form(key: str) -> Form:
    """CO / NA / IN / CGA / F from the judge grade in ``pred`` (per-resample grade counts)."""
    return category_form(_grade_code, 4, _rate(key))


def strict_factuality_form(key: str) -> Form:
    """The same from one-hot ``strict_correct / strict_incorrect / strict_not_attempted`` values
    (None: left out); declines anything that is not one-hot 0/1."""

    def form(items, n_resamples, seed):
        codes = per_list(items, "strict codes", _strict_codes)
        return None if codes is None else rs.count_stats(codes, 4, _rate(key), n_resamples, seed)

    return form


_M = "glotbench.scoring.metrics"
register_corpus_form(f"{_M}:accuracy_items", lambda: accuracy_form)
register_corpus_form(f"{_M}:macro_f1_items", lambda: confusion_form(rs.macro_f1_from_confusion))
register_corpus_form(f"{_M}:weighted_f1_items", lambda: confusion_form(rs.weighted_f1_from_confusion))
register_corpus_form(f"{_M}:mcc_items", lambda: confusion_form(rs.mcc_from_confusion))
register_corpus_form(f"{_M}:answered", lambda: answered_form)
register_corpus_form(f"{_M}:ratio_of_sums", lambda num, den: ratio_of_sums_form(num, den))
register_corpus_form("glotbench.scoring.factuality:factuality_metric", lambda key: factuality_form(key))
_CB = "glotbench.scoring.czech_bench_rules"
register_corpus_form(f"{_CB}:macro_f1_of", lambda gold_key, pred_key: seen_labels_macro_f1_form(gold_key, pred_key))
register_corpus_form(f"{_CB}:topic_macro_accuracy", lambda: topic_accuracy_form)
_QA = "glotbench.scoring.extractive_qa_scorer"
register_corpus_form(f"{_QA}:no_answer_accuracy", lambda: no_answer_accuracy_form)
register_corpus_form(f"{_QA}:no_answer_macro_f1", lambda: no_answer_macro_f1_form)
register_corpus_form("glotbench.scoring.factuality_strict:factuality_strict_metric",
                     lambda key: strict_factuality_form(key))


def _sacrebleu_form(kind: str) -> Form:
    from glotbench.scoring.text_metrics import sacrebleu_form

    return sacrebleu_form(kind)


register_corpus_form("glotbench.scoring.text_metrics:sacrebleu_corpus", _sacrebleu_form)
