"""Short-answer factuality: Chinese SimpleQA, HuSimpleQA and SimpleQA.

Task files in ``tasks/``; the task class (:mod:`.task`), the CO / NA / IN / CGA / F metrics
(:mod:`.metrics`, strict twins in :mod:`.metrics_strict`), the console tables (:mod:`.tables`),
the option-order and item analyses (:mod:`.analyze_cmd`, ``glotbench analyze option-order|items``),
and the grader prompt files no upstream source serves as files (``files/``)."""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).parent


def register(bench) -> None:
    bench.tasks(HERE / "tasks")
    bench.files(HERE / "files")
    bench.task_class("simpleqa", f"{__name__}.task:SimpleQATask")
    for key in ("co", "na", "in", "cga", "f"):  # imported on first lookup
        bench.metric(f"factuality_{key}", f"{__name__}.metrics:FA.factuality_{key}")
        bench.metric(f"factuality_{key}_strict", f"{__name__}.metrics_strict:FS.factuality_{key}_strict")
    bench.result_tables("factuality", f"{__name__}.tables:console_tables")
    bench.command("analyze", f"{__name__}.analyze_cmd")
    bench.task_template("judged_short_answer", f"{__name__}.taskfile:judged_short_answer")
