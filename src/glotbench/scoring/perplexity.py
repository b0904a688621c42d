"""Corpus metrics of a text's log-likelihood (``output_type: loglikelihood_rolling`` tasks).

Each item is one text scored by the model (log P(text), lm-eval's ``loglikelihood_rolling``:
glotbench.models.rolling); its per-item values are ``nll`` (the negative log-likelihood, nats),
``n_tokens``, ``n_bytes`` (UTF-8) and ``n_words`` (:func:`glotbench.tasks.task.score_text`). Every
metric is corpus-level, pooled over the texts (as lm-eval's ``weighted_perplexity`` /
``bits_per_byte`` aggregations), not a mean of per-text values:

* ``bits_per_byte`` = sum(nll) / ln 2 / sum(n_bytes): tokenizer-independent, the headline;
* ``perplexity`` = exp(sum(nll) / sum(n_tokens)): token-level, so only comparable between models
  with the same tokenizer;
* ``word_perplexity`` = exp(sum(nll) / sum(n_words));
* ``byte_perplexity`` = exp(sum(nll) / sum(n_bytes)) (lm-eval's byte_perplexity);
* ``continuation_perplexity`` = exp(sum(nll) / sum(n_items)), ``n_items`` 1 per item: exp of the mean
  negative log-likelihood of one target continuation per item (lm-eval's ``perplexity`` of an
  ``output_type: loglikelihood`` task such as lambada: ``exp(-mean(ll))``).

Their intervals are the percentile bootstrap over texts, like every corpus metric.
"""

from __future__ import annotations

import math

from glotbench.scoring.metric_kinds import by_stat, register_kind
from glotbench.scoring.metrics import Metric, ScoredItem, register_metric


def _sums(items: list[ScoredItem], den: str) -> tuple[float, float]:
    nll = d = 0.0
    for it in items:
        v = it.values
        if v.get("nll") is None or v.get(den) is None:
            continue
        nll += v["nll"]
        d += v[den]
    return nll, d


def _exp_ratio(items: list[ScoredItem], den: str) -> float:
    nll, d = _sums(items, den)
    if not d:
        return float("nan")
    try:
        return math.exp(nll / d)
    except OverflowError:
        return float("inf")


def perplexity(items: list[ScoredItem]) -> float:
    return _exp_ratio(items, "n_tokens")


def word_perplexity(items: list[ScoredItem]) -> float:
    return _exp_ratio(items, "n_words")


def byte_perplexity(items: list[ScoredItem]) -> float:
    return _exp_ratio(items, "n_bytes")


def continuation_perplexity(items: list[ScoredItem]) -> float:
    return _exp_ratio(items, "n_items")


def bits_per_byte(items: list[ScoredItem]) -> float:
    nll, d = _sums(items, "n_bytes")
    return nll / math.log(2) / d if d else float("nan")


register_kind(by_stat("perplexity", {  # fast forms: the pooled sums of each resample (below)
    "bits_per_byte": (bits_per_byte, lambda items, n, seed: _pooled_form("n_bytes", "bpb")(items, n, seed)),
    "perplexity": (perplexity, lambda items, n, seed: _pooled_form("n_tokens", "ppl")(items, n, seed)),
    "word_perplexity": (word_perplexity, lambda items, n, seed: _pooled_form("n_words", "ppl")(items, n, seed)),
    "byte_perplexity": (byte_perplexity, lambda items, n, seed: _pooled_form("n_bytes", "ppl")(items, n, seed)),
    "continuation_perplexity": (continuation_perplexity,
                                lambda items, n, seed: _pooled_form("n_items", "ppl")(items, n, seed)),
}))

for _m in (
    Metric("bits_per_byte", kind="perplexity", params={"stat": "bits_per_byte"}, direction="lower", format=".4f",
           description="a text's log-likelihood: sum of negative log-likelihoods / ln 2 / sum of UTF-8 bytes, over "
           "all texts (lm-eval's bits_per_byte)"),
    Metric("perplexity", kind="perplexity", params={"stat": "perplexity"}, direction="lower", format=".4g", role="secondary",
           description="a text's log-likelihood: exp(sum of negative log-likelihoods / sum of tokens), over all "
           "texts (token-level: depends on the tokenizer)"),
    Metric("word_perplexity", kind="perplexity", params={"stat": "word_perplexity"}, direction="lower", format=".4g",
           role="secondary", description="a text's log-likelihood: exp(sum of negative log-likelihoods / sum of "
           "whitespace-separated words), over all texts (lm-eval's word_perplexity)"),
    Metric("byte_perplexity", kind="perplexity", params={"stat": "byte_perplexity"}, direction="lower", format=".4g",
           role="secondary", description="a text's log-likelihood: exp(sum of negative log-likelihoods / sum of UTF-8 "
           "bytes), over all texts (lm-eval's byte_perplexity)"),
    Metric("continuation_perplexity", kind="perplexity", params={"stat": "continuation_perplexity"}, direction="lower",
           format=".4g", description="one target continuation per item: exp(mean negative log-likelihood of the "
           "continuation) (lm-eval's perplexity of an output_type loglikelihood task, e.g. lambada)"),
):
    register_metric(_m)


# ---------------------------------------------------------------- vectorised bootstrap forms
# Per resample: the sums of nll and of the count over the drawn texts that have both (the same
# numbers as calling the metric on each resample: tests/test_metric_values.py, tests/test_resample.py).


def _pooled_form(den: str, kind: str):
    def form(items, n_resamples: int, seed: int):
        import numpy as np

        from glotbench.scoring import resample as rs

        n = len(items)
        nll = np.zeros(n)
        cnt = np.zeros(n)
        for k, it in enumerate(items):
            v = it.values
            if v.get("nll") is not None and v.get(den) is not None:
                nll[k], cnt[k] = v["nll"], v[den]

        def per_chunk(idx):
            a, d = nll[idx].sum(axis=1), cnt[idx].sum(axis=1)
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                # the same order of operations as the plain functions, so every bit agrees
                out = a / math.log(2) / d if kind == "bpb" else np.exp(a / d)
            return np.where(d != 0, out, np.nan)

        return rs._collect(n, n_resamples, seed, per_chunk, rs.MAX_CELLS)

    return form


