"""Text-generation metrics from the field's libraries: BLEU, chrF, chrF++ (sacrebleu), ROUGE-1/2/L
(rouge-score), ROUGE_RAW (:mod:`glotbench.scoring.rouge_raw`) and the ``text`` scorer that feeds them.

A task compares a generated text (``extractor: {name: text}``) with its gold reference(s) and names
``scorer: text`` (``text_bertscore`` adds BERTScore, :mod:`glotbench.scoring.bertscore`). Each
metric, sacrebleu's settings and signature, and why ROUGE gets :class:`UnicodeTokenizer`:
docs/text-metrics.md.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from typing import Any

import numpy as np

from glotbench.errors import DataError
from glotbench.scoring import resample as rs
from glotbench.scoring import rouge_raw
from glotbench.scoring.metric_kinds import MetricKind
from glotbench.scoring.metrics import Metric, ScoredItem, mean_of
from glotbench.scoring.scorers import scorer

# ---------------------------------------------------------------- tokenizer for rouge-score

# Han ideographs (with extensions and compatibility forms), hiragana and katakana: one token each
_SPACELESS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
_TOKEN = re.compile(rf"[{_SPACELESS}]|[^\W_{_SPACELESS}]+")


def unicode_tokens(text: str) -> list[str]:
    """Lowercased runs of Unicode letters and digits (text NFC-normalised first); Han and kana
    characters one per token."""
    return _TOKEN.findall(unicodedata.normalize("NFC", text).lower())


class UnicodeTokenizer:
    """A rouge-score tokenizer (its ``tokenize(text)`` interface) that keeps every script's letters."""

    def tokenize(self, text: str) -> list[str]:
        return unicode_tokens(text)


ROUGE_TYPES = ("rouge1", "rouge2", "rougeL")


@functools.lru_cache(maxsize=1)
def _rouge_scorer():
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(list(ROUGE_TYPES), use_stemmer=False, tokenizer=UnicodeTokenizer())


def rouge_values(reference: str, prediction: str) -> dict[str, float]:
    """rouge-score's F-measure of ROUGE-1, ROUGE-2 and ROUGE-L (reference first, as rouge-score takes them)."""
    scores = _rouge_scorer().score(reference, prediction)
    return {name: float(scores[name].fmeasure) for name in ROUGE_TYPES}


# ---------------------------------------------------------------- the scorer


def one_reference(target: Any, where: str) -> str:
    """The single gold reference string (a one-element list is accepted)."""
    if isinstance(target, (list, tuple)):
        if len(target) != 1:
            raise DataError(f"{where}: the gold has {len(target)} references; glotbench's text metrics take exactly one")
        target = target[0]
    if not isinstance(target, str):
        raise DataError(f"{where}: the gold reference must be a string, not {type(target).__name__}")
    return target


def references(target: Any, where: str) -> list[str]:
    """The gold references of an item: a string is one reference, a list of strings several."""
    if isinstance(target, (list, tuple)):
        if not target:
            raise DataError(f"{where}: the gold is an empty list; give at least one reference string")
        for k, ref in enumerate(target):
            if not isinstance(ref, str):
                raise DataError(f"{where}: reference {k + 1} of the gold must be a string, not {type(ref).__name__}")
        return list(target)
    return [one_reference(target, where)]


TEXT_SCORER_METRICS = ("bleu", "chrf", "chrfpp", "rouge1", "rouge2", "rougeL", "rouge_l",
                       "rouge_raw_1", "rouge_raw_2", "rouge_raw_l",
                       "rouge_raw_1_precision", "rouge_raw_1_recall", "rouge_raw_2_precision", "rouge_raw_2_recall",
                       "rouge_raw_l_precision", "rouge_raw_l_recall", "rouge_raw_1_full", "rouge_raw_2_full", "rouge_raw_l_full")


def text_values(reference: str, prediction: str) -> dict[str, float]:
    return {**rouge_values(reference, prediction), **rouge_raw.item_values(reference, prediction)}


