"""Judges run over finished runs on the engine: pairwise judging (docs/pairwise.md) and judge
agreement (``glotbench judge --compare``). A judge a task declares lives in the task layer,
``glotbench.tasks.judging``."""
