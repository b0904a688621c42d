"""MM-Eval (Mongolian, Cyrillic): four capability levels (syntax, semantics, knowledge, reasoning).

The task files are ``tasks/*.yaml``; the ability table below the results (language vs cognitive
levels) is :mod:`.abilities`. ``reasoning_en`` / ``reasoning_zh`` are the MGSM originals of the reasoning
items (suite ``mm_eval_transfer``), read by :mod:`.mgsm`; the knowledge items have no published
English multiple-choice originals (docs/mm-eval-transfer.md)."""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).parent


def register(bench) -> None:
    bench.tasks(HERE / "tasks")
    bench.task_class("mm_eval_mgsm", f"{__name__}.mgsm:MgsmTask")
    bench.result_tables("mm_eval.abilities", f"{__name__}.abilities:console_tables")
