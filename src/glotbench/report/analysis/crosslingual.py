"""Cross-lingual performance gap between a native-language benchmark and its English twin.

Czech-Bench (Jirkovský 2024, §6.4) prints no formula for its "average relative performance
difference"; the one that reproduces its three published averages is
``|s_en - s_native| / max(s_en, s_native)``, averaged over the pairs (docs/comparisons.md;
``tests/test_compare.py`` checks the reproduction). :func:`relative_gap` keeps the sign (positive
when English scores higher); the average gap is taken over absolute values, as the thesis' is.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from glotbench.errors import DataError


def _is_missing(x: Any) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def relative_gap(score_native: float | None, score_english: float | None) -> float:
    """Signed relative difference ``(s_en - s_native) / max(s_en, s_native)``.

    Positive: the model does better in English; negative: better in the native language.
    Its absolute value is the Czech-Bench §6.4 "relative performance difference" (see the module
    docstring for the quote and how the formula was recovered). Scale-free: percentages and
    fractions give the same value. Returns NaN when either score is missing (None/NaN) and 0.0
    when both are 0.

    Raises :class:`~glotbench.errors.DataError` for a negative score: the ratio is meaningless
    for metrics that can go below zero (MCC); compare those with absolute differences.
    """
    if _is_missing(score_native) or _is_missing(score_english):
        return float("nan")
    native, english = float(score_native), float(score_english)
    if native < 0 or english < 0:
        raise DataError(
            f"relative_gap: scores must be >= 0 (got native={native}, english={english}); "
            "use an absolute difference for metrics such as MCC"
        )
    top = max(native, english)
    if top == 0:
        return 0.0
    return (english - native) / top


@dataclass(frozen=True)
class GapRow:
    """One model on one benchmark pair (e.g. ``"MMLU acc"``)."""

    model: str
    pair: str
    native: float | None
    english: float | None
    difference: float  # english - native (NaN when a score is missing)
    relative_gap: float  # signed, see relative_gap()


@dataclass(frozen=True)
class ModelGap:
    model: str
    n_pairs: int  # pairs with both scores
    n_missing: int  # pairs skipped because a score was missing
    average_relative_gap: float  # mean of |relative_gap|: the thesis' number
    average_signed_gap: float  # mean of relative_gap: > 0 means English is better on average
    n_english_higher: int
    n_native_higher: int


@dataclass
class CrosslingualTable:
    rows: list[GapRow] = field(default_factory=list)
    models: dict[str, ModelGap] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"rows": [asdict(r) for r in self.rows], "models": {m: asdict(g) for m, g in self.models.items()}}


_FIELDS = ("model", "pair", "native", "english")


def _as_tuple(rec: Any, i: int) -> tuple[str, str, Any, Any]:
    if isinstance(rec, Mapping):
        for f in _FIELDS:
            if f not in rec:
                raise DataError(f"crosslingual pair #{i}: missing field {f!r} (need {', '.join(_FIELDS)})")
        return rec["model"], rec["pair"], rec["native"], rec["english"]
    try:
        model, pair, native, english = rec
    except (TypeError, ValueError):
        raise DataError(f"crosslingual pair #{i}: expected (model, pair, native, english), got {rec!r}") from None
    return model, pair, native, english


def crosslingual_table(pairs: Iterable[Any]) -> CrosslingualTable:
    """Per model: each pair's two scores, difference, signed relative gap, and the average gap.

    ``pairs`` is an iterable of ``(model, pair_name, native_score, english_score)`` tuples or
    dicts with those keys. A missing score (None/NaN, e.g. a run marked invalid for too many
    unparseable answers) keeps its row but is left out of the averages and counted in
    ``n_missing``. Model order follows first appearance.
    """
    table = CrosslingualTable()
    per_model: dict[str, list[GapRow]] = {}
    seen: set[tuple[str, str]] = set()
    for i, rec in enumerate(pairs):
        model, pair, native, english = _as_tuple(rec, i)
        if (model, pair) in seen:
            raise DataError(f"crosslingual pair #{i}: duplicate pair {pair!r} for model {model!r}")
        seen.add((model, pair))
        gap = relative_gap(native, english)
        diff = float("nan") if math.isnan(gap) else float(english) - float(native)
        row = GapRow(model, pair, native, english, diff, gap)
        table.rows.append(row)
        per_model.setdefault(model, []).append(row)
    for model, rows in per_model.items():
        ok = [r.relative_gap for r in rows if not math.isnan(r.relative_gap)]
        n = len(ok)
        table.models[model] = ModelGap(
            model=model,
            n_pairs=n,
            n_missing=len(rows) - n,
            average_relative_gap=sum(abs(g) for g in ok) / n if n else float("nan"),
            average_signed_gap=sum(ok) / n if n else float("nan"),
            n_english_higher=sum(g > 0 for g in ok),
            n_native_higher=sum(g < 0 for g in ok),
        )
    return table


def pairs_from_scores(
    scores: Mapping[str, Mapping[str, float | None]],
    pairing: Mapping[str, tuple[str, str]],
) -> list[tuple[str, str, float | None, float | None]]:
    """Build :func:`crosslingual_table` input from ``scores[model][metric_key]``.

    ``pairing`` maps a pair name to ``(native_key, english_key)``, e.g.
    ``{"MMLU acc": ("mmlu_cs/accuracy", "mmlu_en/accuracy")}``. A key a model lacks gives a
    missing score (the row is kept, the average skips it).
    """
    out = []
    for model, s in scores.items():
        for name, (native_key, english_key) in pairing.items():
            out.append((model, name, s.get(native_key), s.get(english_key)))
    return out


# ----------------------------------------------------------------------------- intervals of the gap

@dataclass(frozen=True)
class PairItems:
    """One model's pair on the items both tasks scored, joined on item id: ``score(idx)`` is the
    (native, counterpart) score on items ``idx`` (an index row); ``vectors``, when the metric is a
    mean of per-item values, are those values (NaN: no value), the fast form. ``group`` names the
    task pair: two metrics of one task pair are resampled with the same item draws."""

    model: str
    pair: str
    group: str
    n_items: int
    score: Any = None  # Callable[[np.ndarray], tuple[float, float]] for a corpus metric
    vectors: tuple[Any, Any] | None = None


def gap_seed(seed: int, group: str) -> list[int]:
    """The resample stream of a task pair: the run's seed and the pair's name (stable whatever the
    order or number of pairs compared; independent between task pairs)."""
    import zlib

    return [int(seed), zlib.crc32(group.encode("utf-8"))]


def resampled_scores(p: PairItems, n_resamples: int, seed: int) -> tuple[Any, Any]:
    """(native, counterpart) score on each of ``n_resamples`` item-paired resamples (the same item
    indices on both sides), drawn as :func:`glotbench.scoring.resample.index_chunks` draws them."""
    import warnings

    import numpy as np

    from glotbench.scoring.resample import index_chunks

    natives, englishes = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a resample with no value on a side is NaN
        for idx in index_chunks(p.n_items, n_resamples, gap_seed(seed, p.group)):  # type: ignore[arg-type]
            if p.vectors is not None:
                a, b = p.vectors
                natives.append(np.nanmean(a[idx], axis=1))
                englishes.append(np.nanmean(b[idx], axis=1))
            else:
                both = np.array([p.score(row) for row in idx], dtype=float).reshape(-1, 2)
                natives.append(both[:, 0])
                englishes.append(both[:, 1])
    return np.concatenate(natives), np.concatenate(englishes)


def relative_gaps(native: Any, english: Any) -> Any:
    """:func:`relative_gap` of arrays (NaN where a side is NaN, 0 where both are 0)."""
    import numpy as np

    top = np.maximum(native, english)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(top == 0, 0.0, (english - native) / top)


def _interval(stats: Any, alpha: float) -> list[float] | None:
    """The percentile interval (:func:`glotbench.scoring.resample.percentile_interval`); None when no
    resample had a value."""
    import math

    from glotbench.scoring.resample import percentile_interval

    lo, hi = percentile_interval(stats, alpha)
    return None if math.isnan(lo) else [lo, hi]


@dataclass
class GapIntervals:
    """Item-paired bootstrap intervals: per (model, pair) of the difference (counterpart - native)
    and the signed relative gap, and per model of the average |relative gap| (every pair of the
    model resampled at once, each on its own items)."""

    n_resamples: int
    seed: int
    alpha: float = 0.05
    pairs: dict[tuple[str, str], dict] = field(default_factory=dict)
    models: dict[str, dict] = field(default_factory=dict)


def gap_intervals(items: Iterable[PairItems], *, n_resamples: int = 1000, seed: int = 0, alpha: float = 0.05,
                  complete: Mapping[str, bool] | None = None) -> GapIntervals:
    """The intervals of :class:`GapIntervals`. ``complete[model]`` False: some of the model's pairs
    with a score have no items to resample (a published score), so its average gets no interval."""
    import warnings

    import numpy as np

    out = GapIntervals(n_resamples, seed, alpha)
    per_model: dict[str, list[Any]] = {}
    for p in items:
        if p.n_items < 1:
            continue
        native, english = resampled_scores(p, n_resamples, seed)
        gaps = relative_gaps(native, english)
        out.pairs[(p.model, p.pair)] = {"n_items": p.n_items, "difference_ci95": _interval(english - native, alpha),
                                        "relative_gap_ci95": _interval(gaps, alpha)}
        per_model.setdefault(p.model, []).append(np.abs(gaps))
    for model, rows in per_model.items():
        if complete is not None and not complete.get(model, True):
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            avg = np.nanmean(np.vstack(rows), axis=0)
        out.models[model] = {"n_pairs": len(rows), "average_relative_gap_ci95": _interval(avg, alpha)}
    return out
