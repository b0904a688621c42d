"""`glotbench analyze signal RUN...`: how much signal each task carries across many runs
(checkpoints, models, seeds): monotonicity, noise, distance from random, rank consistency and a
verdict the FineTasks way (docs/trust-a-number.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table

from glotbench.cli.analyze_cmd import analyze_app
from glotbench.cli.option_groups import Flags, options, setting_option
from glotbench.output.table import unclipped


def _f(x, digits: int = 3) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


@analyze_app.command("signal")
@options((Flags, "json_out", "metric"), about={"json_out": "Also write the table and each run's points as JSON here.",
                                               "metric": "the metric to read (default: each task's headline)."})
def signal(
    run_dirs: list[Path] = typer.Argument(..., help="Run directories: checkpoints of a model, several models, seeds."),
    meta: list[str] = typer.Option([], "--meta", help="RUN=model=NAME,step=1000,seed=1 (RUN: the directory as given or its "
                                   "folder name); default: step and seed from the folder name (ckpt-step1000-seed2)."),
    step_from: Optional[str] = setting_option(None, "--step-from", help="Regular expression on the folder name; its first "
                                            "group is the step (default: step followed by digits)."),
    model_from: Optional[str] = setting_option(None, "--model-from", help="Regular expression on the folder name; its first "
                                             "group is the model (default: the run's model id)."),
    chance: list[str] = setting_option([], "--chance", help="TASK=X: the task's chance level (default: from the gold labels)."),
    plot: Optional[Path] = setting_option(None, "--plot", help="Also draw score vs step per task to this PNG (needs the plots extra)."),
    *, json_out: Optional[Path], metric: Optional[str] = None,
) -> None:
    """Signal per task across runs: monotonicity, noise, distance from random, rank consistency, verdict."""
    from glotbench.report.analysis.signal import THRESHOLDS
    from glotbench.report.runs import load_runs
    from glotbench.report.signal import parse_chance, parse_meta, signal_from_runs

    meta_map, chance_map = parse_meta(meta), parse_chance(chance)
    runs = load_runs(list(run_dirs), with_samples=True)
    signals, rows = signal_from_runs(runs, [str(p) for p in run_dirs], meta_map, metric, chance_map, step_from, model_from)
    console = Console(width=max(Console().width, 140))
    t = Table(title="Signal per task (FineTasks): monotonicity = Spearman rho of score vs step; noise = std across seeds "
                    "at one step; distance = (final - chance) / noise; rank consistency = Kendall tau between item halves. "
                    f"Good signal: rho >= {THRESHOLDS['monotonicity']}, distance > {THRESHOLDS['distance_from_random']}, "
                    f"tau >= {THRESHOLDS['rank_consistency']}")
    for col in ("task", "metric", "runs", "invalid", "final", "chance", "monotonicity", "noise", "distance", "rank tau", "verdict"):
        t.add_column(col, justify="left" if col in ("task", "metric", "verdict") else "right")
    for s in signals:
        t.add_row(s.task, s.metric, str(s.n_runs), str(s.n_invalid), _f(s.final_score), _f(s.chance), _f(s.monotonicity),
                  _f(s.noise), _f(s.distance_from_random, 1), _f(s.rank_consistency), s.verdict)
    console.print(unclipped(t))
    n_invalid = sum(s.n_invalid for s in signals)
    if n_invalid:
        console.print(f"note: {n_invalid} invalid score(s) (over 50% unparseable, or a failed task): left out of every "
                      "statistic, counted", style="yellow")
    if json_out:
        json_out.write_text(json.dumps({"thresholds": THRESHOLDS, "tasks": [s.to_dict() for s in signals], "runs": rows},
                                       ensure_ascii=False, indent=2), encoding="utf-8")
        console.print(f"wrote {json_out}")
    if plot:
        _plot(rows, plot, console)


def _plot(rows: list[dict], path: Path, console: Console) -> None:
    from glotbench.plots._mpl import pyplot, save  # one line naming the plots extra when matplotlib is absent

    plt = pyplot()
    tasks = sorted({r["task"] for r in rows})
    fig, axes = plt.subplots(1, len(tasks), figsize=(4 * len(tasks), 3), squeeze=False)
    for ax, task in zip(axes[0], tasks):
        for model in sorted({r["model"] for r in rows if r["task"] == task}):
            pts = [(r["step"], r["score"]) for r in rows if r["task"] == task and r["model"] == model
                   and r["step"] is not None and r["score"] is not None]
            ax.scatter([p[0] for p in pts], [p[1] for p in pts], label=model, s=12)
        ax.set_title(task)
        ax.set_xlabel("step")
    axes[0][0].set_ylabel("score")
    fig.tight_layout()
    save(fig, path)
    console.print(f"wrote {path}")
