"""The ``judged_short_answer`` task template (``glotbench build qa``, the difficulty filter): a
SimpleQA-style task, shaped like ``tasks/chinese_simpleqa.yaml``: ``SimpleQATask`` with a grader
prompt (``chinese_simpleqa_en``, simple-evals' grader, by default: the one the three shipped graders
have for a language other than Chinese or Hungarian; ``chinese_simpleqa`` or ``husimpleqa`` for
those), metrics CO / NA / IN / CGA / F."""

from __future__ import annotations

from typing import Any

GRADER_FOR = {"zh": "chinese_simpleqa", "hu": "husimpleqa"}
METRICS = ["factuality_co", "factuality_na", "factuality_in", "factuality_cga", "factuality_f"]


def judged_short_answer(*, language: str, grader: str | None = None) -> dict[str, Any]:
    return {"scorer": "label", "metrics": list(METRICS), "task_class": "simpleqa",
            "options": {"grader": grader or GRADER_FOR.get(language, "chinese_simpleqa_en"), "judge_max_tokens": 512}}
