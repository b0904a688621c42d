"""Short-answer factuality metrics (SimpleQA, Chinese SimpleQA, HuSimpleQA): CO / NA / IN / CGA / F
from the judge grades (the grades and their rates: :mod:`glotbench.scoring.grades`)."""

from __future__ import annotations

from collections import Counter

from glotbench.scoring.grades import *  # noqa: F401,F403  (the grades, kept importable from here)
from glotbench.scoring.grades import (CORRECT, INCORRECT, JUDGE_ERROR, NOT_ATTEMPTED, _CODE, _rates,  # noqa: F401
                                      scores_from_counts, to_grade)
from glotbench.scoring.metrics import Metric, ScoredItem, register_metric
from glotbench.scoring.resample_forms import factuality_form, per_list, register_corpus_form

def factuality_metric(items: list[ScoredItem], key: str) -> float:
    """CO / NA / IN / CGA / F over items whose ``pred`` is the judge grade."""
    # Count raw preds first and normalise each distinct value once: the bootstrap calls this
    # a thousand times per metric, so per-item to_grade() calls would dominate a run's summary.
    return per_list(items, "factuality scores", _item_scores)[key]


def _item_scores(items: Sequence[ScoredItem]) -> dict[str, float]:
    raw = Counter(JUDGE_ERROR if it.pred is None else it.pred for it in items)
    counts: Counter = Counter()
    for value, k in raw.items():
        counts[to_grade(value)] += k
    return scores_from_counts(counts[CORRECT], counts[INCORRECT], counts[NOT_ATTEMPTED])


_DIRECTION = {"CO": "higher", "NA": "lower", "IN": "lower", "CGA": "higher", "F": "higher"}
# NA and IN are the breakdown of the answers that are not correct: secondary, never a headline
ROLE = {"CO": "headline", "NA": "secondary", "IN": "secondary", "CGA": "headline", "F": "headline"}
for _k, _dir in _DIRECTION.items():
    register_metric(Metric(f"factuality_{_k.lower()}", fn=factuality_metric, params={"key": _k}, direction=_dir,
                           role=ROLE[_k],
                           description=f"SimpleQA {_k} from the judge grades"))

register_corpus_form(f"{__name__}:factuality_metric", lambda key: factuality_form(key))
