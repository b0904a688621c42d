"""A progress bar for downloads: one row per file with bytes done, total and rate (rich)."""

from __future__ import annotations

import threading

from rich.console import Console
from rich.progress import (BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn,
                           TransferSpeedColumn)


class Transfers:
    """``add(label, total)`` -> an id; ``advance(id, n)``; ``finish(id)``. Thread-safe (rich's
    Progress is); ``console=None`` or a non-terminal stderr draws nothing live."""

    def __init__(self, console: Console | None = None):
        self._p = Progress(TextColumn("{task.description}", markup=False), BarColumn(), DownloadColumn(),
                           TransferSpeedColumn(), TimeRemainingColumn(), console=console or Console(stderr=True),
                           transient=True)
        self._lock = threading.Lock()
        self._live = 0

    def add(self, label: str, total: int | None) -> int:
        with self._lock:
            if self._live == 0:
                self._p.start()
            self._live += 1
        return self._p.add_task(label, total=total)

    def advance(self, tid: int, n: int) -> None:
        self._p.update(tid, advance=n)

    def finish(self, tid: int) -> None:
        self._p.remove_task(tid)
        with self._lock:
            self._live -= 1
            if self._live == 0:
                self._p.stop()
