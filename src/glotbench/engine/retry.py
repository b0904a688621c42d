"""Retries for transient faults: exponential backoff with jitter, ``Retry-After`` honoured (capped),
a total time budget per item and per run, and a circuit breaker that stops the whole run early.

* Per item: a request stops being retried once ``item_budget_s`` seconds have passed since its
  first try (the attempt count still applies too).
* Per run: all retry waiting and all failed attempts together (summed over requests) may cost
  ``run_budget_s``; past it the run stops early like a tripped breaker (a rerun resumes).
* Circuit breaker: ``breaker_failures`` consecutive attempts that could not reach the server
  (connection refused, DNS, connect timeout), or any 401/403, trip it; every request then stops
  at once with :class:`~glotbench.errors.RunStopped` and the run ends early with one line.
  Nothing answered is lost and a rerun resumes.
"""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass, field
from typing import Awaitable, Callable, TypeVar

from glotbench.errors import AuthModelError, RunStopped, TransientModelError
from glotbench.models.deadlines import bounded, deadlines_for

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 5  # total tries, the first included
    base_delay: float = 1.0  # seconds; attempt k waits up to base * 2**(k-1)
    max_delay: float = 30.0
    timeout: float = 120.0  # per attempt, seconds
    max_retry_after: float = 120.0  # a server's Retry-After is honoured up to this many seconds
    item_budget_s: float | None = 300.0  # retries of one request stop after this long
    run_budget_s: float | None = 3600.0  # retry waits + failed attempts over the whole run
    breaker_failures: int = 10  # consecutive unreachable-server attempts that stop the run

    def delay(self, attempt: int, rng: random.Random) -> float:
        cap = min(self.max_delay, self.base_delay * (2 ** (attempt - 1)))
        return rng.uniform(cap / 2, cap)  # "equal jitter": never zero, never above the cap

    def wait_for(self, attempt: int, err: Exception, rng: random.Random) -> float:
        """Seconds before the next try: the server's Retry-After (capped) when it sent one."""
        asked = getattr(err, "retry_after", None)
        if asked is not None:
            return min(float(asked), self.max_retry_after)
        return self.delay(attempt, rng)


@dataclass
class RunGuard:
    """State shared by every request of one run: the retry-time budget and the circuit breaker."""

    policy: RetryPolicy = field(default_factory=RetryPolicy)
    spent_s: float = 0.0
    consecutive_unreachable: int = 0
    stopped: str | None = None  # the one-line reason, once tripped
    # the per-attempt time limits of this run's requests: one timer per limit (models/deadlines.py)
    _deadlines: dict = field(default_factory=dict, repr=False, compare=False)

    def trip(self, reason: str) -> None:
        if self.stopped is None:
            self.stopped = reason

    def check(self) -> None:
        if self.stopped is not None:
            raise RunStopped(self.stopped)

    def success(self) -> None:
        self.consecutive_unreachable = 0

    def failure(self, err: Exception, cost_s: float) -> None:
        self.spent_s += cost_s
        if isinstance(err, AuthModelError):
            self.trip(f"the server refused our credentials: {err}")
        elif getattr(err, "connection", False):
            self.consecutive_unreachable += 1
            n = self.policy.breaker_failures
            if n and self.consecutive_unreachable >= n:
                self.trip(f"{self.consecutive_unreachable} consecutive requests could not reach the server; last: {err}")
        # any other failure (an HTTP error, a malformed answer) proves the server is reachable
        else:
            self.consecutive_unreachable = 0

    def budget_left(self) -> bool:
        b = self.policy.run_budget_s
        return b is None or self.spent_s < b


class RetriesExhausted(Exception):
    def __init__(self, last: Exception, attempts: int, why: str = ""):
        super().__init__(str(last))
        self.last = last
        self.attempts = attempts
        self.why = why  # "" (attempts used up), or which budget ran out


async def with_retries(fn: Callable[[], Awaitable[T]], policy: RetryPolicy, *, rng: random.Random | None = None,
                       on_retry: Callable[[int, Exception], None] | None = None,
                       guard: RunGuard | None = None) -> tuple[T, int]:
    """Run ``fn`` until it succeeds; return (result, attempts). Raises RetriesExhausted, a permanent
    error, or RunStopped when the run's circuit breaker has tripped."""
    rng = rng or random.Random()
    guard = guard or RunGuard(policy)
    t_first = time.monotonic()
    attempt = 0
    deadlines = deadlines_for(guard._deadlines, policy.timeout) if policy.timeout is not None else None
    while True:
        guard.check()
        attempt += 1
        t0 = time.monotonic()
        try:
            result = await bounded(fn(), deadlines)
            guard.success()
            return result, attempt
        except (TransientModelError, asyncio.TimeoutError) as err:
            if isinstance(err, asyncio.TimeoutError):
                err = TransientModelError(f"request timed out after {policy.timeout:g}s")
            guard.failure(err, time.monotonic() - t0)
            guard.check()
            wait = policy.wait_for(attempt, err, rng)
            elapsed = time.monotonic() - t_first
            if attempt >= policy.max_attempts:
                raise RetriesExhausted(err, attempt) from None
            if policy.item_budget_s is not None and elapsed + wait > policy.item_budget_s:
                raise RetriesExhausted(err, attempt, f"retry budget of {policy.item_budget_s:g}s per item used up") from None
            if not guard.budget_left():
                # the server has failed for longer than the whole run may spend on it: stop the run
                # (this item is left for the rerun, like every other unsent one)
                guard.trip(f"the retry budget of {policy.run_budget_s:g}s per run is used up "
                           f"(failed attempts and waits so far); last error: {err}")
                guard.check()
            if on_retry:
                on_retry(attempt, err)
            guard.spent_s += wait
            await _sleep_unless_stopped(wait, guard)
        except AuthModelError as err:
            guard.failure(err, time.monotonic() - t0)
            raise


async def _sleep_unless_stopped(seconds: float, guard: RunGuard) -> None:
    """Sleep, waking early (and raising RunStopped) if the breaker trips meanwhile."""
    end = time.monotonic() + seconds
    while True:
        guard.check()
        left = end - time.monotonic()
        if left <= 0:
            return
        await asyncio.sleep(min(left, 0.25))
