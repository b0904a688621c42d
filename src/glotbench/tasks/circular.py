"""CircularEval (OpenCompass): every rotation of a multiple-choice item's options, each asked as its
own item; the item counts as right only when every rotation is answered right.

``run --circular`` turns each item with n options into n items: rotation k shows the options
``choices[k:] + choices[:k]`` under the same labels, and its gold is the label now in front of the
gold option. Rotation 0 is the item as the dataset has it and keeps its id, so its score is the
plain accuracy of a run without ``--circular``; rotation k > 0 gets the id ``ID@rotK``. Each
rotation's metadata names its item (``circular_of``) and ``rotation``; the aggregate
(:func:`glotbench.engine.aggregate.summarise_task`) reports ``circular_accuracy`` beside the plain
metrics (docs/trust-a-number.md).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from glotbench.errors import DataError
from glotbench.scoring.circular import ITEM, ROTATION, ROTATIONS

__all__ = ["ITEM", "ROTATION", "expand", "refusal", "rotate", "rotation_id"]
OPTION_VARS = ("choices", "choices_block")  # what a prompt prints the options from


def rotation_id(sample_id: str, k: int) -> str:
    return sample_id if k == 0 else f"{sample_id}@rot{k}"


def refusal(task: Any) -> str | None:
    """Why ``--circular`` cannot run ``task`` (one line), or None when it can."""
    spec = task.spec
    if spec.output_type != "multiple_choice":
        return (f"--circular rotates the options of multiple-choice tasks; task {task.name} is output_type "
                f"{spec.output_type} (leave it out of a --circular run)")
    if not task.prompt_variables & set(OPTION_VARS):
        return (f"--circular: task {task.name}'s prompt prints no options from {{{{ choices_block }}}} or "
                f"{{{{ choices }}}}, so a rotation would not change what the model reads ({task.spec_where})")
    return None


def rotate(task: Any, sample: Any, k: int) -> Any:
    """Rotation ``k`` of ``sample``: the options shifted left by ``k`` under the same labels."""
    from glotbench.prompts.render import choices_block

    choices, labels = list(sample.choices or []), list(sample.labels or [])
    if str(sample.target) not in labels or len(labels) != len(choices):
        raise DataError(f"--circular: task {task.name}: item {sample.id}: gold {sample.target!r} is not one of its "
                        f"option labels {labels} (the task maps answers itself; run it without --circular)")
    n = len(choices)
    moved = choices[k:] + choices[:k]
    gold = labels[(labels.index(str(sample.target)) - k) % n]
    values = {**sample.vars, "choices": moved, "target": gold}
    if "choices_block" in sample.vars:
        values["choices_block"] = choices_block(labels, [str(c) for c in moved], task.spec.prompt.choice_format,
                                                task.spec.prompt.choice_separator, task=task.name)
    return dataclasses.replace(sample, id=rotation_id(sample.id, k), vars=values, target=gold, choices=moved,
                               metadata={**(sample.metadata or {}), ITEM: sample.id, ROTATION: k, ROTATIONS: n})


def expand(task: Any, samples: list) -> list:
    """Every rotation of every item, item by item (rotation 0 first)."""
    return [rotate(task, s, k) for s in samples for k in range(len(s.choices or []) or 1)]
