"""Metric kinds: how a metric is computed, named by a word results.json stores with its parameters
(``{"kind": "label", "params": {"stat": "macro_f1"}}``), so a finished run names no Python code and a
later process recomputes any metric by the kind's name. The generic layer implements a closed
vocabulary (:data:`GENERIC_KINDS`, each in the module that owns its arithmetic; the table of kinds and
parameters: docs/scorers-and-metrics.md). A computation that is one package's knowledge is a kind that
package names ``<package>.<kind>`` and registers (``bench.metric_kind``, or ``register_metric`` of a
metric carrying it); a reader without it shows the stored value and interval.

A kind is ``fn(items, **params) -> float``, optionally ``fast(items, n_resamples, seed, **params)``
(every bootstrap resample at once, bit for bit the loop; None where it declines) and
``per_item(**params)`` giving the per-item function when the corpus value is its mean (else None).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from glotbench.errors import TaskSpecError
from glotbench.registry import Registry

GENERIC_KINDS = ("mean", "ratio", "group_mean", "label", "no_answer", "grade_rate", "text", "calibration", "perplexity")


@dataclass(frozen=True, eq=False)
class MetricKind:
    """One way of computing a metric from scored items, with its parameters given at call time."""

    name: str
    fn: Callable[..., float]
    fast: Callable[..., Any] | None = None
    per_item: Callable[..., Callable[[Any], float] | None] | None = None
    stats: dict[str, tuple] | None = None  # by_stat's table: stat -> (fn, fast or None[, per_item])


def _coerce_kind(obj: Any, name: str, where: str) -> MetricKind:
    if isinstance(obj, MetricKind):
        return obj
    raise TaskSpecError(f"{where + ': ' if where else ''}{name!r} is not a glotbench MetricKind")


METRIC_KINDS: Registry[MetricKind] = Registry("metric kind", coerce=_coerce_kind, error=TaskSpecError)


def register_kind(kind: MetricKind) -> MetricKind:
    """Register a kind. A generic kind's name is one of :data:`GENERIC_KINDS`; any other kind (a
    benchmark's) is named ``<package>.<kind>``, so no benchmark can take a generic word."""
    if kind.name not in GENERIC_KINDS and "." not in kind.name:
        raise TaskSpecError(f"metric kind {kind.name!r}: a kind outside the generic vocabulary "
                            f"({', '.join(GENERIC_KINDS)}) is named '<package>.<kind>'")
    return METRIC_KINDS.register(kind.name, kind)


def by_stat(name: str, table: dict[str, tuple]) -> MetricKind:
    """A kind whose ``stat`` parameter picks ``(corpus function, fast form or None[, per-item function])``
    from ``table``; its other parameters go to them."""
    def row(stat: str) -> tuple:
        return pick(stat, table, name)

    return MetricKind(name, fn=lambda items, stat, **p: row(stat)[0](items, **p),
                      fast=lambda items, n, seed, stat, **p: row(stat)[1] and row(stat)[1](items, n, seed, **p),
                      per_item=lambda stat, **p: row(stat)[2] if len(row(stat)) > 2 else None, stats=table)


def pick(stat: str, table: dict[str, Any], kind: str) -> Any:
    """``table[stat]``, or one line naming the kind and its statistics."""
    try:
        return table[stat]
    except KeyError:
        raise TaskSpecError(f"metric kind {kind!r}: unknown stat {stat!r} (one of {', '.join(table)})") from None


# ---------------------------------------------------------------- files written before metric kinds
# Version 1 of results.json named a corpus metric's function as "module:qualname". Each such name maps
# to a kind and to how its parameters become the kind's (strings, not imports: the code they name may
# have moved or gone). A name not listed here is read by the metric's own name (a plugin's kind).
_STAT = "stat"
OLD_FUNCTIONS: dict[str, tuple[str, dict[str, Any]]] = {
    "glotbench.scoring.metrics:accuracy_items": ("label", {_STAT: "accuracy"}),
    "glotbench.scoring.metrics:macro_f1_items": ("label", {_STAT: "macro_f1"}),
    "glotbench.scoring.metrics:weighted_f1_items": ("label", {_STAT: "weighted_f1"}),
    "glotbench.scoring.metrics:mcc_items": ("label", {_STAT: "mcc"}),
    "glotbench.scoring.metrics:answered": ("label", {_STAT: "answered"}),
    "glotbench.scoring.metrics:ratio_of_sums": ("ratio", {}),
    "glotbench.scoring.label_metrics:macro_f1_of": ("label", {_STAT: "macro_f1"}),
    "glotbench.scoring.label_metrics:topic_macro_accuracy": ("group_mean", {"key": "cb_correct", "group": "subject"}),
    "glotbench.scoring.extractive_qa_scorer:no_answer_accuracy": ("no_answer", {_STAT: "accuracy"}),
    "glotbench.scoring.extractive_qa_scorer:no_answer_macro_f1": ("no_answer", {_STAT: "macro_f1"}),
    "glotbench.scoring.text_metrics:sacrebleu_corpus": ("text", {}),
    "glotbench.scoring.ll_calibration:ll_ece": ("calibration", {_STAT: "ece"}),
    "glotbench.scoring.ll_calibration:ll_brier": ("calibration", {_STAT: "brier"}),
    "glotbench.scoring.ll_calibration:ll_auroc_macro": ("calibration", {_STAT: "auroc_macro"}),
    "glotbench.scoring.ll_calibration:ll_auroc_class": ("calibration", {_STAT: "auroc"}),
    "glotbench.scoring.perplexity:bits_per_byte": ("perplexity", {_STAT: "bits_per_byte"}),
    "glotbench.scoring.perplexity:perplexity": ("perplexity", {_STAT: "perplexity"}),
    "glotbench.scoring.perplexity:word_perplexity": ("perplexity", {_STAT: "word_perplexity"}),
    **{f"{mod}:factuality_metric": ("grade_rate", {}) for mod in (
        "glotbench.scoring.grade_metrics", "glotbench.scoring.factuality", "glotbench.benchmarks.factuality.metrics")},
    **{f"{mod}:factuality_strict_metric": ("grade_rate", {"prefix": "strict_"}) for mod in (
        "glotbench.scoring.grade_metrics", "glotbench.scoring.factuality_strict",
        "glotbench.benchmarks.factuality.metrics_strict", "glotbench.benchmarks.factuality.strict_metrics")},
}
# an old function's parameters under the kind's names
_RENAMED = {"text": {"kind": _STAT}, "grade_rate": {"key": "rate"}}


def migrate_definition(d: dict[str, Any]) -> dict[str, Any]:
    """A metric definition of any results.json version as this version writes it: ``{"name",
    "kind", "params", ...}``. Version 1's ``{"kind": "mean", "key": k}`` and ``{"kind": "corpus",
    "function": "module:qualname", "per_item": ..., "params": ...}`` map through :data:`OLD_FUNCTIONS`."""
    d = dict(d)
    if d.get("kind") == "mean" and "key" in d:
        d["params"] = {"key": d.pop("key")}
    elif d.get("kind") == "corpus" or "function" in d:
        fn = str(d.pop("function", ""))
        d.pop("per_item", None)
        kind, fixed = OLD_FUNCTIONS.get(fn, (str(d.get("name") or ""), {}))
        renamed = _RENAMED.get(kind, {})
        d["kind"] = kind
        d["params"] = {**{renamed.get(k, k): v for k, v in (d.get("params") or {}).items()}, **fixed}
    return d
