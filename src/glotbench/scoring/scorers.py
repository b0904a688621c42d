"""Per-item scorers: turn an extracted answer and the gold target into a prediction and values.

A scorer is ``fn(extracted, target, *, sample, pack, **options) -> (pred, values)``; ``pred``
is None when the answer was unparseable, ``values`` the per-item numbers its metrics average.
Each scorer declares the metrics it feeds, beside itself::

    @scorer(metrics=["exact_match"])            # declared, usable as "mypkg.scoring:my_scorer"
    def my_scorer(extracted, target, *, sample=None, pack=None): ...

    @scorer("exact_match", metrics=["exact_match"])   # declared and registered under a name

Task YAML files name a scorer with ``scorer:`` (a registered name or ``"module:attr"``) and its
options with ``scorer_options:``; the names are checked when the task loads.
"""

from __future__ import annotations

import inspect
import math
import unicodedata
from dataclasses import dataclass
from typing import Any, Callable

from glotbench.errors import DataError, TaskSpecError
from glotbench.registry import Registry

ScorerFn = Callable[..., tuple[Any, dict[str, float]]]


@dataclass(frozen=True)
class Scorer:
    """A scorer function with the metrics it feeds (``metrics=None``: not declared, not checked)."""

    name: str
    fn: ScorerFn
    metrics: tuple[str, ...] | None = None

    def __call__(self, extracted, target, *, sample=None, pack=None, **options):
        return self.fn(extracted, target, sample=sample, pack=pack, **options)

    def check_options(self, options: dict, *, where: str = "") -> None:
        """TaskSpecError (one line) when the function does not take these ``scorer_options``."""
        try:
            inspect.signature(self.fn).bind(None, None, sample=None, pack=None, **options)
        except TypeError as err:
            prefix = f"{where}: " if where else ""
            raise TaskSpecError(f"{prefix}scorer {self.name!r} does not take these options: {err}") from None


def _coerce_scorer(obj: Any, name: str, where: str) -> Scorer:
    if isinstance(obj, Scorer):
        return obj
    declared = getattr(obj, "glotbench_scorer", None)
    if isinstance(declared, Scorer):
        return declared
    if callable(obj):
        return Scorer(name=name, fn=obj)
    prefix = f"{where}: " if where else ""
    raise TaskSpecError(f"{prefix}{name!r} is not a scorer function")


SCORERS: Registry[Scorer] = Registry("scorer", coerce=_coerce_scorer, same=lambda a, b: a.fn is b.fn and a.metrics == b.metrics, error=TaskSpecError)


def scorer(name: str | None = None, *, metrics: list[str] | tuple[str, ...]):
    """Declare a scorer and the metrics it feeds; with ``name`` also register it under that name."""

    def wrap(fn: ScorerFn) -> ScorerFn:
        decl = Scorer(name=name or fn.__name__, fn=fn, metrics=tuple(metrics))
        fn.glotbench_scorer = decl  # type: ignore[attr-defined]
        if name:
            SCORERS.register(name, decl)
        return fn

    return wrap


@scorer("label", metrics=["accuracy", "macro_f1", "weighted_f1", "mcc"])
def label(extracted, target, *, sample=None, pack=None):
    if extracted is None:
        return None, {"correct": 0.0}
    return str(extracted), {"correct": float(str(extracted) == str(target))}


def _to_float(x) -> float | None:
    if x is None:
        return None
    if isinstance(x, (int, float)):
        return float(x)
    try:
        return float(str(x).strip().replace(",", "."))
    except ValueError:
        return None


@scorer("numeric", metrics=["numeric_match", "abs_error", "rel_error"])
def numeric(extracted, target, *, sample=None, pack=None):
    """Numeric exact match (relative tolerance 1e-6) plus absolute and relative error."""
    gold = _to_float(target)
    pred = _to_float(extracted)
    if pred is None or gold is None or math.isnan(pred):
        return None, {"numeric_match": 0.0}
    err = abs(pred - gold)
    return pred, {
        "numeric_match": float(math.isclose(pred, gold, rel_tol=1e-6, abs_tol=1e-9)),
        "abs_error": err,
        "rel_error": err / abs(gold) if gold else (0.0 if err == 0 else float("inf")),
    }


def _norm(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold().strip()
    return " ".join("".join(ch for ch in text if not unicodedata.category(ch).startswith("P")).split())


@scorer("exact_match", metrics=["exact_match"])
def exact_match(extracted, target, *, sample=None, pack=None):
    if extracted is None:
        return None, {"exact_match": 0.0}
    golds = target if isinstance(target, list) else [target]
    return str(extracted), {"exact_match": float(any(_norm(str(extracted)) == _norm(str(g)) for g in golds))}


@scorer("option_value", metrics=["accuracy", "macro_f1", "weighted_f1", "mcc", "answered"])
def option_value(extracted, target, *, sample=None, pack=None):
    """The extractor returns the option label the model chose ("A", "1"); this maps it to the
    dataset's label string through ``sample.vars["option_values"]`` (HuLU), so ``pred`` is e.g.
    ``"positive"``. On an unlabelled split (gold ``None``) no per-item values."""
    if extracted is None:
        return None, ({} if target is None else {"correct": 0.0})
    values = (sample.vars.get("option_values") if sample is not None else None) or {}
    if str(extracted) not in values:
        raise DataError(f"scorer 'option_value': option {extracted!r} is not one of {sorted(values)}")
    pred = values[str(extracted)]
    if target is None:
        return pred, {}
    return pred, {"correct": float(pred == str(target))}


def register_scorer(name: str, fn: ScorerFn, metrics: list[str] | tuple[str, ...] | None = None) -> Scorer:
    """Register ``fn`` under ``name`` (refused when the name is taken by another scorer)."""
    decl = getattr(fn, "glotbench_scorer", None)
    metrics = tuple(metrics) if metrics is not None else (decl.metrics if isinstance(decl, Scorer) else None)
    return SCORERS.register(name, Scorer(name=name, fn=fn, metrics=metrics))


def get_scorer(name: str, *, where: str = "") -> Scorer:
    """A registered scorer or a ``"module:attr"`` function; TaskSpecError naming ``where`` otherwise."""
    return SCORERS.resolve(name, where=where)
