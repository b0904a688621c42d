"""The hf: backend's time limit covers a batch, and a request given up on stops its batch (issue 44): on
CPU every request of a batch waits on the whole batch, so a per-request limit timed out every request of
mm_eval.knowledge --limit 10, and the abandoned batch kept decoding under the lock while each retry
queued behind it. Tiny models made offline (glotbench.testing.tiny_hf), one causal and one seq2seq."""

from __future__ import annotations

import asyncio
import importlib.util
import time

import pytest

_missing = [m for m in ("torch", "transformers") if importlib.util.find_spec(m) is None]
pytestmark = pytest.mark.skipif(bool(_missing), reason=f"the hf: backend needs {', '.join(_missing)} "
                                                       "(pip install 'glotbench[hf]')")


@pytest.fixture(scope="module", params=["causal", "seq2seq"])
def tiny(request, tmp_path_factory):
    from glotbench.models.registry import load_model
    from glotbench.testing.tiny_hf import make_tiny_causal, make_tiny_t5

    make = make_tiny_t5 if request.param == "seq2seq" else make_tiny_causal
    m = load_model(f"hf:{make(tmp_path_factory.mktemp('hub'))}", batch_size=3)
    assert getattr(m, "architecture", "causal") == request.param
    return m


def test_the_engine_timeout_covers_a_batch(tiny, tmp_path):
    from glotbench.engine.caller import CachedCaller
    from glotbench.engine.journal import Journal
    from glotbench.engine.retry import RetryPolicy

    journal = Journal(tmp_path / "journal.sqlite")
    try:
        caller = CachedCaller(tiny, journal, policy=RetryPolicy(timeout=120.0))
        assert caller.policy.timeout == 360.0  # 120 s per request x 3 requests decoded together
    finally:
        journal.close()


def test_a_timed_out_batch_stops_and_frees_the_model(tiny):
    """A request given up on (its timeout) ends its batch at the next decoding step: the next request
    runs at once instead of queueing behind thousands of abandoned decoding steps."""
    from glotbench.models.base import GenRequest

    short = GenRequest(prompt="Hi", max_tokens=2)

    async def go():
        t0 = time.monotonic()
        [alone] = await asyncio.gather(tiny.generate(GenRequest(prompt="Write forever:", max_tokens=60,
                                                               extra=(("min_new_tokens", 60),))))
        per_step = (time.monotonic() - t0) / 60
        # long enough that the abandoned batch would still have > 6 s of decoding left, whatever this
        # machine's speed (a fixed 3,000 steps was under 3 s on a quiet machine)
        n = max(3000, int(6.0 / per_step))
        long = GenRequest(prompt="Write forever:", max_tokens=n, extra=(("min_new_tokens", n),))
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(tiny.generate(long), 0.5)
        t1 = time.monotonic()
        await asyncio.wait_for(tiny.generate(short), 120)
        return n, per_step, time.monotonic() - t1

    n, per_step, waited = asyncio.run(go())
    # the abandoned batch had about n * per_step seconds of decoding left (old code: waited that long)
    assert n * per_step > 3.0, per_step
    assert waited < 1.5, (waited, per_step)
