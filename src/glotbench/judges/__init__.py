"""Judging: the benchmarks' grading prompts, reading judge replies, and judge agreement."""

from glotbench.judges.parse import Verdict, parse_judge_output
from glotbench.judges.prompts import GRADERS, GraderPrompt, load_grader

__all__ = ["GRADERS", "GraderPrompt", "Verdict", "load_grader", "parse_judge_output"]
