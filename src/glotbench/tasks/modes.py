"""How a task runs under the run's ``--mode``: ``loglikelihood`` scores a multiple-choice task's
options by log-probability; a ``loglikelihood_rolling`` task scores its texts' log-likelihood and a
``loglikelihood`` task its items' target continuations, whatever the mode; everything else (a multi-turn task too) generates and parses an answer."""

from __future__ import annotations

from glotbench.tasks.request_settings import RequestSettings
from glotbench.tasks.task import Task


def task_mode(task: Task, settings: RequestSettings) -> str:
    if task.spec.output_type == "loglikelihood_rolling":  # a text's log-likelihood, whatever --mode says
        return "loglikelihood_rolling"
    if task.spec.output_type == "loglikelihood":  # a target continuation's log-likelihood, whatever --mode says
        return "loglikelihood"
    if settings.mode == "loglikelihood" and task.spec.output_type == "multiple_choice" and not task.spec.prompt.turns:
        return "loglikelihood"
    return "generate"
