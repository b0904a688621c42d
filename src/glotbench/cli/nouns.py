"""The noun groups whose sub-commands live in several modules: ``glotbench tasks``, ``runs`` and
``judge``. A command module adds its command to one of these (``@runs_app.command("report")``) and
cli/__init__.py's COMMANDS names the modules of each group; a group's help line is written here once."""

from __future__ import annotations

import typer

from glotbench.cli import NounGroup, app


class TasksGroup(NounGroup):
    default = "list"  # glotbench tasks [GLOB] is glotbench tasks list [GLOB]
    aliases = {"import-lm-eval": "import"}


class JudgeGroup(NounGroup):
    default = "rerun"  # the old glotbench judge RUN_DIR --judge J2
    default_is_old = True


tasks_app = typer.Typer(cls=TasksGroup, help="The tasks: list them (glotbench tasks [GLOB] is tasks list), "
                        "convert lm-eval task files.")
runs_app = typer.Typer(cls=NounGroup, no_args_is_help=True,
                       help="Finished runs: HTML report, comparisons, exports, shard merge, journal repair, "
                            "leaderboard submissions; and what a run would cost (estimate).")
judge_app = typer.Typer(cls=JudgeGroup, no_args_is_help=True,
                        help="Judges on finished runs: re-grade with another judge, compare judges, judge runs "
                             "side by side.")

app.add_typer(tasks_app, name="tasks")
app.add_typer(runs_app, name="runs")
app.add_typer(judge_app, name="judge")