# Several references: per ROUGE type (and per ROUGE_RAW n), the reference with the highest F gives
# the item's values, its precision and recall with it (rouge-score's ``score_multi`` rule; Czech-Bench
# §4.3.2: "compare the candidate with each reference separately and consider only the maximum").
_MAX_GROUPS = (("rouge1",), ("rouge2",), ("rougeL",),
               *((f"rouge_raw_{n}", f"rouge_raw_{n}_precision", f"rouge_raw_{n}_recall") for n in ("1", "2", "l")),
               *((f"rouge_raw_{n}_full",) for n in ("1", "2", "l")))


def multi_text_values(refs: list[str], prediction: str) -> dict[str, float]:
    """ROUGE and ROUGE_RAW of the prediction against its best reference, per type (one reference:
    exactly :func:`text_values`)."""
    if len(refs) == 1:
        return text_values(refs[0], prediction)
    each = [text_values(r, prediction) for r in refs]
    out: dict[str, float] = {}
    for group in _MAX_GROUPS:
        best = max(each, key=lambda v: v[group[0]])  # the first of equal maxima
        out.update({k: best[k] for k in group})
    return out


@scorer(metrics=TEXT_SCORER_METRICS)  # registered as "text" lazily (glotbench.builtins)
def text(extracted, target, *, sample=None, pack=None):
    """The generated text against its gold reference(s): ``pred`` is the text (None when empty), the
    values ROUGE and ROUGE_RAW per item, the maximum over references (an empty answer is scored as
    the empty string). BLEU and chrF read ``pred`` and the gold at corpus level."""
    if target is None:
        return (None if extracted is None else str(extracted)), {}
    refs = references(target, f"scorer 'text', item {getattr(sample, 'id', '?')}")
    pred = None if extracted is None else str(extracted)
    return pred, multi_text_values(refs, pred or "")


# ---------------------------------------------------------------- sacrebleu corpus metrics


def _sacrebleu_metric(kind: str):
    from sacrebleu.metrics import BLEU, CHRF

    if kind == "bleu":
        return BLEU()
    if kind == "chrf":
        return CHRF()
    if kind == "chrfpp":
        return CHRF(word_order=2)
    raise ValueError(f"unknown sacrebleu metric {kind!r}")


@functools.lru_cache(maxsize=None)
def _shared_metric(kind: str):
    """One sacrebleu metric object per kind, for per-item statistics and scores from summed statistics."""
    return _sacrebleu_metric(kind)


def item_stats(item: ScoredItem, kind: str) -> list[int]:
    """sacrebleu's sufficient statistics of one item (its prediction, unparseable = empty, against its
    references), kept on the item: a corpus score is then a sum, however often an interval or a
    paired test recomputes it on resampled lists. With several references each is one reference
    stream of sacrebleu's (the statistics of a segment depend on its own references only, so the sum
    equals ``corpus_score`` with the streams padded by None where an item has fewer)."""
    memo = item.__dict__.setdefault("_sacrebleu_stats", {})
    if kind not in memo:
        refs = references(item.gold, "metric (sacrebleu), an item")
        hyp = "" if item.pred is None else str(item.pred)
        memo[kind] = [int(x) for x in _shared_metric(kind)._extract_corpus_statistics([hyp], [[r] for r in refs])[0]]
    return memo[kind]


def _score_from_sums(kind: str, sums) -> float:
    return float(_shared_metric(kind)._compute_score_from_stats([int(x) for x in sums]).score)


def sacrebleu_corpus(items: list[ScoredItem], kind: str) -> float:
    """sacrebleu's corpus score (0-100) of the items' predictions against their references: the sum
    of the items' statistics, scored as sacrebleu's ``corpus_score`` scores it (items without a
    reference left out)."""
    stats = [item_stats(i, kind) for i in items if i.gold is not None]
    if not stats:
        return float("nan")
    return _score_from_sums(kind, np.sum(np.asarray(stats, dtype=np.int64), axis=0))


