"""Metrics fed by built-in task classes rather than by a YAML scorer (OpenHuEval's tasks write
these per-item values in their ``score`` methods). Declared here, with no benchmark import, so
any process resolves the names (``get_metric("question_accuracy")``) and a task YAML naming
them is checked when it loads.
"""

from __future__ import annotations

from types import SimpleNamespace

from glotbench.scoring.metrics import Metric, mean_of, ratio_of

TASK_METRICS: tuple[Metric, ...] = (
    # HuMatchingFIB / HuStandardFIB: blank-level accuracy pools blanks over questions
    # (sum right / sum blanks), as the reference does.
    ratio_of("blank_accuracy", "blank_correct", "blank_total",
             measure="blank_accuracy", description="sum of correct blanks / sum of blanks"),
    ratio_of("blank_accuracy_reference", "variant_hits", "blank_total",
             measure="blank_accuracy", description="the reference's blank accuracy (variant hits / blanks)"),
    mean_of("question_correct", "question_accuracy"),
    # glotbench's repairing JSON reader beside the reference's \{.*?\} + strict json.loads
    ratio_of("blank_accuracy_repaired", "blank_correct_repaired", "blank_total",
             measure="blank_accuracy", description="blank accuracy with glotbench's repairing JSON reader"),
    mean_of("question_correct_repaired", "question_accuracy_repaired", measure="question_accuracy"),
    # HuProverbRea
    mean_of("correct", "accuracy_2cq"),
    mean_of("fail_parse", "fail_parse_rate", direction="lower", role="diagnostic"),
    mean_of("correct", "accuracy_oe"),
    mean_of("unclear", "unclear_rate", direction="lower", role="diagnostic"),
    # HuWildBench: per item the judge score x 10 (paper §2.2)
    mean_of("wb_score", "wb_score", format=".2f"),
)

# registered lazily by reference (``...metrics:OH.blank_accuracy``, see the package's register)
OH = SimpleNamespace(**{m.name: m for m in TASK_METRICS})
NAMES = tuple(m.name for m in TASK_METRICS)
