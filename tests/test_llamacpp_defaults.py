"""Defaults of the in-process llama.cpp model: batch slots sized to a KV budget, threads, and the
per-request timeout scaled by the slots a request shares its decode steps with."""

from __future__ import annotations

import asyncio
import importlib.util

import pytest

from glotbench.engine.caller import CachedCaller, RequestFailed
from glotbench.engine.journal import Journal
from glotbench.engine.retry import RetryPolicy
from glotbench.models import llamacpp
from glotbench.models.base import GenRequest, GenResult, Model

needs_llama = pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None,
                                 reason="llama-cpp-python is not installed")


@needs_llama
def test_default_slots_follow_the_kv_budget(smollm2_path):
    import llama_cpp

    m = llamacpp.LlamaCppModel(smollm2_path, n_ctx=2048, n_threads=1)
    try:
        assert m.n_seq == m.max_parallel == m.timeout_scale == 24  # 45 MiB per 2048-cell slot: 28 fit in 1.25 GiB, capped
        # SmolLM2-135M: 30 layers, 576-wide, 3 of 9 heads for K/V -> 2 * 2 bytes * 30 * 192 = 23,040 bytes per cell
        per_cell = 2 * 2 * 30 * 192
        assert llamacpp.default_n_seq(m._llm, 2048, budget=per_cell * 2048 * 3) == 3
        assert llamacpp.default_n_seq(m._llm, 2048, budget=per_cell * 2048 * 3 - 1) == 2
        assert llamacpp.default_n_seq(m._llm, 2048, budget=1) == 1
        assert llamacpp.default_n_seq(m._llm, 256, budget=per_cell * 256 * 100) == 24  # capped
        mm = m._llm._model.model
        assert (llama_cpp.llama_model_n_layer(mm), llama_cpp.llama_model_n_embd(mm)) == (30, 576)
    finally:
        asyncio.run(m.aclose())
    serial = llamacpp.LlamaCppModel(smollm2_path, n_ctx=512, n_threads=1, n_seq=1)
    try:
        assert serial.max_parallel == serial.timeout_scale == 1
    finally:
        asyncio.run(serial.aclose())


def test_threads_all_cores_when_batched_half_when_serial(monkeypatch):
    monkeypatch.setattr(llamacpp, "usable_cores", lambda: 4)
    assert llamacpp.default_threads(batched=True) == 4
    assert llamacpp.default_threads(batched=False) == 2
    monkeypatch.setattr(llamacpp, "usable_cores", lambda: 64)
    assert llamacpp.default_threads(batched=True) == 8  # at most 8
    monkeypatch.setattr(llamacpp, "usable_cores", lambda: 1)
    assert llamacpp.default_threads(batched=False) == llamacpp.default_threads(batched=True) == 1


class _SlowModel(Model):
    """Answers after a fixed delay (the injected fault: a request slower than the timeout)."""

    model_id = "slow"

    def __init__(self, delay: float, scale: int):
        self.delay, self.timeout_scale = delay, scale

    async def generate(self, request: GenRequest) -> GenResult:
        await asyncio.sleep(self.delay)
        return GenResult(text="ok")


@pytest.mark.parametrize("scale, ok", [(1, False), (8, True)])
def test_timeout_is_scaled_by_the_models_batch(tmp_path, scale, ok):
    policy = RetryPolicy(timeout=0.1, max_attempts=1)

    async def go():
        caller = CachedCaller(_SlowModel(0.3, scale), Journal(tmp_path / "j.sqlite"), policy=policy)
        assert caller.policy.timeout == pytest.approx(0.1 * scale)
        return await caller(GenRequest(prompt="x"), task="t", sample_id="s")

    if ok:
        assert asyncio.run(go()).text == "ok"
    else:
        with pytest.raises(RequestFailed, match="timed out after 0.1s"):
            asyncio.run(go())
