"""Identical requests on their way at once are sent once (CachedCaller's in-flight table): the others
wait on the first and get its answer, or its failure; the table is empty afterwards."""

from __future__ import annotations

import asyncio

import pytest

from glotbench.engine.caller import CachedCaller, RequestFailed
from glotbench.engine.journal import Journal
from glotbench.engine.retry import RetryPolicy
from glotbench.errors import PermanentModelError
from glotbench.models.base import GenRequest, GenResult, Model


class Slow(Model):
    """Answers after a few loop iterations (or fails permanently), counting what it is sent."""

    def __init__(self, fail: bool = False):
        self.model_id, self.is_chat, self.sent, self.fail = "slow", True, 0, fail

    async def generate(self, request):
        self.sent += 1
        for _ in range(3):
            await asyncio.sleep(0)
        if self.fail:
            raise PermanentModelError("slow: refused")
        return GenResult(text=f"answer to {request.messages[0]['content']}", input_tokens=1, output_tokens=1)


def _run(tmp_path, model: Model, requests: list[GenRequest]) -> tuple[list, CachedCaller]:
    journal = Journal(tmp_path / "journal.sqlite")
    caller = CachedCaller(model, journal, policy=RetryPolicy(max_attempts=1), concurrency=8)

    async def main():
        return await asyncio.gather(*(caller(r) for r in requests), return_exceptions=True)

    try:
        return asyncio.run(main()), caller
    finally:
        journal.close()


def test_identical_requests_in_flight_are_sent_once(tmp_path):
    same = GenRequest(messages=({"role": "user", "content": "q"},))
    other = GenRequest(messages=({"role": "user", "content": "r"},))
    model = Slow()
    got, caller = _run(tmp_path, model, [same, same, other, same])
    assert model.sent == 2
    assert [g.text for g in got] == ["answer to q", "answer to q", "answer to r", "answer to q"]
    assert caller.stats.inflight_shared == 2 and caller.stats.sent == 2
    assert caller._inflight == {}


def test_a_failure_reaches_every_waiter(tmp_path):
    same = GenRequest(messages=({"role": "user", "content": "q"},))
    model = Slow(fail=True)
    got, caller = _run(tmp_path, model, [same, same, same])
    assert model.sent == 1
    assert all(isinstance(g, (RequestFailed, PermanentModelError)) for g in got), got
    assert isinstance(got[0], RequestFailed) and "refused" in str(got[0])
    assert caller._inflight == {}


@pytest.mark.parametrize("n", [1, 2])
def test_no_waiter_no_future(tmp_path, n):
    """A request nobody else waits on leaves nothing behind (no future is made for it)."""
    model = Slow()
    reqs = [GenRequest(messages=({"role": "user", "content": f"q{i}"},)) for i in range(n)]
    got, caller = _run(tmp_path, model, reqs)
    assert model.sent == n and caller.stats.inflight_shared == 0 and caller._inflight == {}
