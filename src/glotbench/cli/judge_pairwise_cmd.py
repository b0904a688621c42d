"""`glotbench judge-pairwise`: two or more runs' answers judged side by side (docs/pairwise.md)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table

from glotbench.cli.nouns import judge_app
from glotbench.cli.option_groups import JournalOptions, options, setting_option
from glotbench.settings import CallOptions, JudgeOptions, RunSettings


def _ci(cell: dict, digits: int = 3) -> str:
    v = cell.get("value")
    if v is None:
        return "-"
    lo, hi = cell.get("low"), cell.get("high")
    if lo is None or hi is None:
        return f"{v:.{digits}f}"
    return f"{v:.{digits}f} [{lo:.{digits}f}, {hi:.{digits}f}]"


def _pairs_table(summary: dict) -> Table:
    from glotbench.output.table import unclipped

    t = Table(title=f"Pairwise: judge {summary['judge']} · each item judged in both orders · 95% bootstrap CI over items")
    for name in ("A", "B", "n", "A wins", "ties", "B wins", "A score (win + tie/2)", "flips", "half ties",
                 "unreadable", "failed", "only A", "only B"):
        t.add_column(name, justify="left" if name in ("A", "B") else "right")
    for p in summary["pairs"]:
        t.add_row(p["a"], p["b"], str(p["n"]), _ci(p["win"]), _ci(p["tie"]), _ci(p["loss"]), _ci(p["score"]),
                  str(p["flips"]), str(p["half_ties"]), str(p["unreadable"]), str(p["failed"]), str(p["only_a"]),
                  str(p["only_b"]))
    return unclipped(t)


def _ranking_table(summary: dict) -> Table:
    from glotbench.output.table import unclipped

    bt = summary["bradley_terry"]
    t = Table(title=f"Bradley-Terry ranking · 95% bootstrap CI over {bt['n_items']} item(s)")
    for name in ("rank", "run", "strength [95% CI]"):
        t.add_column(name, justify="left" if name == "run" else "right")
    for r in bt["runs"]:
        t.add_row(str(r["rank"]), r["label"], _ci({"value": r["strength"], "low": r["low"], "high": r["high"]}))
    return unclipped(t)


@judge_app.command("pairwise")
@options((RunSettings, "tasks"), (RunSettings, "output"), jo=(JudgeOptions, {"required": ("judge",)}),
         calls=CallOptions, journal=(JournalOptions, {"only": ("wait",)}),
         about={"output": "Folder for the judge journal, pairwise.json and pairwise_items.jsonl (default: runs/pairwise/<hash of the runs and judge>)."})
def judge_pairwise_cmd(
    run_dirs: list[Path] = typer.Argument(..., help="Two or more run directories (each holds journal.sqlite)."),
    judge_max_tokens: int = setting_option(2048, "--judge-max-tokens", help="Most tokens of a judge reply (MT-Bench: 2048)."),
    n_boot: int = setting_option(1000, "--n-boot", help="Bootstrap resamples (items drawn with replacement)."),
    seed: int = setting_option(0, "--seed", help="Bootstrap seed."),
    bt_prior_var: float = setting_option(10.0, "--bt-prior-var", help="Variance of the Bradley-Terry strengths' Gaussian prior (logits^2); keeps them finite when a run wins every comparison."),
    no_progress: bool = setting_option(False, "--no-progress", help="No progress bar (logs, CI)."),
    *, jo: JudgeOptions, calls: CallOptions, journal: JournalOptions, output: Optional[Path], tasks: Optional[list[str]],
) -> None:
    """Judge two or more runs' answers side by side: each shared item twice, positions swapped.

    Win/tie/loss per pair of runs and a Bradley-Terry ranking, with bootstrap intervals over
    items. The judge's calls are journaled in the output folder: rerunning sends nothing twice. A failed
    judge request, after max_retries retries, leaves the item out as failed; a rerun asks again."""
    from glotbench.cli.judge_cmd import load_judge_of
    from glotbench.errors import GlotbenchError
    from glotbench.judges.pairwise import default_output, judge_pairwise, plan_pairs
    from glotbench.judges.pairwise_runs import read_runs
    from glotbench.judges.pairwise_summary import summarise, write_outputs

    if len(run_dirs) < 2:
        raise GlotbenchError("judge-pairwise compares two or more run directories (got one)")
    if bt_prior_var <= 0:
        raise GlotbenchError(f"--bt-prior-var must be > 0 (got {bt_prior_var:g})")
    names = [n.strip() for raw in (tasks or []) for n in raw.split(",") if n.strip()] or None
    runs = read_runs(run_dirs, names)
    plan = plan_pairs(runs)  # bad input stops here, before the judge is loaded
    model = load_judge_of(jo, calls)
    out_dir = output or default_output(run_dirs, model.model_id)
    console = Console(stderr=True, soft_wrap=True)
    progress = None
    if not no_progress:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        progress = Progress(TextColumn("judging pairs"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                            console=console)
        progress.start()
        pid = progress.add_task("judging", total=sum(len(shared) for _, shared in plan))
    try:
        pairs, stats = judge_pairwise(runs, model, out_dir, concurrency=calls.concurrency, max_tokens=judge_max_tokens,
                                      timeout=calls.timeout, max_retries=calls.max_retries, wait=journal.wait, plan=plan,
                                      on_item=(lambda: progress.update(pid, advance=1)) if progress else None)
    finally:
        if progress:
            progress.stop()
    summary = summarise(runs, pairs, stats, n_boot=n_boot, seed=seed, prior_var=bt_prior_var)
    write_outputs(out_dir, summary, runs, pairs)
    out = Console(width=None if sys.stdout.isatty() else 200)
    out.print(_pairs_table(summary))
    out.print(_ranking_table(summary))
    out.print(f"strengths in logits (natural log-odds), summing to 0; a tie is half a win; "
              f"Gaussian prior N(0, {summary['bradley_terry']['prior_var']:g}) (docs/pairwise.md)", soft_wrap=True)
    for p in summary["pairs"]:
        if p["judged"] == 0:
            out.print(f"{p['a']} vs {p['b']}: no shared item (same task, same item id) that both answered", style="yellow")
        elif p["n"] == 0:
            out.print(f"{p['a']} vs {p['b']}: no item counted ({p['unreadable']} unreadable, {p['failed']} failed); "
                      f"the judge's replies are in {Path(out_dir) / 'pairwise_items.jsonl'}", style="yellow", soft_wrap=True)
    for task, lang in stats.english_fallback.items():
        out.print(f"{task}: no pairwise judge prompt in language {lang!r}: judged with the English one", style="yellow")
    if stats.stopped:
        out.print(f"judge requests stopped: {stats.stopped}", style="yellow", soft_wrap=True)
    out.print(f"judge {stats.judge_id}: requests sent {stats.requests_sent}, cached {stats.requests_cached}, "
              f"failed {stats.failed} (rerun to retry)", soft_wrap=True)
    out.print(f"results: {Path(out_dir) / 'pairwise.json'} · items: {Path(out_dir) / 'pairwise_items.jsonl'}", soft_wrap=True)
