"""Several references per item for the text metrics (issue 55): BLEU / chrF / chrF++ equal
sacrebleu's own multi-reference corpus scores (reference streams padded with None), ROUGE and
ROUGE_RAW the maximum over an item's references (Czech-Bench §4.3.2); every metric's fast
(resample) form equals the plain per-resample loop on such items; bad golds are one line."""

from __future__ import annotations

import random
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from glotbench.errors import DataError
from glotbench.scoring.metrics import ScoredItem, loop_stats
from glotbench.scoring.text_metrics import TM, multi_text_values, text, text_values
from value_oracles import MULTIREF_ORACLES, random_text, same, text_item

SETTINGS = settings(max_examples=25, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.mark.parametrize("name", sorted(MULTIREF_ORACLES))
def test_multi_reference_value_equals_its_oracle(name):
    oracle = MULTIREF_ORACLES[name]
    metric = getattr(TM, name)

    @SETTINGS
    @given(oracle.items)
    def check(items):
        got, want = metric(items), oracle.compute(items)
        assert same(got, want, rel=1e-9), (name, got, want)

    check()


@pytest.mark.parametrize("name", ["bleu", "chrf", "chrfpp", "rouge1", "rouge_raw_l", "rouge_raw_2_recall"])
def test_multi_reference_fast_form_is_the_plain_loop(name):
    metric = getattr(TM, name)

    @settings(max_examples=8, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
    @given(MULTIREF_ORACLES[name].items.filter(lambda xs: len(xs) >= 2), st.integers(0, 3))
    def check(items, seed):
        got = metric.resample_stats(items, 25, seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = loop_stats(items, metric, 25, seed)
        if metric.key is None:  # sacrebleu: integer sums, exact
            assert np.array_equal(got, want, equal_nan=True)
        else:  # a mean of fractional values: numpy's pairwise sum may differ in the last bit
            assert np.allclose(got, want, rtol=1e-12, atol=0, equal_nan=True)

    check()


def test_sacrebleu_multi_reference_by_hand():
    """Two items, the second with one reference: sacrebleu's CLI-equivalent API with a second
    stream padded by None."""
    import sacrebleu

    hyps = ["the cat sat on a mat", "hello there world"]
    golds = [["a cat sat on the mat", "the cat is sitting on the mat"], "hello world"]
    items = [text_item(g, h) for g, h in zip(golds, hyps)]
    streams = [["a cat sat on the mat", "hello world"], ["the cat is sitting on the mat", None]]
    assert TM.bleu(items) == pytest.approx(sacrebleu.corpus_bleu(hyps, streams).score, rel=1e-12)
    assert TM.chrf(items) == pytest.approx(sacrebleu.corpus_chrf(hyps, streams).score, rel=1e-12)
    # the second reference raises BLEU above the first reference alone
    assert TM.bleu(items) > sacrebleu.corpus_bleu(hyps, [streams[0]]).score


def test_one_reference_in_a_list_is_the_string():
    rng = random.Random(5)
    for _ in range(30):
        gold, pred = random_text(rng), random_text(rng)
        assert text(pred, [gold]) == text(pred, gold)
        assert multi_text_values([gold], pred) == text_values(gold, pred)


def test_rouge_takes_the_best_reference_per_type():
    refs = ["a b c d", "a b x y z"]
    vals = multi_text_values(refs, "a b x y z")
    assert vals["rouge1"] == 1.0 and vals["rouge_raw_2"] == 1.0
    each = [text_values(r, "a b x y z") for r in refs]
    assert vals["rouge_raw_1_precision"] == each[1]["rouge_raw_1_precision"]


@pytest.mark.parametrize("gold, msg", [([], "empty list"), (["ok", 3], "reference 2 of the gold must be a string")])
def test_bad_gold_is_one_line(gold, msg):
    class S:
        id = "it-7"

    with pytest.raises(DataError, match=msg) as err:
        text("x", gold, sample=S())
    assert "it-7" in str(err.value) and "\n" not in str(err.value)


def test_sacrebleu_stats_for_list_gold_without_text_scorer():
    items = [ScoredItem(gold=["a b c", "a b d"], pred="a b d"), ScoredItem(gold=["x y"], pred=None)]
    import sacrebleu

    assert TM.bleu(items) == pytest.approx(sacrebleu.corpus_bleu(["a b d", ""], [["a b c", "x y"], ["a b d", None]]).score)
