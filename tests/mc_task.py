"""A multiple-choice task file over a local JSONL file (records: id, q, opts, gold), for the tests that run
one against the stub server (CircularEval, per-class scores, model metadata, contamination)."""

from __future__ import annotations

from pathlib import Path


def mc_task_yaml(name: str, data: Path | str, metrics: tuple[str, ...] = ("accuracy",),
                 choice_format: str | None = None) -> str:
    """The task YAML: the question, then the options block; a choice-label extractor and label scorer."""
    fmt = f'  choice_format: "{choice_format}"\n' if choice_format else ""
    return f"""\
name: {name}
version: "1"
language: en
dataset:
  format: jsonl
  splits: {{test: {data}}}
fields: {{id: id, question: q, choices: "opts[*]", target: gold}}
output_type: multiple_choice
prompt:
  user: "{{{{ question }}}}\\n{{{{ choices_block }}}}"
{fmt}extractor: {{name: choice}}
scorer: label
metrics: [{", ".join(metrics)}]
"""
