"""Metrics: declared objects over scored items, and the bootstrap that puts an interval on them.

A :class:`Metric` is a kind of :mod:`glotbench.scoring.metric_kinds` with its parameters (the mean of
a per-item value a scorer writes, label metrics, pooled ratios ...), its direction and display format;
its definition goes into results.json as data, so reports and comparisons of finished runs recompute it
by name and import no benchmark code. Classification metrics use scikit-learn's definitions and
arithmetic, from confusion matrices (checked against ``sklearn.metrics`` in
tests/test_metric_values.py). The generic kinds ``mean``, ``ratio``, ``group_mean`` and ``label`` and
the built-in metrics over them are registered here.
"""

from __future__ import annotations

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
from glotbench.scoring.metric_kinds import (
    GENERIC_KINDS,
    METRIC_KINDS,
    MetricKind,
    by_stat,
    migrate_definition,
    register_kind,
)

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


# Macro/weighted F1 and MCC are computed from the confusion matrix with scikit-learn's arithmetic
# (glotbench.scoring.resample), so a run never imports scikit-learn; tests/test_metric_values.py
# checks them against sklearn.metrics.
def macro_f1(golds: list, preds: list) -> float:
    return _on_confusion(macro_f1_from_confusion, golds, preds)


def weighted_f1(golds: list, preds: list) -> float:
    return _on_confusion(weighted_f1_from_confusion, golds, preds)


def mcc(golds: list, preds: list) -> float:
    return _on_confusion(mcc_from_confusion, golds, preds)


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
    """One declared metric: its name, its kind and parameters, direction, role and display format
    (each field: docs/scorers-and-metrics.md). ``key=`` is the mean of that per-item value (kind
    ``mean``); else ``kind`` (a :mod:`~glotbench.scoring.metric_kinds` name, or a package's
    :class:`MetricKind`) with ``params``. Its definition in results.json (:meth:`to_dict`) is those
    words and values, so any later process recomputes it by the kind's name. ``metric(items) ->
    float``; a kind's per-item form gives paired tests their per-item values, its fast form every
    bootstrap resample at once (:meth:`resample_stats`). ``signature_of`` (not stored) gives the
    reference library's signature for the items a run scored (sacrebleu's number of references).
    """

    name: str
    key: str | None = None
    kind: "str | MetricKind" = ""
    params: tuple[tuple[str, Any], ...] = ()
    direction: Direction = "higher"
    format: str = ".3f"
    description: str = ""
    nonnegative: bool = True  # False when values can be below 0 (MCC): no relative gaps then
    role: Role = "headline"
    measure: str = ""  # the statistic estimated; "" = the metric's name
    parsed_key: str | None = None  # per-item 1/0: parsed by this metric's own rule
    signature: str = ""  # the reference library's own signature of its settings (sacrebleu's), kept in results.json
    # the signature for the items a run scored (sacrebleu's nrefs: 1, N or var); not in results.json itself
    signature_of: Callable[[list[ScoredItem]], str] | None = None

    def __post_init__(self) -> None:
        params = dict(self.params)
        if isinstance(self.kind, MetricKind):
            self.__dict__["_impl"] = self.kind
            object.__setattr__(self, "kind", self.kind.name)
        if self.key is not None:
            if self.kind not in ("", "mean"):
                raise ValueError(f"metric {self.name!r}: key= is the mean kind, not {self.kind!r}")
            object.__setattr__(self, "kind", "mean")
            params["key"] = self.key
        elif self.kind == "mean" and "key" in params:
            object.__setattr__(self, "key", str(params["key"]))
        elif not self.kind or self.kind == "mean":
            raise ValueError(f"metric {self.name!r}: give key= (mean of a per-item value) or kind= with its params")
        if self.direction not in ("higher", "lower"):
            raise ValueError(f"metric {self.name!r}: direction must be 'higher' or 'lower', not {self.direction!r}")
        if self.role not in ROLES:
            raise ValueError(f"metric {self.name!r}: role must be one of {', '.join(ROLES)}, not {self.role!r}")
        object.__setattr__(self, "params", tuple(sorted(params.items())))

    @property
    def higher_is_better(self) -> bool:
        return self.direction == "higher"

    @property
    def measured(self) -> str:
        """The statistic this metric estimates (``measure``, or its name)."""
        return self.measure or self.name

    def implementation(self) -> MetricKind | None:
        """The kind's implementation: registered under its name, or (a plugin's kind in a file,
        read in a process where the plugin is installed) that of the registered metric of this
        name; None when neither is here."""
        if "_impl" not in self.__dict__:
            impl = None
            if self.kind in METRIC_KINDS:
                impl = METRIC_KINDS.get(self.kind)
            elif self.name in METRICS:
                reg = METRICS.get(self.name)
                if reg is not self and self.kind in (reg.kind, self.name) and reg.available:
                    impl = reg.implementation()
            self.__dict__["_impl"] = impl
        return self.__dict__["_impl"]

    @property
    def available(self) -> bool:
        """True when this process can compute the metric (a benchmark's kind needs its package)."""
        return self.key is not None or self.implementation() is not None

    def _required(self) -> MetricKind:
        impl = self.implementation()
        if impl is None:
            raise TaskSpecError(f"metric {self.name!r}: its kind {self.kind!r} is not installed here (a benchmark "
                                "package's kind); its stored value and interval are all there is")
        return impl

    def _per_item_fn(self) -> Callable[[ScoredItem], Any] | None:
        if "_per_item" not in self.__dict__:
            impl = self.implementation()
            self.__dict__["_per_item"] = (impl.per_item(**dict(self.params))
                                          if impl is not None and impl.per_item is not None else None)
        return self.__dict__["_per_item"]

    @property
    def per_item_mean(self) -> bool:
        """True when the metric is the mean of one number per item (mean metrics, accuracy)."""
        return self.key is not None or self._per_item_fn() is not None

    def __call__(self, items: list[ScoredItem]) -> float:
        if self.key is not None:
            return _mean_key(items, self.key)
        return float(self._required().fn(items, **dict(self.params)))

    def item_value(self, item: ScoredItem) -> float | None:
        """The per-item number this metric averages (None: the item has none, or a corpus metric)."""
        if self.key is not None:
            v = item.values.get(self.key)
        elif (per_item := self._per_item_fn()) is not None:
            v = per_item(item)
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
        """The metric on every resample at once (the mean of its per-item values, or its kind's
        fast form); None when it has no fast form for these items."""
        if self.per_item_mean:
            return rs.mean_stats(self.vector(items), n_resamples, seed)
        impl = self.implementation()
        if impl is not None and impl.fast is not None:
            return impl.fast(items, n_resamples, seed, **dict(self.params))
        return None

    def to_dict(self) -> dict[str, Any]:
        """The definition results.json carries: words and values, no code."""
        d: dict[str, Any] = {"name": self.name, "kind": self.kind, "params": dict(self.params),
                             "direction": self.direction, "role": self.role}
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
        """Rebuild a metric from its results.json definition, of any version (:func:`migrate_definition`)."""
        d = migrate_definition(d)
        return cls(name=str(d.get("name", "?")), kind=str(d.get("kind") or ""), params=dict(d.get("params") or {}),
                   direction=d.get("direction", "higher"), format=d.get("format", ".3f"),
                   description=d.get("description", ""), nonnegative=bool(d.get("nonnegative", True)),
                   role=d.get("role", "headline"), measure=str(d.get("measure") or ""),
                   parsed_key=d.get("parsed_key") or None, signature=str(d.get("signature") or ""))

    def same_as(self, other: "Metric") -> bool:
        return self.to_dict() == other.to_dict()


