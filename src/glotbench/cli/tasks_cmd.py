"""`glotbench tasks` and `glotbench export`."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table

from glotbench.cli.nouns import runs_app, tasks_app
from glotbench.settings import RunSettings
from glotbench.cli.option_groups import Flags, one_of, options


COLUMNS = ("task", "lang", "items", "metrics", "version", "prompt", "suites", "source", "license")


def task_rows(pattern: str = "*", suite: str | list[str] | None = None) -> list[dict]:
    """One dict per task matching ``pattern`` (and among ``suite``: task, suite or glob names as ``--tasks``
    reads them, in their order): the columns of ``glotbench tasks`` with full values; ``data_error`` says
    why a task's data is missing."""
    import fnmatch

    from glotbench.errors import DataError
    from glotbench.tasks.item_counts import ItemCounts
    from glotbench.tasks.registry import all_specs, make_task, resolve

    specs = all_specs()
    names = sorted(specs)
    if suite:
        names = [t.spec.name for t in resolve([suite] if isinstance(suite, str) else list(suite))]
    rows = []
    counts = ItemCounts()  # remembered per task and data file identity (tasks/item_counts.py)
    for name in names:
        spec, path = specs[name]
        if not fnmatch.fnmatch(name, pattern):
            continue
        error = None
        task = make_task(spec, path)
        try:
            count: int | None = counts.get(task)
        except DataError as err:
            count, error = None, str(err)
        # the metrics a default run reports, headline first (a YAML-judged task's come from its judge)
        mode = "loglikelihood_rolling" if spec.output_type == "loglikelihood_rolling" else "generate"
        rows.append({"task": name, "lang": spec.language, "items": count, "metrics": task.metric_names(mode),
                     "version": spec.version, "prompt": spec.prompt_hash(), "suites": list(spec.suites),
                     "source": spec.source.name or spec.source.url,
                     # what the data may be used for: the task file's source.license, "not stated" if it has none
                     "license": spec.source.license or "not stated", "description": spec.description,
                     "data_error": error})
    counts.save()
    return rows


def _cell(row: dict, col: str) -> str:
    v = row[col]
    if col == "items" and v is None:
        return "data missing"
    return ", ".join(v) if isinstance(v, list) else str(v if v is not None else "")


def tasks_table(rows: list[dict]) -> Table:
    """The terminal table; task names are never cut (the other columns wrap instead)."""
    table = Table(title="glotbench tasks")
    width = max([len(r["task"]) for r in rows] + [4])
    table.add_column("task", no_wrap=True, min_width=width)
    for col in COLUMNS[1:]:
        table.add_column(col, overflow="fold")
    for r in rows:
        table.add_row(*(_cell(r, c) for c in COLUMNS))
    return table


@tasks_app.command("list")
@options((Flags, "fmt"), (RunSettings, "tasks"), about={"tasks": "only these tasks (a suite: its tasks, in the suite's order).",
                                                      "fmt": "table (the default on a terminal), plain (tab-separated lines, one per task, "
                                       "full values: the default when the output is not a terminal) or json (the tasks "
                                       "and suites, for scripts)."})
