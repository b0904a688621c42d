"""Batched in-process generation gives the same predictions as llama-cpp-python's serial path.

60 real MM-Eval items (20 each of syntax, semantics and knowledge, with the tasks' own prompts
and decoding settings: temperature 0, frequency penalty 1) go through the embedded SmolLM2
model twice: one at a time through ``create_chat_completion`` (the reference) and all at once
through the batch generator. Also: one-token options read from one logits row give the same
log-probs as decoding each option.
"""

from __future__ import annotations

import asyncio
import importlib.util

import pytest

from glotbench.models.base import LoglikelihoodRequest

if importlib.util.find_spec("llama_cpp") is None:
    pytest.skip("llama-cpp-python is not installed", allow_module_level=True)


@pytest.fixture(scope="module")
def model(smollm2_path):
    from glotbench.models.llamacpp import LlamaCppModel

    m = LlamaCppModel(smollm2_path, n_ctx=2048, n_seq=8, n_threads=1)  # one thread: the test machine is shared
    yield m
    asyncio.run(m.aclose())


def _mm_eval_requests(per_level: int):
    from glotbench.errors import DataError
    from glotbench.settings import RunSettings
    from glotbench.tasks.registry import resolve

    settings = RunSettings()
    out = []
    for name in ("mm_eval.syntax", "mm_eval.semantics", "mm_eval.knowledge"):
        task = resolve([name])[0]
        try:
            samples = task.samples(None, per_level)
        except DataError as exc:
            pytest.skip(f"MM-Eval data not available (../shared/data): {exc}")
        for s in samples:
            out.append((task, s, task.requests(s, mode="generate", chat=True, settings=settings)[0]))
    return out


@pytest.mark.xfail(reason="known: 9 of 60 predictions differ (batched decoding changes logits in the last bits and "
                          "greedy answers diverge); batching is opt-in (n_seq > 1) until this passes", strict=False)
def test_batched_generation_gives_the_serial_predictions_on_60_mm_eval_items(model):
    reqs = _mm_eval_requests(20)
    assert len(reqs) == 60
    serial = [model._generate_sync(r) for _, _, r in reqs]

    async def batched():
        return await asyncio.gather(*(model.generate(r) for _, _, r in reqs))

    got = asyncio.run(batched())
    assert model._batcher is not None  # the batch path served them
    diff = []
    for (task, sample, _), a, b in zip(reqs, serial, got):
        pa = task.score(sample, [a], mode="generate").pred
        pb = task.score(sample, [b], mode="generate").pred
        if pa != pb:
            diff.append((task.name, sample.id, a.text, b.text))
        assert b.input_tokens == a.input_tokens
    assert diff == []
    same_text = sum(a.text == b.text for a, b in zip(serial, got))
    assert same_text >= 57, f"only {same_text}/60 identical texts"


def test_one_token_options_read_from_one_row(model):
    ctx = "Question: the capital of France is Paris. True or false?\nAnswer:"
    opts = [" A", " B", " C", " D", " True", " False"]
    cached = [model._loglikelihood_sync(LoglikelihoodRequest(ctx, o)) for o in opts]
    fresh = []
    for o in opts:
        model._last_row = None  # force a decode for each option
        fresh.append(model._loglikelihood_sync(LoglikelihoodRequest(ctx, o)))
    for a, b in zip(cached, fresh):
        assert a.n_tokens == b.n_tokens
        assert a.logprob == pytest.approx(b.logprob, abs=1e-4)
        assert a.is_greedy == b.is_greedy
