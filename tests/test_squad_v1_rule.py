"""SQAD is scored with HF ``evaluate``'s ``squad`` metric (the official SQuAD v1.1 script), not
``squad_v2`` (issue 37 finding 8): every gold is kept, so a gold that normalises to nothing
("a", the Czech "and", is an English article to SQuAD's normaliser) matches an answer that
normalises to nothing too. Checked against a plain re-statement of the v1.1 script over generated
inputs."""

from __future__ import annotations

import re
import string
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glotbench.benchmarks.czech_bench import qa_levels
from glotbench.scoring.extractive_qa import score_answer_v1

# ----------------------------------------------------------------------------- the v1.1 script, restated


def v1_normalize(s):
    s = s.lower()
    s = "".join(ch for ch in s if ch not in set(string.punctuation))
    s = re.sub(r"\b(a|an|the)\b", " ", s)
    return " ".join(s.split())


def v1_f1(prediction, ground_truth):
    p, g = v1_normalize(prediction).split(), v1_normalize(ground_truth).split()
    num_same = sum((Counter(p) & Counter(g)).values())
    if num_same == 0:
        return 0
    precision, recall = num_same / len(p), num_same / len(g)
    return 2 * precision * recall / (precision + recall)


def v1_em(prediction, ground_truth):
    return v1_normalize(prediction) == v1_normalize(ground_truth)


def v1_max(fn, prediction, ground_truths):
    return max(fn(prediction, gt) for gt in ground_truths)


def v1_corpus(predictions, gold_lists):
    """``compute_score``: 100 x mean over questions of the max over golds."""
    em = sum(v1_max(v1_em, p, g) for p, g in zip(predictions, gold_lists))
    f1 = sum(v1_max(v1_f1, p, g) for p, g in zip(predictions, gold_lists))
    return 100.0 * em / len(predictions), 100.0 * f1 / len(predictions)


# ----------------------------------------------------------------------------- inputs

WORDS = st.sampled_from(["a", "an", "the", "A", "The", "Praha", "praha", "Vltava", "řeka", "na", "v", "1348",
                         "Karel", "IV.", "U.S.", "don't", ",", ".", "-", "„Praha“", "a.", "ano", "ne"])
ANSWER = st.lists(WORDS, max_size=5).map(" ".join) | st.text(max_size=12)
GOLDS = st.lists(ANSWER, min_size=1, max_size=4)


def test_gold_that_normalises_to_nothing_matches():
    # the case: gold "a" (Czech "and"), answer "a": v1 gives EM 1 (v2 dropped the gold: EM 0 vs "")
    assert score_answer_v1("a", ["a"]) == (1.0, 0.0)
    v = qa_levels.sqad_values("a", ["a"])
    assert (v["cb_em_raw"], v["cb_f1_raw"]) == (1.0, 0.0)
    assert (v["cb_em_raw"], v["cb_f1_raw"]) == (float(v1_max(v1_em, "a", ["a"])), float(v1_max(v1_f1, "a", ["a"])))
    # an answer that normalises to nothing against a real gold, and a gold list holding both
    assert qa_levels.sqad_values("the", ["Praha", "a"])["cb_em_raw"] == 1.0
    assert qa_levels.sqad_values("", ["Praha"])["cb_em_raw"] == 0.0


@settings(max_examples=400, deadline=None)
@given(pred=ANSWER, golds=GOLDS)
def test_sqad_item_is_the_v1_script(pred, golds):
    v = qa_levels.sqad_values(pred, golds)
    assert v["cb_em_raw"] == float(v1_max(v1_em, pred, golds))
    assert v["cb_f1_raw"] == pytest.approx(v1_max(v1_f1, pred, golds), abs=1e-12)


@settings(max_examples=100, deadline=None)
@given(rows=st.lists(st.tuples(ANSWER, GOLDS), min_size=1, max_size=8))
def test_sqad_corpus_means_are_compute_score(rows):
    import glotbench.benchmarks.czech_bench.metrics  # noqa: F401  (registers the cb_* metrics)
    from glotbench.scoring.metrics import ScoredItem, get_metric

    items = [ScoredItem(gold=None, pred=None, values=qa_levels.sqad_values(p, g)) for p, g in rows]
    em, f1 = v1_corpus([p for p, _ in rows], [g for _, g in rows])
    assert 100 * get_metric("cb_em_raw")(items) == pytest.approx(em)
    assert 100 * get_metric("cb_f1_raw")(items) == pytest.approx(f1)


def test_squad2_keeps_its_v2_rule():
    # SQuAD 2.0-cs is scored with squad_v2: the empty-normalising gold is dropped, "" is the no-answer gold
    v = qa_levels.squad_values("a", ["a"])
    assert (v["cb_em_raw"], v["cb_f1_raw"]) == (1.0, 1.0)
    assert qa_levels.squad_values("Praha", ["a"])["cb_em_raw"] == 0.0