def list_tasks(
    pattern: str = typer.Argument("*", help="Glob over task names."),
    json_out: bool = typer.Option(False, "--json", hidden=True, help="The spelling before --format json."),
    plain: bool = typer.Option(False, "--plain", hidden=True, help="The spelling before --format plain."),
    *, fmt: Optional[str] = None, tasks: Optional[list[str]] = None,
) -> None:
    """List tasks with language, item count, metrics, version, source and the data's licence.

    Convert an lm-eval task YAML: glotbench tasks import TASK.yaml [-o OUT.yaml]
    (docs/adding-a-task.md)."""
    import json
    import sys

    from glotbench.tasks.registry import suites

    one_of(fmt, "--format", ("table", "plain", "json"))
    json_out, plain = json_out or fmt == "json", plain or fmt == "plain"
    rows = task_rows(pattern, tasks or None)
    s = suites()
    if json_out:
        typer.echo(json.dumps({"tasks": rows, "suites": s}, ensure_ascii=False, indent=2))
        return
    missing = [f"{r['task']}: {r['data_error']}" for r in rows if r["data_error"]]
    if plain or (fmt != "table" and not sys.stdout.isatty()):
        typer.echo("\t".join(COLUMNS))
        for r in rows:
            typer.echo("\t".join(_cell(r, c) for c in COLUMNS))
        if s:
            typer.echo("suites: " + "; ".join(f"{k} ({len(v)})" for k, v in sorted(s.items())))
        for line in missing:
            typer.echo(line, err=True)
        return
    console = Console()
    console.print(tasks_table(rows))
    for line in missing:
        Console(soft_wrap=True).print(line, markup=False)
    if s:
        console.print("suites: " + "; ".join(f"{k} ({len(v)})" for k, v in sorted(s.items())))


@runs_app.command("export")
@options((RunSettings, "output"), (Flags, "fmt"),
         about={"output": "default RUN_DIR/samples.jsonl, RUN_DIR/lm-eval/, RUN_DIR/samples.csv or RUN_DIR/inspect/ "
                          "(by --format).",
                "fmt": "samples (glotbench JSONL, the default), lm-eval (lm-evaluation-harness results + per-sample "
                       "JSONL), csv (one row per sample) or inspect (Inspect AI eval logs, one per task)."})
def export(run_dir: Path = typer.Argument(..., help="A run directory."),
           out_old: Path = typer.Option(None, "--out", hidden=True, help="The old spelling of --output."),
           *, output: Path | None, fmt: str = "samples") -> None:
    """Write a run's samples (samples.jsonl), or its results in lm-eval's layout, as CSV or as Inspect AI logs."""
    from glotbench.engine.journal import Journal
    from glotbench.engine.journal import JOURNAL_NAME
    from glotbench.errors import GlotbenchError
    from glotbench.output.results import export_samples

    out = output or out_old
    if fmt not in ("samples", "lm-eval", "csv", "inspect"):
        raise typer.BadParameter(f"unknown format {fmt!r}; choose samples, lm-eval, csv or inspect", param_hint="--format")
    if fmt in ("lm-eval", "csv", "inspect"):
        from glotbench.output.export_csv import write_csv
        from glotbench.output.export_lmeval import write_lmeval
        from glotbench.tasks.reread import task_choices, task_items

        j = Journal(run_dir / JOURNAL_NAME) if (run_dir / JOURNAL_NAME).exists() else None
        try:
            if fmt == "inspect":
                from glotbench.output.export_inspect import build_logs, write_inspect

                build_logs(run_dir, j)  # a missing inspect-ai is one line before anything is written
                for p in write_inspect(run_dir, out or run_dir / "inspect", journal=j, choices_of=task_choices):
                    Console(soft_wrap=True).print(f"wrote {p}", markup=False)
            elif fmt == "lm-eval":
                for p in write_lmeval(run_dir, out or run_dir / "lm-eval", journal=j, items_of=task_items):
                    Console(soft_wrap=True).print(f"wrote {p}", markup=False)
            else:
                n = write_csv(run_dir, out or run_dir / "samples.csv", journal=j)
                Console(soft_wrap=True).print(f"wrote {n} samples to {out or run_dir / 'samples.csv'}", markup=False)
        finally:
            if j is not None:
                j.close()
        return
    path = run_dir / JOURNAL_NAME
    if not path.exists():
        raise GlotbenchError(f"{run_dir}: no {JOURNAL_NAME} here; is it a glotbench run directory?")
    j = Journal(path)
    try:
        n = export_samples(j, out or run_dir / "samples.jsonl")
    finally:
        j.close()
    Console().print(f"wrote {n} samples to {out or run_dir / 'samples.jsonl'}")
