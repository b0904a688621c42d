"""``--perturb``: a run's items with their input text perturbed (prompts/perturb.py), the reference kept.

What is perturbed: every text field the task's prompt shows (the template variables it uses, a
string each), and a multiple-choice item's option texts (its ``choices_block`` is rebuilt from
them). What is not: the reference (``target``), the option labels, the item's id and metadata, a
field the task sets to a constant (``instruction: "=..."``: the task's text, not the item's), and
the few-shot examples (they come from another split; the perturbation measures the item)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from glotbench.prompts.perturb import Perturber
from glotbench.prompts.render import choices_block

KEPT = {"target", "labels", "labels_text", "choices_block", "lang", "id"}


def perturb_samples(task: Any, samples: list, specs: tuple[str, ...], seed: int) -> list:
    """``samples`` of ``task`` (a Task) with their input perturbed by ``specs``, seeded by ``seed``."""
    if not specs:
        return samples
    p = Perturber(specs, task.spec.language, seed)
    constants = {k for k, path in task.spec.fields.items() if str(path).startswith("=")}  # the task's own text
    shown = set(task.prompt_variables) - KEPT - constants
    out = []
    for s in samples:
        key = f"{task.name}:{s.id}"
        values = dict(s.vars)
        for name in shown:
            if isinstance(values.get(name), str):
                values[name] = p.apply(values[name], f"{key}:{name}")
        choices = s.choices
        if choices:
            choices = [p.apply(str(c), f"{key}:choice{k}") for k, c in enumerate(choices)]
            if "choices" in values:
                values["choices"] = choices
            if "choices_block" in values and s.labels:
                values["choices_block"] = choices_block(s.labels, choices, task.spec.prompt.choice_format,
                                                        task.spec.prompt.choice_separator, task=task.name)
        out.append(replace(s, vars=values, choices=choices))
    return out