def mean_of(value_name: str, name: str | None = None, direction: Direction = "higher", format: str = ".3f",
            **kw: Any) -> Metric:
    """The mean of a per-item value (exact match, numeric match, judge score...); ``kw``: role, measure, ..."""
    return Metric(name=name or f"mean:{value_name}", key=value_name, direction=direction, format=format, **kw)


def ratio_of(name: str, num: str, den: str, **kw: Any) -> Metric:
    """``sum(values[num]) / sum(values[den])`` over the items (kind ``ratio``); ``kw``: role, measure, ..."""
    return Metric(name=name, kind="ratio", params={"num": num, "den": den}, **kw)


def _own_kind(metric: Metric) -> Metric:
    """Register a package's kind a metric carries (a :class:`MetricKind`) under the kind's name, so a
    finished run naming it finds it."""
    impl = metric.__dict__.get("_impl")
    if impl is not None and impl.name not in GENERIC_KINDS and impl.name not in METRIC_KINDS._lazy \
            and METRIC_KINDS._items.get(impl.name) is not impl:  # another kind under a taken name: RegistryError
        register_kind(impl)
    return metric


def _coerce_metric(obj: Any, name: str, where: str) -> Metric:
    if isinstance(obj, Metric):
        return _own_kind(obj)
    prefix = f"{where}: " if where else ""
    raise TaskSpecError(f"{prefix}{name!r} is not a glotbench Metric (declare it with glotbench.scoring.metrics.Metric)")


METRICS: Registry[Metric] = Registry("metric", coerce=_coerce_metric, same=lambda a, b: a.same_as(b), error=TaskSpecError)


def register_metric(metric: Metric) -> Metric:
    """Register a :class:`Metric` (and a package's kind it carries)."""
    return METRICS.register(metric.name, _own_kind(metric))


def get_metric(name: str, *, where: str = "") -> Metric:
    """A registered metric, ``mean:<key>``, or a ``"module:attr"`` Metric; TaskSpecError otherwise."""
    if name.startswith("mean:"):
        return mean_of(name.split(":", 1)[1])
    return METRICS.resolve(name, where=where)


