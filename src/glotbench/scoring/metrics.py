"""Metrics: declared objects over scored items, and the bootstrap that puts an interval on them.

A :class:`Metric` names how it is computed (the mean of a per-item value a scorer writes, or a
corpus function over :class:`ScoredItem` s), its direction (higher or lower is better) and its
display format. Its definition (:meth:`Metric.to_dict`) goes into results.json, so reports and
comparisons of finished runs need no registry and no benchmark code. Classification metrics use
scikit-learn's definitions and arithmetic, from confusion matrices (checked against
``sklearn.metrics`` in tests/test_metric_values.py). A metric may carry its own vectorised
bootstrap form (``fast=``; docs/scorers-and-metrics.md). Built-in metrics are
registered here and by the scorers that feed them (see :mod:`glotbench.builtins`).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Literal

import numpy as np

from glotbench.scoring import resample as rs
from glotbench.scoring.resample import (
    macro_f1_from_confusion,
    mcc_from_confusion,
    percentile_interval,
    percentile_intervals,
    weighted_f1_from_confusion,
)

from glotbench.errors import TaskSpecError
from glotbench.registry import Registry

UNPARSEABLE = "<unparseable>"


@dataclass
class ScoredItem:
    gold: Any
    pred: Any  # None when the answer could not be extracted
    values: dict[str, float] = field(default_factory=dict)  # per-item scores, e.g. {"exact_match": 1.0}
    metadata: dict[str, Any] = field(default_factory=dict)


def _labels(items: list[ScoredItem]) -> tuple[list[str], list[str]]:
    golds = [str(i.gold) for i in items]
    preds = [UNPARSEABLE if i.pred is None else str(i.pred) for i in items]
    return golds, preds


def accuracy(golds: list, preds: list) -> float:
    if not golds:
        return float("nan")
    return float(np.mean([str(g) == str(p) for g, p in zip(golds, preds)]))


def _label_codes(golds: list, preds: list) -> tuple[np.ndarray, np.ndarray, int]:
    """Gold and predicted labels as codes in sorted label order (scikit-learn's), compared as strings."""
    golds = [str(g) for g in golds]
    preds = [str(p) for p in preds]
    code = {lab: k for k, lab in enumerate(sorted(set(golds) | set(preds)))}
    return (np.fromiter((code[g] for g in golds), np.intp, len(golds)),
            np.fromiter((code[p] for p in preds), np.intp, len(preds)), len(code))


def _on_confusion(stat: Callable[[np.ndarray], np.ndarray], golds: list, preds: list) -> float:
    """A confusion-matrix statistic of the whole set (each resample's arithmetic, on one matrix)."""
    if not golds:
        return float("nan")
    gold, pred, k = _label_codes(golds, preds)
    return float(stat(np.bincount(gold * k + pred, minlength=k * k).reshape(1, k, k))[0])


def _confusion_fast(stat: Callable[[np.ndarray], np.ndarray]) -> Callable[..., np.ndarray]:
    """The fast form of a confusion-matrix metric of the items' gold and pred."""

    def fast(items: list[ScoredItem], n_resamples: int, seed: int) -> np.ndarray:
        gold, pred, k = _label_codes(*_labels(items))
        return rs.confusion_stats(gold, pred, k, stat, n_resamples, seed)

    return fast


# Macro/weighted F1 and MCC are computed from the confusion matrix with scikit-learn's arithmetic
# (glotbench.scoring.resample), so a run never imports scikit-learn; tests/test_metric_values.py
# checks them against sklearn.metrics.
def macro_f1(golds: list, preds: list) -> float:
    return _on_confusion(macro_f1_from_confusion, golds, preds)


def weighted_f1(golds: list, preds: list) -> float:
    return _on_confusion(weighted_f1_from_confusion, golds, preds)


def mcc(golds: list, preds: list) -> float:
    return _on_confusion(mcc_from_confusion, golds, preds)


def accuracy_items(items: list[ScoredItem]) -> float:
    golds, preds = _labels(items)
    return accuracy(golds, preds)


def macro_f1_items(items: list[ScoredItem]) -> float:
    return macro_f1(*_labels(items))


def weighted_f1_items(items: list[ScoredItem]) -> float:
    return weighted_f1(*_labels(items))


def mcc_items(items: list[ScoredItem]) -> float:
    return mcc(*_labels(items))


def item_match(item: ScoredItem) -> float:
    """Per item: 1.0 when the prediction equals the gold (an unparseable answer is wrong)."""
    return float(item.pred is not None and str(item.pred) == str(item.gold))


def answered(items: list[ScoredItem]) -> float:
    """The share of items with a parseable answer (what HuLU reports on unlabelled splits)."""
    if not items:
        return float("nan")
    return sum(1 for i in items if i.pred is not None) / len(items)


def _answered_fast(items: list[ScoredItem], n_resamples: int, seed: int) -> np.ndarray:
    return rs.mean_stats(np.fromiter((i.pred is not None for i in items), float, len(items)), n_resamples, seed)


def ratio_of_sums(items: list[ScoredItem], num: str, den: str) -> float:
    """sum(values[num]) / sum(values[den]) over items (pooled, e.g. blanks over questions)."""
    d = sum(i.values.get(den) or 0.0 for i in items)
    return sum(i.values.get(num) or 0.0 for i in items) / d if d else float("nan")


def _exact_sums(x: np.ndarray) -> bool:
    """Whole numbers small enough that any summation order gives the same float sum."""
    return bool(np.all(np.isfinite(x)) and np.all(x == np.round(x)) and np.abs(x).sum() < 2**52)


def _ratio_of_sums_fast(items: list[ScoredItem], n_resamples: int, seed: int, num: str, den: str) -> np.ndarray | None:
    """Declines fractional values: :func:`ratio_of_sums` sums left to right in Python, which numpy
    matches only when the sums are exact."""
    nums = np.array([float(i.values.get(num) or 0.0) for i in items])
    dens = np.array([float(i.values.get(den) or 0.0) for i in items])
    if not (_exact_sums(nums) and _exact_sums(dens)):
        return None
    return rs.ratio_stats(nums, dens, n_resamples, seed)


def _mean_key(items: list[ScoredItem], key: str) -> float:
    vals = [i.values[key] for i in items if key in i.values and i.values[key] is not None]
    return float(np.mean(vals)) if vals else float("nan")


Direction = Literal["higher", "lower"]
Role = Literal["headline", "secondary", "diagnostic"]
ROLES = ("headline", "secondary", "diagnostic")


@dataclass(frozen=True, eq=False)
class Metric:
    """One declared metric: its name, how it is computed, its direction and display format.

    Either ``key`` (the mean of a per-item value a scorer writes, items without it skipped) or
    ``fn`` (a corpus function ``fn(items, **params) -> float`` over :class:`ScoredItem` s; a
    top-level function, so a finished run can name it as ``"module:function"``). ``per_item``
    (optional, with ``fn``) is the function's per-item value when the corpus value is its mean
    (accuracy: gold == prediction): paired tests and outcome counts use it.
    Calling a metric computes it: ``metric(items) -> float``.

    ``fast`` (optional, with ``fn``) is the same metric on every bootstrap resample at once:
    ``fast(items, n_resamples, seed, **params) -> array`` (NaN where undefined), or None when these
    items allow no exact vectorised form. It must equal ``fn`` called on each resample
    (:func:`loop_stats`) bit for bit. A metric that is a mean of per-item values (``key`` or
    ``per_item``) needs none: its fast form is the resampled mean (:meth:`resample_stats`).

    ``role`` says what the number is for (see :mod:`glotbench.scoring.roles`): ``headline`` a score
    a task can be ranked and compared on; ``secondary`` a breakdown or companion number (an error
    size, a not-attempted rate); ``diagnostic`` a health number such as a parse rate, never a
    headline. ``measure`` names the statistic the metric estimates (default: its name): two
    metrics of one task with the same measure are the same statistic under two rules (the
    reference's ``cb_accuracy`` and glotbench's ``accuracy``), and the one the task lists first is
    its headline. ``parsed_key`` (optional) is the per-item value, 1 or 0, saying whether the
    metric's own parse rule could read the answer: the ``*`` / ``invalid`` flags of a task whose
    headline declares it count unparseable answers by it, not by glotbench's extractor.
    ``signature`` (optional) is the reference library's own string for its settings and version
    (sacrebleu's ``nrefs:1|case:mixed|eff:no|tok:13a|...``), written into the definition;
    ``signature_of`` (optional) gives it for the items a run scored (the number of references).
    """

    name: str
    key: str | None = None
    fn: Callable[..., float] | None = None
    params: tuple[tuple[str, Any], ...] = ()
    per_item: Callable[[ScoredItem], float] | None = None
    direction: Direction = "higher"
    format: str = ".3f"
    description: str = ""
    nonnegative: bool = True  # False when values can be below 0 (MCC): no relative gaps then
    role: Role = "headline"
    measure: str = ""  # the statistic estimated; "" = the metric's name
    parsed_key: str | None = None  # per-item 1/0: parsed by this metric's own rule
    signature: str = ""  # the reference library's own signature of its settings (sacrebleu's), kept in results.json
    fast: Callable[..., np.ndarray | None] | None = None  # every resample at once; not in results.json
    # the signature for the items a run scored (sacrebleu's nrefs: 1, N or var); not in results.json itself
    signature_of: Callable[[list[ScoredItem]], str] | None = None

    def __post_init__(self) -> None:
        if (self.key is None) == (self.fn is None):
            raise ValueError(f"metric {self.name!r}: give exactly one of key= (mean of a per-item value) or fn= (corpus function)")
        if self.fast is not None and self.fn is None:
            raise ValueError(f"metric {self.name!r}: fast= goes with fn= (a mean of a per-item value is resampled as a mean)")
        if self.direction not in ("higher", "lower"):
            raise ValueError(f"metric {self.name!r}: direction must be 'higher' or 'lower', not {self.direction!r}")
        if self.role not in ROLES:
            raise ValueError(f"metric {self.name!r}: role must be one of {', '.join(ROLES)}, not {self.role!r}")
        if isinstance(self.params, dict):
            object.__setattr__(self, "params", tuple(sorted(self.params.items())))

    @property
    def higher_is_better(self) -> bool:
        return self.direction == "higher"

    @property
    def measured(self) -> str:
        """The statistic this metric estimates (``measure``, or its name)."""
        return self.measure or self.name

    @property
    def per_item_mean(self) -> bool:
        """True when the metric is the mean of one number per item (mean metrics, accuracy)."""
        return self.key is not None or self.per_item is not None

    def __call__(self, items: list[ScoredItem]) -> float:
        if self.key is not None:
            return _mean_key(items, self.key)
        return float(self.fn(items, **dict(self.params)))

    def item_value(self, item: ScoredItem) -> float | None:
        """The per-item number this metric averages (None: the item has none, or a corpus metric)."""
        if self.key is not None:
            v = item.values.get(self.key)
        elif self.per_item is not None:
            v = self.per_item(item)
        else:
            return None
        try:
            v = None if v is None else float(v)
        except (TypeError, ValueError):
            return None
        return None if v is None or math.isnan(v) else v

    def vector(self, items: list[ScoredItem]) -> np.ndarray | None:
        """Per-item values (NaN where missing) when the metric is their mean, else None."""
        if not self.per_item_mean:
            return None
        return np.array([np.nan if (v := self.item_value(i)) is None else v for i in items], dtype=float)

    def resample_stats(self, items: list[ScoredItem], n_resamples: int, seed: int) -> np.ndarray | None:
        """The metric on every resample at once (its ``fast`` form, or the mean of its per-item
        values); None when it has no fast form for these items."""
        if self.fast is not None:
            return self.fast(items, n_resamples, seed, **dict(self.params))
        if self.per_item_mean:
            return rs.mean_stats(self.vector(items), n_resamples, seed)
        return None

    def to_dict(self) -> dict[str, Any]:
        """The definition results.json carries, so finished runs are read without this registry."""
        d: dict[str, Any] = {"name": self.name}
        if self.key is not None:
            d["kind"], d["key"] = "mean", self.key
        else:
            d["kind"], d["function"] = "corpus", _ref(self.fn, self.name)
            if self.params:
                d["params"] = dict(self.params)
            if self.per_item is not None:
                d["per_item"] = _ref(self.per_item, self.name)
        d["direction"] = self.direction
        d["role"] = self.role
        if self.measure:
            d["measure"] = self.measure
        if self.parsed_key:
            d["parsed_key"] = self.parsed_key
        d["format"] = self.format
        if not self.nonnegative:
            d["nonnegative"] = False
        if self.description:
            d["description"] = self.description
        if self.signature:
            d["signature"] = self.signature
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Metric":
        """Rebuild a metric from its results.json definition (corpus functions are imported lazily)."""
        common = dict(name=str(d.get("name", "?")), direction=d.get("direction", "higher"),
                      format=d.get("format", ".3f"), description=d.get("description", ""),
                      nonnegative=bool(d.get("nonnegative", True)), role=d.get("role", "headline"),
                      measure=str(d.get("measure") or ""), parsed_key=d.get("parsed_key") or None,
                      signature=str(d.get("signature") or ""))
        if d.get("kind") == "mean":
            return cls(key=str(d["key"]), **common)
        return cls(fn=_LazyRef(str(d["function"]), str(d.get("name") or "")),
                   params=tuple(sorted((d.get("params") or {}).items())),
                   per_item=_LazyRef(d["per_item"]) if d.get("per_item") else None, **common)

    def same_as(self, other: "Metric") -> bool:
        return self.to_dict() == other.to_dict()


class _LazyRef:
    """A ``"module:function"`` imported on first call (a finished run's corpus metric). A function
    that moved to another module since the run was written is found through the metric registered
    under the run's metric name when its function has the same name (a run written before
    benchmarks became packages names ``glotbench.scoring.factuality:factuality_metric``)."""

    def __init__(self, ref: str, name: str = ""):
        self.ref = ref
        self.name = name
        self._fn: Callable | None = None

    def __call__(self, *args, **kw):
        if self._fn is None:
            from glotbench.registry import import_ref

            try:
                self._fn = import_ref(self.ref, where="results.json metric definition", error=TaskSpecError)
            except TaskSpecError:
                moved = self._moved()
                if moved is None:
                    raise
                self._fn = moved
        return self._fn(*args, **kw)

    def _moved(self) -> Callable | None:
        from glotbench.registry import ref_of

        if not self.name or self.name not in METRICS:
            return None
        fn = METRICS.get(self.name).fn
        now = ref_of(fn) if fn is not None and not isinstance(fn, _LazyRef) else None
        return fn if now and now.partition(":")[2] == self.ref.partition(":")[2] else None


def _ref(fn: Any, name: str) -> str:
    if isinstance(fn, _LazyRef):
        return fn.ref
    from glotbench.registry import ref_of

    ref = ref_of(fn)
    if ref is None:
        raise ValueError(f"metric {name!r}: its function must be a module-level function (got {fn!r})")
    return ref


def mean_of(value_name: str, name: str | None = None, direction: Direction = "higher", format: str = ".3f",
            **kw: Any) -> Metric:
    """The mean of a per-item value (exact match, numeric match, judge score...); ``kw``: role, measure, ..."""
    return Metric(name=name or f"mean:{value_name}", key=value_name, direction=direction, format=format, **kw)


def ratio_of(name: str, num: str, den: str, **kw: Any) -> Metric:
    """``sum(values[num]) / sum(values[den])`` over the items, with its fast form; ``kw``: role, measure, ..."""
    return Metric(name=name, fn=ratio_of_sums, params={"num": num, "den": den}, fast=_ratio_of_sums_fast, **kw)


def _coerce_metric(obj: Any, name: str, where: str) -> Metric:
    if isinstance(obj, Metric):
        return obj
    prefix = f"{where}: " if where else ""
    raise TaskSpecError(f"{prefix}{name!r} is not a glotbench Metric (declare it with glotbench.scoring.metrics.Metric)")


METRICS: Registry[Metric] = Registry("metric", coerce=_coerce_metric, same=lambda a, b: a.same_as(b), error=TaskSpecError)


def register_metric(name_or_metric: "str | Metric", fn: Callable[[list[ScoredItem]], float] | None = None, **kw: Any) -> Metric:
    """Register a :class:`Metric` (or, old style, a name and a module-level corpus function)."""
    if isinstance(name_or_metric, Metric):
        metric = name_or_metric
    elif isinstance(fn, Metric):
        metric = fn if fn.name == name_or_metric else dataclasses.replace(fn, name=name_or_metric)
    else:
        metric = Metric(name=name_or_metric, fn=fn, **kw)
    return METRICS.register(metric.name, metric)


def get_metric(name: str, *, where: str = "") -> Metric:
    """A registered metric, ``mean:<key>``, or a ``"module:attr"`` Metric; TaskSpecError otherwise."""
    if name.startswith("mean:"):
        return mean_of(name.split(":", 1)[1])
    return METRICS.resolve(name, where=where)


for _m in (
    Metric("accuracy", fn=accuracy_items, per_item=item_match, description="gold == prediction"),
    Metric("macro_f1", fn=macro_f1_items, fast=_confusion_fast(macro_f1_from_confusion),
           description="macro-averaged F1 over the gold labels (scikit-learn)"),
    Metric("weighted_f1", fn=weighted_f1_items, fast=_confusion_fast(weighted_f1_from_confusion),
           description="support-weighted F1 over the gold labels (scikit-learn)"),
    Metric("mcc", fn=mcc_items, fast=_confusion_fast(mcc_from_confusion), nonnegative=False,
           description="Matthews correlation coefficient (scikit-learn)"),
    Metric("answered", fn=answered, fast=_answered_fast, role="diagnostic", description="share of items with a parseable answer"),
    mean_of("exact_match", "exact_match"),
    mean_of("numeric_match", "numeric_match", measure="accuracy"),
    mean_of("abs_error", "abs_error", direction="lower", format=".4g", role="secondary"),
    mean_of("rel_error", "rel_error", direction="lower", format=".4g", role="secondary"),
    Metric("accuracy_norm", key="correct_norm", measure="accuracy", description="--mode loglikelihood: the option "
           "with the highest log-probability per character of the option as scored (lm-eval's acc_norm)"),
    Metric("accuracy_norm_bytes", key="correct_norm_bytes", measure="accuracy", role="secondary",
           description="--mode loglikelihood: the option with the highest log-probability per UTF-8 byte of the "
           "option as scored"),
    Metric("accuracy_norm_tokens", key="correct_norm_tokens", measure="accuracy", role="secondary",
           description="--mode loglikelihood: the option with the highest log-probability per token of the "
           "continuation as the backend scored it"),
):
    register_metric(_m)


def loop_stats(items: list[ScoredItem], metric: Callable[[list[ScoredItem]], float], n_resamples: int,
               seed: int) -> np.ndarray:
    """The metric called on each resample in turn, resample r being ``items[j] for j in
    np.random.default_rng(seed).integers(0, n, size=n)``, the r-th draw: what an interval is, and
    what every fast form must equal."""
    n = len(items)
    rng = np.random.default_rng(seed)
    return np.array([metric([items[j] for j in rng.integers(0, n, size=n)]) for _ in range(n_resamples)])


def bootstrap_stats(items: list[ScoredItem], metric: Callable[[list[ScoredItem]], float], n_resamples: int = 1000,
                    seed: int = 0) -> np.ndarray | None:
    """The metric on each of ``n_resamples`` resamples of the items (drawn with replacement); None
    below two items.

    A :class:`Metric` with a fast form (:meth:`Metric.resample_stats`: per-item means, or its
    ``fast``) is computed for all resamples at once in bounded memory; any other metric, or one whose
    fast form declines these items, is called once per resample (:func:`loop_stats`). Both draw the
    same indices, so a given seed gives the same statistics either way.
    """
    if len(items) < 2:
        return None
    stats = metric.resample_stats(items, n_resamples, seed) if isinstance(metric, Metric) else None
    return loop_stats(items, metric, n_resamples, seed) if stats is None else stats


def bootstrap_ci(
    items: list[ScoredItem],
    metric: Callable[[list[ScoredItem]], float],
    n_resamples: int = 1000,
    alpha: float = 0.05,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap interval (resampling items with replacement; see :func:`bootstrap_stats`)."""
    stats = bootstrap_stats(items, metric, n_resamples, seed)
    return (float("nan"), float("nan")) if stats is None else percentile_interval(stats, alpha)


def bootstrap_cis(items: list[ScoredItem], metrics: list[Callable[[list[ScoredItem]], float]], n_resamples: int = 1000,
                  alpha: float = 0.05, seed: int = 0) -> list[tuple[float, float]]:
    """:func:`bootstrap_ci` of several metrics over the same items (the same numbers; their
    quantiles taken together, and the items' codes read once: see ``resample.same_items``)."""
    with rs.same_items():
        stats = [bootstrap_stats(items, m, n_resamples, seed) for m in metrics]
    return percentile_intervals(stats, alpha)
