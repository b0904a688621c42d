"""Several servers of one model (``--base-url A,B``): each request goes to the replica with the
fewest requests in flight (ties in turn, round-robin). A replica that cannot be reached is left
out for ``cooldown_s`` seconds, so the engine's retry of that request (the usual retry machinery)
goes to another one; when every replica is down they are all tried again."""

from __future__ import annotations

import time
from contextlib import contextmanager
from typing import Iterator


def parse_urls(base_url: str | list[str] | tuple[str, ...] | None) -> list[str]:
    items = [base_url] if isinstance(base_url, str) else list(base_url or [])
    return [u.strip().rstrip("/") for item in items for u in str(item).split(",") if u.strip()]


class Replicas:
    def __init__(self, urls: list[str], cooldown_s: float = 5.0):
        self.urls = list(urls)
        self.cooldown_s = cooldown_s
        n = len(self.urls)
        self.in_flight = [0] * n
        self.answered = [0] * n
        self.failed = [0] * n
        self._down_until = [0.0] * n
        self._next = 0

    def pick(self) -> int:
        n, now = len(self.urls), time.monotonic()
        up = [i for i in range(n) if self._down_until[i] <= now] or list(range(n))
        best = min(up, key=lambda i: (self.in_flight[i], (i - self._next) % n))
        self._next = (best + 1) % n
        return best

    @contextmanager
    def use(self) -> Iterator[int]:
        i = self.pick()
        self.in_flight[i] += 1
        try:
            yield i
        finally:
            self.in_flight[i] -= 1

    def ok(self, i: int) -> None:
        self.answered[i] += 1
        self._down_until[i] = 0.0

    def unreachable(self, i: int) -> None:
        self.failed[i] += 1
        self._down_until[i] = time.monotonic() + self.cooldown_s

    def note(self) -> str:
        parts = [f"{u} ({a} answered, {f} unreachable)" for u, a, f in zip(self.urls, self.answered, self.failed)]
        return f"requests spread over {len(self.urls)} replicas: " + "; ".join(parts)
