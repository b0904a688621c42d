"""Three-way judge grades and their scores (the SimpleQA family's grading, used by any judged task).

Each answer gets one grade: CORRECT, INCORRECT or NOT_ATTEMPTED, or JUDGE_ERROR when the
judge's reply could not be read. Judge errors are counted and reported but are *not* folded
into NOT_ATTEMPTED (the Chinese SimpleQA script defaults to "C" there); they are left out of
the denominators of CO / NA / IN.

With c, i, n the counts of correct, incorrect and not-attempted answers (Chinese SimpleQA §4.3,
OpenHuEval appendix C.7):

* CO = c / (c+i+n), NA = n / (c+i+n), IN = i / (c+i+n)
* CGA (correct given attempted) = c / (c+i)
* F = 2c / (2c + 2i + n), which is the harmonic mean of CO and CGA.

All values are fractions in [0, 1]; multiply by 100 for the papers' tables.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from enum import StrEnum
from typing import Any

import numpy as np

from glotbench.errors import DataError
from glotbench.scoring.resample import count_stats, percentile_intervals


class Grade(StrEnum):
    CORRECT = "CORRECT"
    INCORRECT = "INCORRECT"
    NOT_ATTEMPTED = "NOT_ATTEMPTED"
    JUDGE_ERROR = "JUDGE_ERROR"


CORRECT, INCORRECT, NOT_ATTEMPTED, JUDGE_ERROR = (
    Grade.CORRECT,
    Grade.INCORRECT,
    Grade.NOT_ATTEMPTED,
    Grade.JUDGE_ERROR,
)
GRADEABLE = (CORRECT, INCORRECT, NOT_ATTEMPTED)
_CODE = {CORRECT: 0, INCORRECT: 1, NOT_ATTEMPTED: 2}
_BY_VALUE = {g.value: g for g in Grade}


def to_grade(value: Any, where: str = "grade") -> Grade:
    """Normalise a grade given as an enum member or a string (any case, space or underscore)."""
    if isinstance(value, Grade):
        return value
    if isinstance(value, str):
        exact = _BY_VALUE.get(value)  # the common case: a grade as it is stored
        if exact is not None:
            return exact
        key = value.strip().upper().replace(" ", "_").replace("-", "_")
        try:
            return Grade(key)
        except ValueError:
            pass
    raise DataError(f"{where}: unknown grade {value!r}; expected one of {', '.join(g.value for g in Grade)}")


def normalise_grades(grades: Iterable[Any]) -> list[Grade]:
    grades = grades if isinstance(grades, (list, tuple)) else list(grades)
    try:  # the common case: members or their exact values (a StrEnum member hashes as its value)
        return [_BY_VALUE[g] for g in grades]
    except (KeyError, TypeError):  # another spelling, or something that is no grade: name the item
        return [to_grade(g, f"grade #{k}") for k, g in enumerate(grades)]


def _rates(c: np.ndarray, i: np.ndarray, n: np.ndarray, only: Sequence[str] | None = None) -> dict[str, np.ndarray]:
    """CO, NA, IN, CGA, F from count arrays (vectorised so the bootstrap can use it); ``only``: just
    those (each computed as it is among all five)."""
    c, i, n = (np.asarray(x, dtype=float) for x in (c, i, n))
    total = c + i + n
    attempted = c + i
    some = total > 0
    rate = {
        "CO": lambda: np.where(some, c / total, np.nan),
        "NA": lambda: np.where(some, n / total, np.nan),
        "IN": lambda: np.where(some, i / total, np.nan),
        # Nothing attempted: the reference scripts report 0, not an undefined value.
        "CGA": lambda: np.where(attempted > 0, c / attempted, np.where(some, 0.0, np.nan)),
        "F": lambda: np.where(some, 2 * c / (2 * c + 2 * i + n), np.nan),
    }
    with np.errstate(divide="ignore", invalid="ignore"):
        return {k: rate[k]() for k in (only if only is not None else rate)}


def scores_from_counts(correct: float, incorrect: float, not_attempted: float) -> dict[str, float]:
    """CO/NA/IN/CGA/F from counts (or from percentages: the ratios are the same).

    :func:`_rates`' arithmetic on Python floats (the same IEEE operations in the same order, so the
    same numbers: tests/test_factuality.py): a summary asks this for every metric of every slice,
    and five numpy ``where`` calls on 0-d arrays cost 60 us."""
    c, i, n = float(correct), float(incorrect), float(not_attempted)
    total = c + i + n
    attempted = c + i
    nan = float("nan")
    if total > 0:
        co, na, in_, f = c / total, n / total, i / total, 2 * c / (2 * c + 2 * i + n)
    else:
        co = na = in_ = f = nan
    cga = c / attempted if attempted > 0 else (0.0 if total > 0 else nan)
    return {"CO": co, "NA": na, "IN": in_, "CGA": cga, "F": f}


def factuality_scores(
    grades: Sequence[Any],
    *,
    ci: bool = True,
    n_resamples: int = 1000,
    alpha: float = 0.05,
    seed: int = 0,
) -> dict[str, Any]:
    """Scores for one model on one task.

    Returns ``{"n", "n_gradeable", "counts": {grade: count}, "judge_error", "CO", "NA", "IN",
    "CGA", "F", "ci": {"CO": [lo, hi], "CGA": [...], "F": [...]}}`` (``ci`` only when asked).
    Intervals are percentile bootstraps over the gradeable items, seeded.
    """
    gs = normalise_grades(grades)
    counts = Counter(gs)
    c, i, n = counts[CORRECT], counts[INCORRECT], counts[NOT_ATTEMPTED]
    out: dict[str, Any] = {
        "n": len(gs),
        "n_gradeable": c + i + n,
        "counts": {g.value: counts[g] for g in Grade},
        "judge_error": counts[JUDGE_ERROR],
        **scores_from_counts(c, i, n),
    }
    if ci:
        out["ci"] = bootstrap_factuality_ci(gs, n_resamples=n_resamples, alpha=alpha, seed=seed)
    return out


def bootstrap_factuality_ci(
    grades: Sequence[Any],
    *,
    metrics: Sequence[str] = ("CO", "CGA", "F"),
    n_resamples: int = 1000,
    alpha: float = 0.05,
    seed: int = 0,
) -> dict[str, list[float]]:
    """Percentile bootstrap intervals, resampling the gradeable items with replacement."""
    return bootstrap_factuality_cis([grades], metrics=metrics, n_resamples=n_resamples, alpha=alpha, seed=seed)[0]


_CI_BATCH = 3000  # rate arrays held at once before their quantiles are taken (3000 x 1000 floats: 24 MB)


def bootstrap_factuality_cis(
    grade_lists: Sequence[Sequence[Any]],
    *,
    metrics: Sequence[str] = ("CO", "CGA", "F"),
    n_resamples: int = 1000,
    alpha: float = 0.05,
    seed: int = 0,
) -> list[dict[str, list[float]]]:
    """:func:`bootstrap_factuality_ci` of each list of grades (a table's slices), their quantiles
    taken together: ``percentile_intervals`` stacks arrays of one length into one quantile call,
    which gives each row the numbers of its own call (tests/test_resample.py). A judged summary's
    table has a hundred slices; one quantile call each was 0.2 ms."""
    out: list[dict[str, list[float]] | None] = [None] * len(grade_lists)
    stats: list[np.ndarray] = []
    owners: list[int] = []

    def take_quantiles() -> None:
        cis = percentile_intervals(stats, alpha)
        for j, g in enumerate(owners):
            out[g] = {k: list(ci) for k, ci in zip(metrics, cis[j * len(metrics):(j + 1) * len(metrics)])}
        stats.clear()
        owners.clear()

    for g, grades in enumerate(grade_lists):
        codes = np.array([_CODE[x] for x in normalise_grades(grades) if x in _CODE], dtype=np.intp)
        if codes.size < 2 or n_resamples < 1:  # as the metrics' intervals: none from under two items or no resamples
            out[g] = {k: [float("nan"), float("nan")] for k in metrics}
            continue
        # Counted over four codes (the fourth, a judge error, never occurs here) as the factuality metrics'
        # resample form counts the same slice: without judge errors the codes are the same, and the
        # draws and counts made for the run's summary are reused (resample.count_stats keeps them).
        counts = count_stats(codes, 4, lambda k: k, n_resamples, seed)  # (n_resamples, 4), in bounded memory
        rates = _rates(counts[:, 0], counts[:, 1], counts[:, 2], only=metrics)
        stats.extend(rates[k] for k in metrics)
        owners.append(g)
        if len(stats) >= _CI_BATCH:
            take_quantiles()
    take_quantiles()
    return out  # type: ignore[return-value]


def by_category(
    grades: Sequence[Any],
    categories: Sequence[Any],
    *,
    ci: bool = False,
    n_resamples: int = 1000,
    seed: int = 0,
) -> dict[str, dict[str, Any]]:
    """Scores per slice (e.g. ``primary_category`` or ``hu_specific_dim``), slices sorted by name."""
    if len(grades) != len(categories):
        raise DataError(f"by_category: {len(grades)} grades but {len(categories)} category values")
    groups: dict[str, list[Any]] = {}
    for g, cat in zip(grades, categories):
        groups.setdefault("" if cat is None else str(cat), []).append(g)
    cats = sorted(groups.items())
    out = {cat: factuality_scores(gs, ci=False) for cat, gs in cats}
    if ci:  # every slice's intervals together (the same numbers as one factuality_scores call each)
        for (cat, _), cis in zip(cats, bootstrap_factuality_cis([gs for _, gs in cats], n_resamples=n_resamples,
                                                                seed=seed)):
            out[cat]["ci"] = cis
    return out


def grade_indicators(grade: Any) -> dict[str, float]:
    """Per-item values for a :class:`ScoredItem`: ``{"correct": 1.0, "incorrect": 0.0, ...}``.

    A judge error gives NaN-free ``None`` entries so per-item means skip it.
    """
    g = to_grade(grade)
    if g is JUDGE_ERROR:
        return {"correct": None, "incorrect": None, "not_attempted": None}  # type: ignore[dict-item]
    return {
        "correct": float(g is CORRECT),
        "incorrect": float(g is INCORRECT),
        "not_attempted": float(g is NOT_ATTEMPTED),
    }


# Corpus-level metrics over ScoredItems whose ``pred`` holds the judge grade, so
# ``metrics.bootstrap_ci`` and the task spec's ``metrics:`` list can name them.


# which way each score is better (the metrics that report them declare the same)
DIRECTION = {"CO": "higher", "NA": "lower", "IN": "lower", "CGA": "higher", "F": "higher"}
