"""What a run tells whoever watches it. The engine calls an observer; it prints nothing itself.

``say(line)``: a line for the user (rich markup allowed; ``markup=False`` for text that must be
shown as it is); ``progress(total)``: a counter the executor calls once per item finished
(``counter(status)``) and once per answer received (``counter.answer()``), closed with
``counter.close()``; ``transfers()``: a download bar for data pulls, or None. The console observer
(:mod:`glotbench.engine.display`) is what ``glotbench run`` and ``glotbench.evaluate`` pass."""

from __future__ import annotations

from typing import Any, Protocol


class ProgressCounter(Protocol):
    done: int
    errors: int
    answers: int

    def __call__(self, status: str) -> None: ...

    def answer(self) -> None: ...

    def close(self) -> None: ...


class RunObserver(Protocol):
    def say(self, line: str, *, markup: bool = True) -> None: ...

    def progress(self, total: int) -> ProgressCounter: ...

    def transfers(self) -> Any: ...
