"""The console observer of a run (engine/observer.py): lines on stderr through rich, the progress
bar (items done, their rate, answers and errors) and the data-pull transfer bar."""

from __future__ import annotations

import time

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn


def rate_text(done: int, elapsed: float) -> str:
    """Items per second, or seconds per item when under one a second (a slow run's ``0.0 it/s``
    said nothing); empty before the first item."""
    if done <= 0 or elapsed <= 0:
        return ""
    rate = done / elapsed
    return f"{rate:.1f} it/s" if rate >= 1 else f"{elapsed / done:.1f} s/it"


class Counter:
    """The run's progress: items done (the bar), their rate, errors, and the answers received so far
    (a batched model answers many items' requests together, and an item with several requests,
    Best-of-N or a judge, is done only with its last one: the count moves before the bar does)."""

    def __init__(self, progress: Progress | None, total: int):
        self.progress, self.t0 = progress, time.perf_counter()
        self.task_id = progress.add_task("items", total=total, rate="", errors=0, answers=0) if progress else None
        self.done = self.errors = self.answers = 0

    def __call__(self, status: str) -> None:
        self.done += 1
        if status == "error":
            self.errors += 1
        if self.progress is not None:
            self.progress.update(self.task_id, advance=1, rate=rate_text(self.done, time.perf_counter() - self.t0),
                                 errors=self.errors, answers=self.answers)

    def answer(self) -> None:
        """One answer received (model or judge)."""
        self.answers += 1
        if self.progress is not None:
            self.progress.update(self.task_id, answers=self.answers)

    def close(self) -> None:
        if self.progress is not None:
            self.progress.stop()


class ConsoleObserver:
    """A run shown on a rich console (stderr by default); ``show_progress=False``: lines only."""

    def __init__(self, console: Console | None = None, show_progress: bool = True):
        self.console = console or Console(stderr=True, soft_wrap=True)
        self.show_progress = show_progress

    def say(self, line: str, *, markup: bool = True) -> None:
        self.console.print(line, markup=markup, highlight=False, soft_wrap=True)

    def progress(self, total: int) -> Counter:
        bar = None
        if self.show_progress:
            bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                           TextColumn("{task.fields[rate]}"), TextColumn("answers {task.fields[answers]}"),
                           TextColumn("errors {task.fields[errors]}"), TimeElapsedColumn(), TextColumn("ETA"),
                           TimeRemainingColumn(), console=self.console, transient=False)
            bar.start()
        return Counter(bar, total)

    def transfers(self):
        if not self.show_progress:
            return None
        from glotbench.sources.progress import Transfers

        return Transfers(self.console)
