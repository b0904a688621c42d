"""A broken task template is one line naming the task and the field."""

from __future__ import annotations

import pytest

from glotbench.errors import TaskSpecError
from glotbench.prompts.render import choices_block, render


def test_syntax_error_names_task_and_field():
    with pytest.raises(TaskSpecError, match=r"task t: field 'prompt.user': template syntax error line 1"):
        render("{{ broken", {}, task="t", field="prompt.user")


def test_unknown_variable_lists_the_known_ones():
    with pytest.raises(TaskSpecError, match=r"task t: field 'prompt.system': 'lang' is undefined \(known variables: a, b\)"):
        render("Answer in {{ lang }}", {"a": 1, "b": 2}, task="t", field="prompt.system")


def test_choices_block_renders_each_option_and_strips():
    assert choices_block(["A", "B"], ["x ", "y"], " {{ label }}. {{ text }} ", "\n", task="t") == "A. x\nB. y"
    with pytest.raises(TaskSpecError, match="prompt.choice_format"):
        choices_block(["A"], ["x"], "{{ labl }}", "\n", task="t")
