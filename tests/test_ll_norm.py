"""``--mode loglikelihood``'s ``accuracy_norm`` is lm-eval's ``acc_norm``, checked by value.

lm-eval (``ConfigurableTask.process_results`` for ``multiple_choice``) sends ``target_delimiter +
choice`` for each choice and picks ``np.argmax(lls / completion_len)`` with ``completion_len =
[float(len(i)) for i in choices]``: characters of the option string as scored (the delimiter not
counted). The byte- and token-normalised variants are re-stated here the same plain way.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from glotbench.models.base import LoglikelihoodResult
from glotbench.tasks.spec import TaskSpec
from glotbench.tasks.task import Sample, Task


def _task(continuation: str = "label") -> Task:
    return Task(TaskSpec(name="t.ll", version="1", language="en", dataset={"splits": {"test": "x.json"}},
                         output_type="multiple_choice", prompt={"ll_continuation": continuation}))


def _sample(labels: list[str], texts: list[str], gold: str) -> Sample:
    return Sample(task="t.ll", id="0", index=0, vars={"input": "Q?"}, target=gold, choices=texts, labels=labels)


def _outputs(lps: list[float], n_tokens: list[int] | None = None) -> list[LoglikelihoodResult]:
    n_tokens = n_tokens or [1] * len(lps)
    return [LoglikelihoodResult(logprob=lp, is_greedy=False, n_tokens=n) for lp, n in zip(lps, n_tokens)]


def test_accuracy_norm_divides_by_the_scored_label_not_the_option_text():
    """" A" is e times as likely as " B"; both labels are one character, so acc_norm picks A. The old
    rule divided by the bytes of the option *text* (1 vs 10) and picked B."""
    task = _task("label")
    s = _sample(["A", "B"], ["x", "y" * 10], gold="A")
    scored = task.score(s, _outputs([-1.0, -2.0]), mode="loglikelihood")
    assert scored.pred == "A" and scored.values["correct"] == 1.0
    assert scored.values["correct_norm"] == 1.0
    assert scored.extracted["pred_norm"] == "A"


def _lm_eval_acc_norm(lls: list[float], choices: list[str], gold: int) -> float:
    """lm-eval's rule, as written there."""
    completion_len = np.array([float(len(i)) for i in choices])
    pred_norm = np.argmax(np.array(lls) / completion_len)
    return 1.0 if pred_norm == gold else 0.0


def _argmax_per(lls: list[float], lengths: list[int]) -> int:
    return int(np.argmax(np.array(lls) / np.array([float(max(1, n)) for n in lengths])))


_option = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=12)
_lp = st.floats(min_value=-60.0, max_value=-1e-3, allow_nan=False)


@settings(max_examples=300, deadline=None)
@given(data=st.data(), k=st.integers(min_value=2, max_value=6), as_text=st.booleans())
def test_accuracy_norm_matches_lm_eval_rule(data, k, as_text):
    texts = data.draw(st.lists(_option, min_size=k, max_size=k), label="texts")
    labels = data.draw(st.lists(_option, min_size=k, max_size=k, unique=True), label="labels")
    lps = data.draw(st.lists(_lp, min_size=k, max_size=k), label="logprobs")
    n_tokens = data.draw(st.lists(st.integers(min_value=1, max_value=9), min_size=k, max_size=k), label="n_tokens")
    gold = data.draw(st.integers(min_value=0, max_value=k - 1), label="gold")
    task = _task("text" if as_text else "label")
    choices = texts if as_text else labels  # what lm-eval's doc_to_choice would return
    scored = task.score(_sample(labels, texts, labels[gold]), _outputs(lps, n_tokens), mode="loglikelihood")

    assert scored.values["correct"] == (1.0 if int(np.argmax(lps)) == gold else 0.0)
    assert scored.values["correct_norm"] == _lm_eval_acc_norm(lps, choices, gold)
    assert scored.values["correct_norm_bytes"] == (1.0 if _argmax_per(lps, [len(c.encode("utf-8")) for c in choices]) == gold else 0.0)
    assert scored.values["correct_norm_tokens"] == (1.0 if _argmax_per(lps, n_tokens) == gold else 0.0)


def test_loglikelihood_requests_send_the_delimiter_and_the_option():
    """What is scored is " " + the option: the normalisation counts the option's characters."""
    from glotbench.tasks.request_settings import RequestSettings

    s = _sample(["A", "B"], ["egy", "kettő"], gold="B")
    for mode, want in (("label", [" A", " B"]), ("text", [" egy", " kettő"])):
        reqs = _task(mode).requests(s, mode="loglikelihood", chat=False, settings=RequestSettings())
        assert [r.continuation for r in reqs] == want


def test_accuracy_norm_metric_means_the_per_item_values():
    from glotbench.scoring.metrics import ScoredItem, get_metric

    items = [ScoredItem(gold="A", pred="A", values={"correct": 1.0, "correct_norm": v, "correct_norm_bytes": 1 - v,
                                                     "correct_norm_tokens": 1.0}) for v in (1.0, 0.0, 0.0, 1.0, 1.0)]
    assert math.isclose(get_metric("accuracy_norm")(items), 0.6)
    assert math.isclose(get_metric("accuracy_norm_bytes")(items), 0.4)
    assert math.isclose(get_metric("accuracy_norm_tokens")(items), 1.0)
