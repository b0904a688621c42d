"""The per-item values that mean metrics average, checked against the reference rules restated here.

* SQuAD: the official evaluation scripts (v1.1 ``evaluate-v1.1.py`` and v2.0 ``evaluate-v2.0.py``;
  HF ``evaluate``'s "squad" / "squad_v2" wrap them), restated line by line: ``exact_match`` /
  ``bow_f1`` of the ``extractive_qa`` scorer (SQuAD 2.0 handling, its ``squad`` profile) and
  Czech-Bench's SQAD levels (``cb_em_raw`` / ``cb_f1_raw``; the reference calls ``evaluate``'s
  v1 "squad").
* ``accuracy_norm`` in ``--mode loglikelihood``: lm-eval's ``acc_norm``, the argmax of each
  option's log-probability divided by the character length of the option actually scored (the
  label, or the option text with ``ll_continuation: text``; the delimiter space not counted).
"""

from __future__ import annotations

import re
import string
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

SETTINGS = settings(max_examples=150, deadline=None, derandomize=True)


# ---------------------------------------------------------------- the official SQuAD scripts, restated


def squad_normalize_answer(s: str) -> str:
    def remove_articles(text):
        return re.sub(r"\b(a|an|the)\b", " ", text)

    def white_space_fix(text):
        return " ".join(text.split())

    def remove_punc(text):
        exclude = set(string.punctuation)
        return "".join(ch for ch in text if ch not in exclude)

    return white_space_fix(remove_articles(remove_punc(s.lower())))


def v1_f1(prediction: str, ground_truth: str) -> float:
    prediction_tokens = squad_normalize_answer(prediction).split()
    ground_truth_tokens = squad_normalize_answer(ground_truth).split()
    common = Counter(prediction_tokens) & Counter(ground_truth_tokens)
    num_same = sum(common.values())
    if num_same == 0:
        return 0.0
    precision = 1.0 * num_same / len(prediction_tokens)
    recall = 1.0 * num_same / len(ground_truth_tokens)
    return (2 * precision * recall) / (precision + recall)


def v1_em(prediction: str, ground_truth: str) -> float:
    return float(squad_normalize_answer(prediction) == squad_normalize_answer(ground_truth))


def v1_item(prediction: str, golds: list[str]) -> tuple[float, float]:
    """evaluate-v1.1.py: metric_max_over_ground_truths, every gold kept."""
    return max(v1_em(prediction, g) for g in golds), max(v1_f1(prediction, g) for g in golds)


def v2_f1(a_gold: str, a_pred: str) -> float:
    gold_toks = squad_normalize_answer(a_gold).split() if a_gold else []
    pred_toks = squad_normalize_answer(a_pred).split() if a_pred else []
    common = Counter(gold_toks) & Counter(pred_toks)
    num_same = sum(common.values())
    if len(gold_toks) == 0 or len(pred_toks) == 0:
        return float(gold_toks == pred_toks)
    if num_same == 0:
        return 0.0
    precision = 1.0 * num_same / len(pred_toks)
    recall = 1.0 * num_same / len(gold_toks)
    return (2 * precision * recall) / (precision + recall)


def v2_item(prediction: str, golds: list[str]) -> tuple[float, float]:
    """evaluate-v2.0.py get_raw_scores: golds that normalise to empty dropped; none left: gold ''."""
    gold_answers = [a for a in golds if squad_normalize_answer(a)] or [""]
    em = max(float(squad_normalize_answer(a) == squad_normalize_answer(prediction)) for a in gold_answers)
    f1 = max(v2_f1(a, prediction) for a in gold_answers)
    return em, f1


WORDS = ["Praha", "praha", "the", "a", "an", "Karel", "IV.", "řeka", "Vltava,", "1348", "-", "!"]
TEXT = st.lists(st.sampled_from(WORDS), max_size=5).map(" ".join)
GOLDS = st.lists(TEXT, min_size=1, max_size=3)


@SETTINGS
@given(TEXT, st.lists(TEXT, max_size=3))
def test_extractive_qa_squad_profile_is_the_official_v2_script(pred, golds):
    from glotbench.scoring.extractive_qa import item_values

    v = item_values(pred, golds, "en", "squad", no_answer_strings=())
    assert (v["exact_match"], v["bow_f1"]) == pytest.approx(v2_item(pred, golds)), (pred, golds)


def _sqad(pred, golds):
    from glotbench.benchmarks.czech_bench.qa_levels import sqad_values

    v = sqad_values(pred, golds)
    return v["cb_em_raw"], v["cb_f1_raw"]


@SETTINGS
@given(TEXT.filter(lambda t: squad_normalize_answer(t) != ""),
       st.lists(TEXT.filter(lambda t: squad_normalize_answer(t) != ""), min_size=1, max_size=3))
def test_sqad_levels_are_the_official_v1_script_on_non_empty_answers(pred, golds):
    assert _sqad(pred, golds) == pytest.approx(v1_item(pred, golds)), (pred, golds)


@pytest.mark.parametrize("pred,golds", [("the", ["a", "Praha"]), ("a", ["an"]), ("the", ["the"])])
def test_sqad_levels_are_the_official_v1_script_when_a_gold_normalises_to_empty(pred, golds):
    assert _sqad(pred, golds) == pytest.approx(v1_item(pred, golds)), (pred, golds)


# ---------------------------------------------------------------- lm-eval's acc / acc_norm


def lm_eval_acc_norm(logprobs: list[float], choices: list[str]) -> int:
    """lm-eval ``ConfigurableTask.process_results`` (multiple_choice): ``completion_len =
    [float(len(i)) for i in choices]`` over ``doc_to_choice`` (each is sent after the target
    delimiter, which is not counted), ``acc_norm = argmax(lls / completion_len)``; ties go to the
    first (``np.argmax``)."""
    norm = [lp / float(len(c)) for lp, c in zip(logprobs, choices)]
    return max(range(len(norm)), key=lambda k: (norm[k], -k))


def test_accuracy_norm_is_lm_evals_acc_norm():
    from glotbench.models.base import LoglikelihoodResult
    from glotbench.tasks.spec import TaskSpec
    from glotbench.tasks.task import Sample, Task, score_loglikelihood

    # ll_continuation: label (the default for the multiple-choice YAMLs): labels A-D are what is
    # scored (" A" ... " D": one length), the option texts are not
    task = Task(TaskSpec(name="t", version="1", language="en", dataset={"splits": {"test": "x.json"}},
                         output_type="multiple_choice", prompt={"ll_continuation": "label"}))
    sample = Sample(task="t", id="1", index=0, vars={}, target="A", choices=["ab", "abcdefgh", "abcdefghijklmnop", "a"],
                    labels=["A", "B", "C", "D"])
    lps = [-1.0, -1.2, -2.5, -3.0]  # the first option is e^0.2 times likelier; its text is shorter
    outputs = [LoglikelihoodResult(logprob=lp, is_greedy=False, n_tokens=1) for lp in lps]
    scored = score_loglikelihood(sample, outputs, task.ll_options(sample))
    want = sample.labels[lm_eval_acc_norm(lps, sample.labels)]  # doc_to_choice: the labels
    assert want == "A"
    assert scored.extracted["pred_norm"] == want
    assert scored.values["correct_norm"] == float(want == sample.target)
    assert task.score(sample, outputs, mode="loglikelihood").values["correct_norm"] == scored.values["correct_norm"]
