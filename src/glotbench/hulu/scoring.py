"""Scoring pieces the HuLU tasks register when :mod:`glotbench.hulu.task` is imported.

* scorer ``option_value``: the extractor returns the option label the model chose ("A", "1");
  this maps it to the dataset's label string through ``sample.vars["option_values"]`` (built by
  :class:`~glotbench.hulu.task.HuluTask`), so ``pred`` is e.g. ``"positive"`` and metrics and
  submission files speak the dataset's labels. On an unlabelled split (gold ``None``) it returns
  the prediction with no per-item values.
* metric ``answered``: the fraction of items with a parseable answer. HuLU tasks report it
  instead of their paper metrics on unlabelled splits (``--split test``), where no score exists.
"""

from __future__ import annotations

from glotbench.errors import DataError
from glotbench.scoring.metrics import ScoredItem, register_metric
from glotbench.scoring.resample_forms import answered_form
from glotbench.scoring.scorers import register_scorer


def option_value(extracted, target, *, sample=None, pack=None):
    if extracted is None:
        return None, ({} if target is None else {"correct": 0.0})
    values = (sample.vars.get("option_values") if sample is not None else None) or {}
    if str(extracted) not in values:
        raise DataError(f"scorer 'option_value': option {extracted!r} is not one of {sorted(values)}")
    pred = values[str(extracted)]
    if target is None:
        return pred, {}
    return pred, {"correct": float(pred == str(target))}


def answered(items: list[ScoredItem]) -> float:
    if not items:
        return float("nan")
    return sum(1 for i in items if i.pred is not None) / len(items)


answered.resample = answered_form  # type: ignore[attr-defined]

register_scorer("option_value", option_value)
register_metric("answered", answered)
