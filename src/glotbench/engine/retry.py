"""Retries with exponential backoff and full jitter, bounded in count, for transient faults."""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass
from typing import Awaitable, Callable, TypeVar

from glotbench.errors import TransientModelError

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 5  # total tries, the first included
    base_delay: float = 1.0  # seconds; attempt k waits up to base * 2**(k-1)
    max_delay: float = 30.0
    timeout: float = 120.0  # per attempt, seconds

    def delay(self, attempt: int, rng: random.Random) -> float:
        cap = min(self.max_delay, self.base_delay * (2 ** (attempt - 1)))
        return rng.uniform(cap / 2, cap)  # "equal jitter": never zero, never above the cap


class RetriesExhausted(Exception):
    def __init__(self, last: Exception, attempts: int):
        super().__init__(str(last))
        self.last = last
        self.attempts = attempts


async def with_retries(fn: Callable[[], Awaitable[T]], policy: RetryPolicy, *, rng: random.Random | None = None,
                       on_retry: Callable[[int, Exception], None] | None = None) -> tuple[T, int]:
    """Run ``fn`` until it succeeds; return (result, attempts). Raises RetriesExhausted or a permanent error."""
    rng = rng or random.Random()
    attempt = 0
    while True:
        attempt += 1
        try:
            return await asyncio.wait_for(fn(), timeout=policy.timeout), attempt
        except (TransientModelError, asyncio.TimeoutError) as err:
            if isinstance(err, asyncio.TimeoutError):
                err = TransientModelError(f"request timed out after {policy.timeout:g}s")
            if attempt >= policy.max_attempts:
                raise RetriesExhausted(err, attempt) from None
            if on_retry:
                on_retry(attempt, err)
            await asyncio.sleep(policy.delay(attempt, rng))
