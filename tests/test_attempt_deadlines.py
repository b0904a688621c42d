"""The per-attempt time limit (engine/retry.py AttemptDeadlines: one timer for every request of a run,
instead of an ``asyncio.timeout`` per attempt) bounds each hanging attempt, lets the others finish,
keeps a cancellation from elsewhere a cancellation, and leaves nothing behind."""

from __future__ import annotations

import asyncio

import pytest

from glotbench.engine.retry import RetriesExhausted, RetryPolicy, RunGuard, with_retries

HANG = 3600.0  # a "server" that never answers within the test's life


def _policy(timeout: float, attempts: int = 1) -> RetryPolicy:
    return RetryPolicy(max_attempts=attempts, base_delay=0.001, max_delay=0.001, timeout=timeout,
                       item_budget_s=None, run_budget_s=None)


def test_hanging_attempts_time_out_while_the_others_finish():
    guard = RunGuard(_policy(0.05))

    async def answer(i: int):
        await asyncio.sleep(HANG if i % 3 == 0 else 0)
        return i

    async def main():
        return await asyncio.gather(*(with_retries(lambda i=i: answer(i), guard.policy, guard=guard) for i in range(30)),
                                    return_exceptions=True)

    got = asyncio.run(asyncio.wait_for(main(), 60))
    for i, g in enumerate(got):
        if i % 3 == 0:
            assert isinstance(g, RetriesExhausted) and "request timed out after 0.05s" in str(g.last), g
        else:
            assert g == (i, 1)
    [d] = guard._deadlines.values()
    assert not d._live and not d.expired


def test_a_timed_out_attempt_is_retried_and_can_then_succeed():
    guard = RunGuard(_policy(0.05, attempts=3))
    calls = []

    async def flaky():
        calls.append(1)
        if len(calls) < 3:
            await asyncio.sleep(HANG)
        return "ok"

    assert asyncio.run(asyncio.wait_for(with_retries(flaky, guard.policy, guard=guard), 60)) == ("ok", 3)


def test_a_cancellation_from_elsewhere_stays_a_cancellation():
    guard = RunGuard(_policy(HANG))

    async def main():
        t = asyncio.create_task(with_retries(lambda: asyncio.sleep(HANG), guard.policy, guard=guard))
        await asyncio.sleep(0.01)
        t.cancel()
        with pytest.raises(asyncio.CancelledError):
            await t
        [d] = guard._deadlines.values()
        assert not d._live

    asyncio.run(asyncio.wait_for(main(), 60))


def test_two_limits_on_one_guard_each_bound_their_own_attempts():
    """A judge with a scaled timeout shares the run's guard: each limit keeps its own order."""
    guard = RunGuard(_policy(0.05))
    short, long_ = _policy(0.05), _policy(30.0)

    async def main():
        hang_short = with_retries(lambda: asyncio.sleep(HANG), short, guard=guard)
        quick_long = with_retries(lambda: asyncio.sleep(0.2, "late"), long_, guard=guard)
        return await asyncio.gather(hang_short, quick_long, return_exceptions=True)

    a, b = asyncio.run(asyncio.wait_for(main(), 60))
    assert isinstance(a, RetriesExhausted) and "0.05s" in str(a.last)
    assert b == ("late", 1)


def test_a_guard_used_on_a_second_loop_gets_a_new_timer():
    guard = RunGuard(_policy(0.05))
    for _ in range(2):
        with pytest.raises(RetriesExhausted):
            asyncio.run(asyncio.wait_for(with_retries(lambda: asyncio.sleep(HANG), guard.policy, guard=guard), 60))
