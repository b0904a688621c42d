"""OpenHuEval (Hungarian): prompt building and scoring, one module per task.

* :mod:`~glotbench.benchmarks.openhueval.matching_fib` - HuMatchingFIB (option letters per blank)
* :mod:`~glotbench.benchmarks.openhueval.standard_fib` - HuStandardFIB (open blanks, fuzzy match)
* :mod:`~glotbench.benchmarks.openhueval.proverb_rea` - HuProverbRea (2CQ and OE with a judge)
* :mod:`~glotbench.benchmarks.openhueval.wildbench` - HuWildBench (checklist judge, WB-Score)

Each module has ``load`` (records), prompt builders taking ``prompt_lang`` where the task has
prompt variants, ``score`` (one record + output(s) -> ScoredItem with the record's category
fields in ``metadata``) and ``summarize`` (items -> the task's numbers).
:func:`~glotbench.benchmarks.openhueval.common.breakdown` splits any of them by a metadata field.
"""

from pathlib import Path

__all__ = ["register"]

HERE = Path(__file__).parent
METRIC_NAMES = ("blank_accuracy", "blank_accuracy_reference", "question_accuracy", "blank_accuracy_repaired",
                "question_accuracy_repaired", "accuracy_2cq", "fail_parse_rate", "accuracy_oe", "unclear_rate", "wb_score")
_CLASSES = {"matching_fib": "MatchingFIBTask", "standard_fib": "StandardFIBTask", "proverb_rea_2cq": "ProverbRea2CQTask",
            "proverb_rea_oe": "ProverbReaOETask", "wildbench": "WildBenchTask"}


def register(bench) -> None:
    bench.tasks(HERE / "tasks")
    bench.files(HERE / "files")
    for name, cls in _CLASSES.items():
        bench.task_class(f"openhueval.{name}", f"{__name__}.tasks:{cls}")
    for name in METRIC_NAMES:  # imported on first lookup
        bench.metric(name, f"{__name__}.metrics:OH.{name}")
    bench.result_tables("openhueval.table5", f"{__name__}.table5:console_tables")
    bench.command("analyze", f"{__name__}.thinking_cmd")  # glotbench analyze thinking (OpenHuEval §4)