@functools.lru_cache(maxsize=None)
def sacrebleu_signature(kind: str) -> str:
    """sacrebleu's signature of the metric with one reference per item (the registered one; a run
    with several references writes :func:`sacrebleu_signature_of`'s)."""
    m = _sacrebleu_metric(kind)
    m.corpus_score(["a"], [["a"]])  # the signature names the number of references, known after a call
    return str(m.get_signature())


@functools.lru_cache(maxsize=None)
def _signature_with_refs(kind: str, nrefs: int) -> str:
    """sacrebleu's signature after a corpus with ``nrefs`` references per segment (0: a variable number)."""
    if nrefs == 1:
        return sacrebleu_signature(kind)
    m = _sacrebleu_metric(kind)
    if nrefs:
        m.corpus_score(["a"], [["a"]] * nrefs)
    else:
        m.corpus_score(["a", "a"], [["a", "a"], ["a", None]])
    return str(m.get_signature())


def sacrebleu_signature_of(kind: str):
    """The signature for the items a run scored: ``nrefs:1`` as registered, ``nrefs:N`` for N
    references each, ``nrefs:var`` for a mix (sacrebleu's own words)."""

    def signature_of(items: list[ScoredItem]) -> str:
        counts = {len(references(i.gold, "metric (sacrebleu), an item")) for i in items if i.gold is not None}
        return _signature_with_refs(kind, counts.pop() if len(counts) == 1 else (1 if not counts else 0))

    return signature_of


def sacrebleu_form(kind: str):
    """Each resample's score from the sum of its items' sacrebleu statistics (integer counts, so any
    order of summing gives the same numbers as ``corpus_score`` on the resampled list). Items
    without a gold reference add nothing (the metric leaves them out); NaN where a resample has none."""

    def form(items, n_resamples, seed):
        if not items:
            return None
        n = len(items)
        kept = [k for k, i in enumerate(items) if i.gold is not None]
        if not kept:
            return np.full(n_resamples, np.nan)
        width = len(item_stats(items[kept[0]], kind))
        stats = np.zeros((n, width), dtype=np.int64)
        stats[kept] = [item_stats(items[k], kind) for k in kept]
        has_gold = np.zeros(n, dtype=np.int64)
        has_gold[kept] = 1
        out = []
        for idx in rs.index_chunks(n, n_resamples, seed):
            counts = np.bincount((idx + (np.arange(idx.shape[0]) * n)[:, None]).ravel(),
                                 minlength=idx.shape[0] * n).reshape(idx.shape[0], n)  # draws of each item per row
            sums = counts.astype(np.int64) @ stats  # (rows, n_stats): integer sums, exact
            golds = counts @ has_gold
            out.extend(_score_from_sums(kind, row) if g else float("nan") for row, g in zip(sums, golds))
        return np.asarray(out, dtype=float)

    return form


_SACREBLEU_DESC = {
    "bleu": "sacrebleu corpus BLEU (0-100; 13a tokenisation, exponential smoothing; unparseable = empty hypothesis)",
    "chrf": "sacrebleu corpus chrF (0-100; character 6-grams, beta 2; unparseable = empty hypothesis)",
    "chrfpp": "sacrebleu corpus chrF++ (0-100; character 6-grams and word 2-grams, beta 2; unparseable = empty hypothesis)",
}
_ROUGE_DESC = ("rouge-score {t} F-measure per item, averaged; no stemming; tokens: lowercased runs of Unicode "
               "letters/digits (NFC), Han and kana characters one per token (rouge-score's default tokenizer "
               "drops non-ASCII letters)")
_RAW_DESC = ("ROUGE_RAW-{n} {what} (Straka et al. 2018, SumeCzech's rouge_raw.py): no stemming, no stop words, "
             "tokens split at regex word boundaries and lowercased (punctuation runs are tokens), within the "
             "reference's first 32 boundary and whitespace replacements; mean over items")
_RAW_FULL_DESC = ("ROUGE_RAW-{n} F, glotbench's variant: the reference's tokenisation applied to the whole text "
                  "(the reference stops splitting after 32 replacements); mean over items")
