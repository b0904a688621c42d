"""Calibration from stated confidence (Chinese SimpleQA §4.5 and appendix L; HuSimpleQA C.6).

The model is asked to reply ``{"answer": "...", "confidence_score": 0-100}``. That reply is read
by :func:`glotbench.extract.confidence.parse_stated_answer` (a confidence on 0-1 such as ``0.85``
or ``"85%"`` is read too, and the scale it was read on is kept); here we compare the stated
confidence with whether the judge graded the answer CORRECT:

* reliability table: 10 equal-width bins over confidence ``[0,10), [10,20), ..., [90,100]``
  (100 goes into the last bin), each with its count, mean confidence and accuracy;
* ECE = sum over bins of (bin count / N) * |accuracy - mean confidence|;
* Brier score = mean of (confidence/100 - correct)^2.

Accuracy counts an item as right only when its grade is CORRECT (NOT_ATTEMPTED counts as not
right, as in SimpleQA). Items with an unreadable confidence or a JUDGE_ERROR grade are left
out and counted.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from glotbench.scoring.grades import CORRECT, JUDGE_ERROR, to_grade


def _to_confidence(value: Any) -> float | None:
    """A stored confidence (already on 0..100) checked for range; None if it is not one."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    v = float(value)
    return v if math.isfinite(v) and 0.0 <= v <= 100.0 else None


def _pairs(confidences: Sequence[float | None], grades: Sequence[Any]) -> tuple[np.ndarray, np.ndarray, dict]:
    if len(confidences) != len(grades):
        raise ValueError(f"calibration: {len(confidences)} confidences but {len(grades)} grades")
    conf, hit = [], []
    missing = judge_err = 0
    for k, (c, g) in enumerate(zip(confidences, grades)):
        if isinstance(g, (bool, np.bool_)):
            correct = bool(g)
        else:
            gg = to_grade(g, f"grade #{k}")
            if gg is JUDGE_ERROR:
                judge_err += 1
                continue
            correct = gg is CORRECT
        cv = _to_confidence(c) if c is not None else None
        if cv is None:
            missing += 1
            continue
        conf.append(cv)
        hit.append(float(correct))
    return np.array(conf, dtype=float), np.array(hit, dtype=float), {"unparseable_confidence": missing, "judge_error": judge_err}


def _bin_index(conf_pct: np.ndarray, n_bins: int) -> np.ndarray:
    # conf * n_bins / 100 is exact for integer confidences, so 70 lands in [70, 80) not [60, 70).
    return np.clip(np.floor(conf_pct * n_bins / 100.0).astype(int), 0, n_bins - 1)


def reliability_table(
    confidences: Sequence[float | None], grades: Sequence[Any], n_bins: int = 10
) -> list[dict[str, Any]]:
    """One row per bin: ``lo``/``hi`` (0..1), ``count``, ``mean_confidence``, ``accuracy`` (None when empty)."""
    conf, hit, _ = _pairs(confidences, grades)
    return _table(conf, hit, n_bins)


def _table(conf: np.ndarray, hit: np.ndarray, n_bins: int) -> list[dict[str, Any]]:
    idx = _bin_index(conf, n_bins)
    rows = []
    for b in range(n_bins):
        mask = idx == b
        cnt = int(mask.sum())
        rows.append(
            {
                "bin": b,
                "lo": b / n_bins,
                "hi": (b + 1) / n_bins,
                "count": cnt,
                "mean_confidence": float(conf[mask].mean() / 100.0) if cnt else None,
                "accuracy": float(hit[mask].mean()) if cnt else None,
            }
        )
    return rows


def expected_calibration_error(confidences: Sequence[float | None], grades: Sequence[Any], n_bins: int = 10) -> float:
    conf, hit, _ = _pairs(confidences, grades)
    return _ece(_table(conf, hit, n_bins), conf.size)


def _ece(rows: list[dict[str, Any]], total: int) -> float:
    if total == 0:
        return float("nan")
    return float(sum(r["count"] / total * abs(r["accuracy"] - r["mean_confidence"]) for r in rows if r["count"]))


def brier_score(confidences: Sequence[float | None], grades: Sequence[Any]) -> float:
    conf, hit, _ = _pairs(confidences, grades)
    return float(np.mean((conf / 100.0 - hit) ** 2)) if conf.size else float("nan")


def calibration_report(confidences: Sequence[float | None], grades: Sequence[Any], n_bins: int = 10) -> dict[str, Any]:
    """Everything at once: ``{"n_used", "unparseable_confidence", "judge_error", "ece", "brier",
    "mean_confidence", "accuracy", "table": [...]}``. ``confidences`` are 0..100 or None."""
    conf, hit, dropped = _pairs(confidences, grades)
    rows = _table(conf, hit, n_bins)
    return {
        "n_used": int(conf.size),
        **dropped,
        "n_bins": n_bins,
        "ece": _ece(rows, conf.size),
        "brier": float(np.mean((conf / 100.0 - hit) ** 2)) if conf.size else float("nan"),
        "mean_confidence": float(conf.mean() / 100.0) if conf.size else float("nan"),
        "accuracy": float(hit.mean()) if conf.size else float("nan"),
        "table": rows,
    }
