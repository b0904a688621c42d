"""MM-Eval (Mongolian, Cyrillic): four capability levels (syntax, semantics, knowledge, reasoning).

The task files are ``tasks/*.yaml``; the ability table below the results (language vs cognitive
levels) is :mod:`.abilities`."""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).parent


def register(bench) -> None:
    bench.tasks(HERE / "tasks")
    bench.result_tables("mm_eval.abilities", f"{__name__}.abilities:console_tables")
