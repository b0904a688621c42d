"""How a task runs under the run's ``--mode``: ``loglikelihood`` scores a multiple-choice task's
options by log-probability; everything else generates and parses an answer."""

from __future__ import annotations

from glotbench.tasks.request_settings import RequestSettings
from glotbench.tasks.task import Task


def task_mode(task: Task, settings: RequestSettings) -> str:
    if settings.mode == "loglikelihood" and task.spec.output_type == "multiple_choice":
        return "loglikelihood"
    return "generate"