_BERT_DESC = ("BERTScore {what} (bert-score) per item with the local encoder named in scorer_options.bertscore_model "
              "or GLOTBENCH_BERTSCORE_MODEL; no idf weighting, no baseline rescaling; mean over items")


TEXT_KIND = MetricKind("text", fn=lambda items, stat: sacrebleu_corpus(items, stat),
                       fast=lambda items, n, seed, stat: sacrebleu_form(stat)(items, n, seed))


def _sacrebleu(kind: str) -> Metric:
    return Metric(kind, kind=TEXT_KIND, params={"stat": kind}, format=".2f",
                  description=_SACREBLEU_DESC[kind], signature=sacrebleu_signature(kind),
                  signature_of=sacrebleu_signature_of(kind))


def _raw(n: str, part: str = "") -> Metric:
    name = f"rouge_raw_{n}" + (f"_{part}" if part else "")
    if part == "full":
        return mean_of(name, name, role="secondary", measure=f"rouge_raw_{n}", description=_RAW_FULL_DESC.format(n=n.upper()))
    return mean_of(name, name, role="secondary" if part else "headline",
                   description=_RAW_DESC.format(n=n.upper(), what=part or "F"))


class TM:
    """The text metrics as attributes, registered lazily by reference
    (``glotbench.scoring.text_metrics:TM.bleu``, see glotbench.builtins): looking one up imports
    this module (and sacrebleu, for its signature); listing metrics does not."""

    bleu = _sacrebleu("bleu")
    chrf = _sacrebleu("chrf")
    chrfpp = _sacrebleu("chrfpp")
    rouge1 = mean_of("rouge1", "rouge1", description=_ROUGE_DESC.format(t="ROUGE-1"))
    rouge2 = mean_of("rouge2", "rouge2", description=_ROUGE_DESC.format(t="ROUGE-2"))
    rougeL = mean_of("rougeL", "rougeL", description=_ROUGE_DESC.format(t="ROUGE-L"))
    # the spelling issue 40 and other harnesses use: the same value as rougeL, one measure
    rouge_l = mean_of("rougeL", "rouge_l", measure="rougeL", description=_ROUGE_DESC.format(t="ROUGE-L") + " (= rougeL)")
    rouge_raw_1, rouge_raw_2, rouge_raw_l = _raw("1"), _raw("2"), _raw("l")
    rouge_raw_1_precision, rouge_raw_2_precision, rouge_raw_l_precision = _raw("1", "precision"), _raw("2", "precision"), _raw("l", "precision")
    rouge_raw_1_recall, rouge_raw_2_recall, rouge_raw_l_recall = _raw("1", "recall"), _raw("2", "recall"), _raw("l", "recall")
    rouge_raw_1_full, rouge_raw_2_full, rouge_raw_l_full = _raw("1", "full"), _raw("2", "full"), _raw("l", "full")
    bertscore_f1 = mean_of("bertscore_f1", "bertscore_f1", description=_BERT_DESC.format(what="F1"))
    bertscore = mean_of("bertscore_f1", "bertscore", measure="bertscore_f1", description=_BERT_DESC.format(what="F1") + " (= bertscore_f1)")
    bertscore_precision = mean_of("bertscore_precision", "bertscore_precision", role="secondary",
                                  description=_BERT_DESC.format(what="precision"))
    bertscore_recall = mean_of("bertscore_recall", "bertscore_recall", role="secondary",
                               description=_BERT_DESC.format(what="recall"))
    comet = mean_of("comet", "comet", description="COMET (unbabel-comet) segment score per item against the item's "
                    "reference given its source, with the local checkpoint named in scorer_options.comet_model or "
                    "GLOTBENCH_COMET_MODEL; mean over items (= COMET's system_score)")


METRIC_NAMES = tuple(n for n in vars(TM) if not n.startswith("_"))
BERTSCORE_METRICS = ("bertscore_f1", "bertscore", "bertscore_precision", "bertscore_recall")
COMET_METRICS = ("comet",)
