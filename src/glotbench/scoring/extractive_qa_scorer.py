"""The ``extractive_qa`` scorer: SQuAD-style exact match and bag-of-words F1 at three
normalisation levels (see :mod:`glotbench.scoring.extractive_qa` for the rules), usable from a
task YAML with no Python::

    extractor: {name: text, options: {first_line: true}}
    scorer: extractive_qa
    scorer_options: {profile: squad}          # or glotbench (default); no_answer_strings: ["-", ""]
    metrics: [exact_match, bow_f1, exact_match_raw, bow_f1_raw, exact_match_lemma, bow_f1_lemma]

The gold ``target`` is one answer or a list of accepted answers (an empty list: the question has
no answer, SQuAD 2.0). Per-item values and the metrics reading them:

=========================  =====================  ================================
level                      exact match            bag-of-words F1
=========================  =====================  ================================
raw (strip, whitespace)    ``exact_match_raw``    ``bow_f1_raw``
normalized (SQuAD)         ``exact_match``        ``bow_f1``
lemmatized (simplemma)     ``exact_match_lemma``  ``bow_f1_lemma``
=========================  =====================  ================================

plus ``no_answer_accuracy`` / ``no_answer_macro_f1`` (the "is it unanswerable?" decision, as
Czech-Bench's SQuAD 2.0 report). The lemmatized values exist only for languages simplemma
supports; elsewhere those metrics are n/a.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from glotbench.languages import get_pack
from glotbench.scoring import resample as rs
from glotbench.scoring.extractive_qa import NO_ANSWER_STRINGS, Profile, item_values
from glotbench.scoring.metric_kinds import by_stat, register_kind
from glotbench.scoring.metrics import Metric, ScoredItem, accuracy, macro_f1, mean_of, register_metric
from glotbench.scoring.scorers import scorer

LEVEL_METRICS = ("exact_match", "bow_f1", "exact_match_raw", "bow_f1_raw", "exact_match_lemma", "bow_f1_lemma")


def _na_labels(items: list[ScoredItem]) -> tuple[list[str], list[str]]:
    keep = [i for i in items if "no_answer_gold" in i.values]
    gold = ["unanswerable" if i.values["no_answer_gold"] else "answerable" for i in keep]
    pred = ["unanswerable" if i.values.get("no_answer_pred") else "answerable" for i in keep]
    return gold, pred


def no_answer_accuracy(items: list[ScoredItem]) -> float:
    return accuracy(*_na_labels(items))


def no_answer_macro_f1(items: list[ScoredItem]) -> float:
    gold, pred = _na_labels(items)
    return macro_f1(gold, pred) if gold else float("nan")


def _na_codes(items: list[ScoredItem]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The same decisions as codes: 0 answerable, 1 unanswerable (their order as strings), kept
    where the item has ``no_answer_gold``."""
    keep = np.fromiter(("no_answer_gold" in i.values for i in items), bool, len(items))
    gold = np.fromiter((k and bool(i.values["no_answer_gold"]) for i, k in zip(items, keep)), np.intp, len(items))
    pred = np.fromiter((k and bool(i.values.get("no_answer_pred")) for i, k in zip(items, keep)), np.intp, len(items))
    return gold, pred, keep


def _no_answer_accuracy_fast(items: list[ScoredItem], n_resamples: int, seed: int) -> np.ndarray:
    gold, pred, keep = _na_codes(items)
    return rs.mean_stats(np.where(keep, (gold == pred).astype(float), np.nan), n_resamples, seed)


def _no_answer_macro_f1_fast(items: list[ScoredItem], n_resamples: int, seed: int) -> np.ndarray:
    gold, pred, keep = _na_codes(items)
    return rs.label_sum_stats(gold, pred, 2, rs.macro_f1_from_sums("gold"), n_resamples, seed, keep=keep)


for _name in LEVEL_METRICS:
    if _name != "exact_match":  # exact_match is a built-in metric (the exact_match scorer feeds it too)
        # exact_match_raw / _lemma measure exact match under another normalisation: one measure
        _base = _name.removesuffix("_raw").removesuffix("_lemma")
        register_metric(mean_of(_name, _name, measure=_base if _base != _name else ""))
register_kind(by_stat("no_answer", {"accuracy": (no_answer_accuracy, _no_answer_accuracy_fast),
                                     "macro_f1": (no_answer_macro_f1, _no_answer_macro_f1_fast)}))
register_metric(Metric("no_answer_accuracy", kind="no_answer", params={"stat": "accuracy"},
                       description="accuracy of 'is it unanswerable?'"))
register_metric(Metric("no_answer_macro_f1", kind="no_answer", params={"stat": "macro_f1"},
                       description="macro-F1 of 'is it unanswerable?'"))


@scorer("extractive_qa", metrics=[*LEVEL_METRICS, "no_answer_accuracy", "no_answer_macro_f1"])
def extractive_qa(extracted, target, *, sample=None, pack=None, profile: Profile = "glotbench",
                  no_answer_strings: Sequence[str] = NO_ANSWER_STRINGS):
    """EM and F1 (max over the gold answers) at the raw, normalised and lemmatised levels."""
    golds = [] if target is None else ([str(g) for g in target] if isinstance(target, (list, tuple)) else [str(target)])
    lang = get_pack(pack).code if pack is not None else "en"
    values = item_values(None if extracted is None else str(extracted), golds, lang, profile, tuple(no_answer_strings))
    return (None if extracted is None else str(extracted)), values
