"""A time limit per attempt for many concurrent requests, on one timer (used by the engine's retry
loop and by the OpenAI-compatible backend).

``asyncio.timeout`` per request schedules and cancels a timer handle each time: about 3 us per
request with an instant model and more with 64 requests in flight (the loop's timer heap), and
aiohttp's own ``ClientTimeout(total=...)`` did the same once more per request. Every attempt under
one limit gets its deadline in the order the attempts start, so an ordered table of the attempts
in flight and one timer armed for the oldest do the same work in O(1) per attempt.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from typing import Awaitable, TypeVar

T = TypeVar("T")


class AttemptDeadlines:
    """Attempts under one limit of ``seconds`` on one event loop: each still running at its deadline
    is cancelled, and :func:`bounded` turns that into ``TimeoutError`` as ``asyncio.timeout`` does
    (a cancellation from elsewhere stays one). An attempt that ends leaves the table; the timer,
    armed for the oldest attempt, then fires at most once early and is armed again."""

    def __init__(self, loop: asyncio.AbstractEventLoop, seconds: float):
        self.loop, self.seconds = loop, seconds
        self._live: OrderedDict[object, tuple[float, asyncio.Task]] = OrderedDict()  # attempt -> (deadline, task)
        self._timer: asyncio.TimerHandle | None = None
        self.expired: set[object] = set()  # attempts cancelled at their deadline, until they end

    def start(self, task: asyncio.Task) -> object:
        token = object()
        deadline = self.loop.time() + self.seconds
        self._live[token] = (deadline, task)
        if self._timer is None:
            self._timer = self.loop.call_at(deadline, self._fire)
        return token

    def end(self, token: object) -> bool:
        """The attempt is over; True when it was cancelled at its deadline."""
        self._live.pop(token, None)  # the timer stays set: it finds nothing, or a later deadline to wait for
        if self.expired and token in self.expired:
            self.expired.discard(token)
            return True
        return False

    def _fire(self) -> None:
        self._timer = None
        now = self.loop.time()
        live = self._live
        while live:
            token, (deadline, task) = next(iter(live.items()))
            if deadline > now:
                self._timer = self.loop.call_at(deadline, self._fire)
                return
            del live[token]
            self.expired.add(token)
            task.cancel()


def deadlines_for(tables: dict, seconds: float) -> AttemptDeadlines:
    """The table for ``seconds`` on the running loop, kept in ``tables`` (a run's, a model's); a new
    loop (another ``asyncio.run``) gets a new one."""
    loop = asyncio.get_running_loop()
    d = tables.get(seconds)
    if d is None or d.loop is not loop:
        d = tables[seconds] = AttemptDeadlines(loop, seconds)
    return d


async def bounded(aw: Awaitable[T], deadlines: AttemptDeadlines | None) -> T:
    """``await aw``, cancelled at the attempt's deadline and then raising ``TimeoutError``: what
    ``async with asyncio.timeout(seconds)`` does (its cancellation bookkeeping included), on the
    table's one timer. Nested limits (the backend's inside the engine's) each keep their own."""
    if deadlines is None:  # no limit per attempt
        return await aw
    task = asyncio.current_task()
    cancelling = task.cancelling()
    token = deadlines.start(task)
    try:
        result = await aw
    except asyncio.CancelledError as exc:
        if deadlines.end(token) and task.uncancel() <= cancelling:
            raise TimeoutError from exc
        raise
    except BaseException:
        if deadlines.end(token):
            task.uncancel()
        raise
    if deadlines.end(token):
        task.uncancel()
    return result
