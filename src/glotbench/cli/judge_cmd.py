"""`glotbench judge` (re-grade a run with another judge) and `glotbench compare-judges`."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from glotbench.cli.nouns import judge_app
from glotbench.cli.option_groups import Flags, JournalOptions, options, setting_option
from glotbench.settings import CallOptions, JudgeOptions, RunSettings


def load_judge_of(jo, calls):
    """The judge of ``jo`` (a :class:`~glotbench.settings.JudgeOptions`; --judge required), with --timeout."""
    from glotbench.cli.option_groups import one
    from glotbench.errors import GlotbenchError
    from glotbench.models.loading import load_judge

    spec = one(jo.judge, "--judge")
    if not spec:
        raise GlotbenchError("give the judge model: --judge SPEC (same syntax as --model)")
    return load_judge(spec, jo.judge_options(), calls.timeout)


@judge_app.command("rerun")
@options((RunSettings, "tasks"), jo=(JudgeOptions, {"required": ("judge",)}), calls=CallOptions,
         journal=(JournalOptions, {"only": ("wait",)}))
def judge(
    run_dir: Path = typer.Argument(..., help="A run directory (holds journal.sqlite)."),
    no_progress: bool = setting_option(False, "--no-progress", help="No progress bar (logs, CI)."),
    *, jo: JudgeOptions, calls: CallOptions, journal: JournalOptions, tasks: Optional[list[str]],
) -> None:
    """Re-grade an existing run with another judge, without calling the evaluated model.

    The new judge's calls and verdicts go into the run's journal (re-running resumes); its scores
    are written into results.json under "judges"."""
    from glotbench.engine.rejudge import rejudge
    from glotbench.output.grade_tables import factuality_table

    console = Console(stderr=True, soft_wrap=True)
    names = [n.strip() for raw in (tasks or []) for n in raw.split(",") if n.strip()] or None
    model = load_judge_of(jo, calls)
    progress = None
    if not no_progress:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        progress = Progress(TextColumn("judging"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console)
        progress.start()
        pid = progress.add_task("judging", total=None)
    try:
        summaries, stats = rejudge(run_dir, model, concurrency=calls.concurrency, tasks=names, wait=journal.wait,
                                   max_retries=calls.max_retries if "max_retries" in calls.model_fields_set else None,
                                   on_item=(lambda: progress.update(pid, advance=1)) if progress else None)
    finally:
        if progress:
            progress.stop()
    out = Console(width=None if sys.stdout.isatty() else 160)
    for name, s in summaries.items():
        if s.get("factuality"):
            out.print(factuality_table(name, s["factuality"]))
        else:
            out.print(f"{name}: {json.dumps(s.get('metrics'), ensure_ascii=False)}")
    for name, why in stats.skipped_tasks.items():
        out.print(f"skipped {name}: {why}", style="yellow")
    out.print(f"judge {stats.judge_id}: {stats.items} item(s) with answers · {stats.judged} graded now · "
              f"{stats.reused} already graded · {stats.failed} failed · {stats.not_answered} without an answer · "
              f"judge requests sent {stats.requests_sent}, cached {stats.requests_cached}", soft_wrap=True)
    out.print(f"results: {Path(run_dir) / 'results.json'} (under \"judges\")", soft_wrap=True)


@judge_app.command("compare")
@options((Flags, "json_out"), (RunSettings, "tasks"))
def compare_judges_cmd(
    run_dirs: list[Path] = typer.Argument(..., help="Run directories, one per model, each graded by two or more judges."),
    metric: str = setting_option("F", "--metric", help="Ranking metric: CO, NA, IN, CGA or F."),
    judge_name: Optional[list[str]] = setting_option(
        None, "--judge-name",
        help="NAME[=PATTERN]: judges whose ids match the glob PATTERN are one judge NAME across the runs "
             "(default PATTERN recorded-grades:*, each run's released grades). Repeatable."),
    *, tasks: Optional[list[str]], json_out: Optional[Path],
) -> None:
    """Judge robustness (Chinese SimpleQA appendix B): each model's scores under each judge,
    Kendall's tau between the judges' model rankings, Cohen's kappa on item grades."""
    from glotbench.judges.judge_compare import compare_runs
    from glotbench.output.strict_json import clean
    from glotbench.output.grade_tables import judges_scores_table
    from glotbench.judges.agreement import render_agreement_table

    names = [n.strip() for raw in (tasks or []) for n in raw.split(",") if n.strip()] or None
    res = compare_runs(run_dirs, metric=metric.upper(), tasks=names, judge_names=judge_name)
    out = Console(width=None if sys.stdout.isatty() else 160)
    for task, r in res.items():
        if "skipped" in r:
            out.print(f"{task}: {r['skipped']}", style="yellow")
            continue
        out.print(judges_scores_table(task, r))
        out.print(render_agreement_table(r))
        if len(r["models"]) < 2:
            out.print(f"{task}: Kendall's tau needs two or more models (runs)", style="yellow")
        miss = r.get("missing") or {}
        if miss.get("judges_not_on_every_run"):
            out.print(f"{task}: left out (did not grade every run): {', '.join(miss['judges_not_on_every_run'])}", style="yellow")
        for label, n in (miss.get("items_left_out") or {}).items():
            out.print(f"{task}: {label}: {n} item(s) not graded by every judge: left out", style="yellow")
    if json_out:
        json_out.write_text(json.dumps(clean(res), ensure_ascii=False, indent=2), encoding="utf-8")
        out.print(f"written: {json_out}")
