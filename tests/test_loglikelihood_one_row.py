"""One-token options read from the context's next-token row give the numbers of decoding each option.

The embedded SmolLM2 model scores real MM-Eval items (the tasks' own ``--mode loglikelihood``
requests) twice: through the default path, where a one-token option (" A" .. " D") is an index into
the log-softmax of the context's last logits row, and through the reference path
(``one_row=False``) that decodes context + option for every option. Per-option log-probs must agree
within float rounding and every item must pick the same option. A second case mixes one-token and
multi-token options after one context, in an order that makes the row come from either path.
"""

from __future__ import annotations

import asyncio
import importlib.util

import numpy as np
import pytest

from glotbench.models.base import LoglikelihoodRequest
from mm_eval_samples import mm_eval_samples

if importlib.util.find_spec("llama_cpp") is None:
    pytest.skip("llama-cpp-python is not installed", allow_module_level=True)

TOL = 1e-3  # nats: a context decoded alone vs with the option in one batch differs in the last float bits


@pytest.fixture(scope="module")
def model(smollm2_path):
    from glotbench.models.llamacpp import LlamaCppModel

    m = LlamaCppModel(smollm2_path, n_ctx=2048, n_threads=1)  # one thread: the test machine is shared
    yield m
    asyncio.run(m.aclose())


def _mm_eval_ll_requests(per_task: int) -> list[tuple[str, list[LoglikelihoodRequest]]]:
    from glotbench.settings import RunSettings

    settings = RunSettings(mode="loglikelihood")
    return [(f"{task.name}/{s.id}", task.requests(s, mode="loglikelihood", chat=False, settings=settings))
            for task, s in mm_eval_samples(("mm_eval.knowledge", "mm_eval.semantics"), per_task)]


def test_one_row_matches_decoding_each_option_on_real_mm_eval_items(model):
    items = _mm_eval_ll_requests(15)
    assert len(items) == 30
    n_single = 0
    for item, reqs in items:
        assert len(reqs) >= 2 and len({r.context for r in reqs}) == 1  # options share one context
        n_single += sum(len(model.encode_pair(r.context, r.continuation)[1]) == 1 for r in reqs)
        model._last_row = None
        new = [model._loglikelihood_sync(r) for r in reqs]
        model._last_row = None
        old = [model._loglikelihood_sync(r, one_row=False) for r in reqs]
        a, b = np.array([x.logprob for x in new]), np.array([x.logprob for x in old])
        assert np.abs(a - b).max() < TOL, (item, a, b)
        assert int(a.argmax()) == int(b.argmax()), item  # same choice
        assert [x.n_tokens for x in new] == [x.n_tokens for x in old]
        assert [x.is_greedy for x in new] == [x.is_greedy for x in old]
    assert n_single == 120  # the letter options are one token each: the one-row path was exercised


def test_mixed_single_and_multi_token_options(model):
    ctx = "Асуулт: Монгол улсын нийслэл аль вэ?\nA. Улаанбаатар\nB. Дархан\nC. Эрдэнэт\nD. Ховд\nХариулт:"
    opts = [" A", " Улаанбаатар хот", " B", " Дархан", " C", " D", " None of these", " Ховд"]
    lens = [len(model.encode_pair(ctx, o)[1]) for o in opts]
    assert 1 in lens and max(lens) > 1  # both kinds are present
    for order in (opts, opts[1:] + opts[:1]):  # the row comes from a one-token decode, or from a multi-token one
        model._last_row = None
        new = {o: model._loglikelihood_sync(LoglikelihoodRequest(ctx, o)) for o in order}
        model._last_row = None
        old = {o: model._loglikelihood_sync(LoglikelihoodRequest(ctx, o), one_row=False) for o in order}
        for o in order:
            assert new[o].n_tokens == old[o].n_tokens
            assert new[o].logprob == pytest.approx(old[o].logprob, abs=TOL), o
            assert new[o].is_greedy == old[o].is_greedy
        assert max(order, key=lambda o: new[o].logprob) == max(order, key=lambda o: old[o].logprob)


def test_one_row_is_read_without_decoding_again(model):
    """After the first option, one-token options of the same context decode nothing."""
    ctx = "Question: 2 + 2 = ?\nA. 3\nB. 4\nC. 5\nD. 22\nAnswer:"
    model._last_row = None
    model._loglikelihood_sync(LoglikelihoodRequest(ctx, " A"))
    calls = []
    real = model._eval_logits
    model._eval_logits = lambda *a, **k: calls.append(a) or real(*a, **k)
    try:
        for o in (" B", " C", " D"):
            model._loglikelihood_sync(LoglikelihoodRequest(ctx, o))
        assert calls == []
        model._loglikelihood_sync(LoglikelihoodRequest(ctx, " B"), one_row=False)  # the reference path decodes
        assert len(calls) == 1
    finally:
        del model._eval_logits
