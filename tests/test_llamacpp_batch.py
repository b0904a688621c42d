"""Batched in-process generation gives the same predictions as llama-cpp-python's serial path.

60 real MM-Eval items (20 each of syntax, semantics and knowledge, with the tasks' own prompts
and decoding settings: temperature 0, frequency penalty 1) go through the embedded SmolLM2
model twice: one at a time through ``create_chat_completion`` (the reference) and all at once
through the batch generator. Below that, the reason it holds: every logits row the generator's
loop reads (prompts split into chunks beside other sequences, a slot's cached prefix reused) is
bitwise the row a lone ``Llama.eval`` computes. Also: one-token options read from one logits row
give the same log-probs as decoding each option, and a cancelled request does not stop the generator.
"""

from __future__ import annotations

import asyncio
import importlib.util
from concurrent.futures import Future

import numpy as np
import pytest

from glotbench.models.base import LoglikelihoodRequest
from mm_eval_samples import mm_eval_samples

if importlib.util.find_spec("llama_cpp") is None:
    pytest.skip("llama-cpp-python is not installed", allow_module_level=True)


@pytest.fixture(scope="module")
def model(smollm2_path):
    from glotbench.models.llamacpp import LlamaCppModel

    m = LlamaCppModel(smollm2_path, n_ctx=2048, n_seq=8, n_threads=1)  # one thread: the test machine is shared
    yield m
    asyncio.run(m.aclose())


def _mm_eval_requests(per_level: int):
    from glotbench.tasks.request_settings import RequestSettings

    settings = RequestSettings()
    return [(task, s, task.requests(s, mode="generate", chat=True, settings=settings)[0])
            for task, s in mm_eval_samples(("mm_eval.syntax", "mm_eval.semantics", "mm_eval.knowledge"), per_level)]


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


class _RecordingGreedy:
    """Stands in for a job's llama.cpp sampler chain: greedy, keeps every logits row it was given."""

    def __init__(self, n_vocab: int):
        self.n_vocab, self.rows = n_vocab, []

    def sample(self, ctx, idx: int) -> int:
        import llama_cpp

        row = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(ctx.ctx, idx), shape=(self.n_vocab,)).copy()
        self.rows.append(row)
        return int(row.argmax())


def _lone_rows(llm, prompt: list[int], steps: int) -> list[np.ndarray]:
    """Logits rows of a lone greedy decode through llama-cpp-python's own ``Llama.eval`` (fresh cache)."""
    import llama_cpp

    def last():
        return np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(llm._ctx.ctx, -1), shape=(llm.n_vocab(),)).copy()

    llm.reset()
    llm._ctx.kv_cache_clear()
    llm.eval(prompt)
    rows = [last()]
    for _ in range(steps - 1):
        tok = int(rows[-1].argmax())
        if llama_cpp.llama_vocab_is_eog(llm._model.vocab, tok):
            break
        llm.eval([tok])
        rows.append(last())
    return rows


def test_batched_logits_are_bitwise_those_of_a_lone_decode(model):
    """7 prompts through 3 slots: later prompts are decoded while other sequences generate and reuse a
    cached prefix (same task, same instructions), their own slot's or one copied from another slot's
    stream; every logits row must be bitwise equal."""
    from glotbench.models.llamacpp_batch import BatchGenerator, _Job

    llm = model._llm
    gen = BatchGenerator(llm, n_seq=3)
    try:
        prompts = []
        for _, _, r in _mm_eval_requests(3)[:7]:
            res = gen._formatter(messages=[dict(m) for m in r.messages])
            prompts.append(llm.tokenize(res.prompt.encode(), add_bos=not res.added_special, special=True))
        steps = [6 + 5 * (k % 3) for k in range(len(prompts))]  # jobs end at different steps: later ones are
        jobs = [_Job(prompt=p, max_tokens=n, stops=[], sampler=_RecordingGreedy(llm.n_vocab()), future=Future())
                for p, n in zip(prompts, steps)]  # admitted while others generate
        kept = []  # prompt tokens each job found in its slot's cache
        admit = gen._admit

        def recording_admit(job, free):
            admit(job, free)
            kept.append(job.fed)

        gen._admit = recording_admit
        for j in jobs:
            gen._queue.put(j)
        for j in jobs:
            j.future.result(timeout=600)
        # the first prompt starts from an empty cache; the others reuse a cached prefix, copied from
        # the first slot's stream (one admission per step) or left in their own slot
        assert kept[0] == 0 and all(k > 0 for k in kept[1:]), kept
    finally:
        gen.close()
    for k, (p, j, n) in enumerate(zip(prompts, jobs, steps)):
        assert len(j.sampler.rows) >= n, f"prompt {k}"
        lone = _lone_rows(llm, p, len(j.sampler.rows))
        assert len(lone) == len(j.sampler.rows), f"prompt {k}"
        for t, (a, b) in enumerate(zip(j.sampler.rows, lone)):
            assert np.array_equal(a, b), f"prompt {k}, step {t}: max |diff| {np.abs(a - b).max()}"


def test_a_cancelled_request_is_dropped_and_the_others_still_answer(model):
    """A request timed out or interrupted by the caller: the generator drops it and goes on (it used to
    die on setting the cancelled future's result, and every later request hung)."""
    gen = model._batch_generator()
    knobs = {"max_tokens": 40, "temperature": 0.0}
    futs = [gen.submit(messages=None, prompt=f"Count to ten, then to {n}:", knobs=knobs) for n in (20, 30, 40)]
    assert futs[0].cancel()
    assert all(f.result(timeout=300)[2] > 0 for f in futs[1:])
    assert gen.submit(messages=None, prompt="One more:", knobs=knobs).result(timeout=300)[3] in {"stop", "length"}


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