# ---------------------------------------------------------------- the generic kinds defined here
# Macro-F1 over the labels seen in two per-item values (a reference rule's labels: Czech-Bench's cb_*),
# scikit-learn's ``f1_score(..., average="macro")`` on the items carrying both, and its every-resample form.
def macro_f1_of(items: list[ScoredItem], gold_key: str, pred_key: str) -> float:
    """Macro-F1 over the items that carry both values, labels = those seen in either list
    (what ``evaluate``'s ``f1`` with ``average="macro"`` computes through scikit-learn)."""
    pairs = [(i.values[gold_key], i.values[pred_key]) for i in items if gold_key in i.values and pred_key in i.values]
    if not pairs:
        return float("nan")
    g, p = zip(*pairs)
    from sklearn.metrics import f1_score  # the reference's own call; imported when a Czech-Bench F1 is computed

    return float(f1_score(list(g), list(p), average="macro"))


def _sklearn_plain_labels(values: list) -> bool:
    """Labels whose ``sorted(set(...))`` is scikit-learn's label order and that scikit-learn takes
    as classes: all strings, or all whole finite numbers (no bools). Anything else: no fast form."""
    if all(type(v) is str for v in values):
        return True
    return all(isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))
               and math.isfinite(v) and v == int(v) and abs(v) < 2**53 for v in values)


def macro_f1_of_fast(items: list[ScoredItem], n_resamples: int, seed: int, gold_key: str,
                     pred_key: str) -> np.ndarray | None:
    """:func:`macro_f1_of` on every resample: per-label sums over the items carrying both values,
    averaged over the labels in that resample's gold or predictions (NaN when no item is left)."""
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
    return rs.label_sum_stats(gold, pred, max(len(code), 1), rs.macro_f1_from_sums("seen"), n_resamples, seed, keep=keep)


def _confusion_fast(stat: Callable[[np.ndarray], np.ndarray]) -> Callable[..., np.ndarray]:
    def fast(items: list[ScoredItem], n_resamples: int, seed: int) -> np.ndarray:
        gold, pred, k = _label_codes(*_labels(items))
        return rs.confusion_stats(gold, pred, k, stat, n_resamples, seed)

    return fast


def _keyed(plain: Callable, keyed: Callable) -> Callable:
    """Over (gold, pred), or over two per-item values when ``gold_key`` / ``pred_key`` are given."""
    return lambda items, *a, gold_key=None, pred_key=None: (plain(items, *a) if gold_key is None
                                                            else keyed(items, *a, gold_key, pred_key))


register_kind(by_stat("label", {
    "accuracy": (lambda items: accuracy(*_labels(items)), None, item_match),
    "macro_f1": (_keyed(lambda items: macro_f1(*_labels(items)), macro_f1_of),
                 _keyed(_confusion_fast(macro_f1_from_confusion), macro_f1_of_fast)),
    "weighted_f1": (lambda items: weighted_f1(*_labels(items)), _confusion_fast(weighted_f1_from_confusion)),
    "mcc": (lambda items: mcc(*_labels(items)), _confusion_fast(mcc_from_confusion)),
    "answered": (answered, _answered_fast),
}))
register_kind(MetricKind("mean", fn=lambda items, key: _mean_key(items, key)))
register_kind(MetricKind("ratio", fn=ratio_of_sums, fast=_ratio_of_sums_fast))


def group_mean(items: list[ScoredItem], key: str, group: str) -> float:
    """The mean over groups (``metadata[group]``) of the mean of ``values[key]`` in each (MMLU's mean of
    per-topic accuracies); items without the value left out, groups with none too."""
    by_group: dict[str, list[float]] = {}
    for i in items:
        if key in i.values:
            by_group.setdefault(str(i.metadata.get(group)), []).append(i.values[key])
    return float(np.mean([np.mean(v) for v in by_group.values()])) if by_group else float("nan")


def _group_mean_fast(items: list[ScoredItem], n_resamples: int, seed: int, key: str, group: str) -> np.ndarray | None:
    """:func:`group_mean` on every resample, the groups averaged in the order they first appear in the
    resample (as the dict fills); declines values other than 0 and 1."""
    groups: dict[str, int] = {}
    code = np.empty(len(items), np.intp)
    hits = np.zeros(len(items), np.intp)
    for k, it in enumerate(items):
        if key not in it.values:
            code[k] = -1
            continue
        v = it.values[key]
        if isinstance(v, (bool, np.bool_)) or v not in (0, 1):
            return None
        code[k] = groups.setdefault(str(it.metadata.get(group)), len(groups))
        hits[k] = int(v == 1)
    code[code < 0] = len(groups)
    return rs.group_mean_of_means_stats(code, hits, len(groups), n_resamples, seed)


register_kind(MetricKind("group_mean", fn=group_mean, fast=_group_mean_fast))


def label_metric(name: str, stat: str, **kw: Any) -> Metric:
    return Metric(name, kind="label", params={"stat": stat}, **kw)


for _m in (
    label_metric("accuracy", "accuracy", description="gold == prediction"),
    label_metric("macro_f1", "macro_f1", description="macro-averaged F1 over the gold labels (scikit-learn)"),
    label_metric("weighted_f1", "weighted_f1", description="support-weighted F1 over the gold labels (scikit-learn)"),
    label_metric("mcc", "mcc", nonnegative=False, description="Matthews correlation coefficient (scikit-learn)"),
    label_metric("answered", "answered", role="diagnostic", description="share of items with a parseable answer"),
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
