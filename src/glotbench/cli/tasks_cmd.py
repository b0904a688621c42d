"""`glotbench tasks` and `glotbench export`."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from glotbench.cli import app


@app.command("tasks")
def list_tasks(pattern: str = typer.Argument("*", help="Glob over task names."),
               suite: str = typer.Option(None, "--suite", help="Only the tasks of this suite, in the suite's order.")) -> None:
    """List tasks with language, item count, metrics, version and source."""
    import fnmatch

    from glotbench.errors import DataError
    from glotbench.tasks.registry import all_specs, make_task, suites

    table = Table(title="glotbench tasks")
    for col in ("task", "lang", "items", "metrics", "version", "prompt", "suites", "source"):
        table.add_column(col)
    specs = all_specs()
    names = sorted(specs)
    if suite:
        if suite not in suites():
            raise typer.BadParameter(f"unknown suite {suite!r}; known: {', '.join(sorted(suites()))}", param_hint="--suite")
        names = suites()[suite]
    missing: list[str] = []
    for name in names:
        spec, path = specs[name]
        if not fnmatch.fnmatch(name, pattern):
            continue
        try:
            count = str(len(make_task(spec, path).raw_records(spec.dataset.eval_split)))
        except DataError as err:
            count = "data missing"
            missing.append(f"{name}: {err}")
        table.add_row(name, spec.language, count, ", ".join(spec.metrics), spec.version, spec.prompt_hash(),
                      ", ".join(spec.suites), spec.source.name or spec.source.url)
    Console().print(table)
    for line in missing:
        Console(soft_wrap=True).print(line, markup=False)
    s = suites()
    if s:
        Console().print("suites: " + "; ".join(f"{k} ({len(v)})" for k, v in sorted(s.items())))


@app.command("export")
def export(run_dir: Path = typer.Argument(..., help="A run directory."),
           out: Path = typer.Option(None, "--out", "-o", help="Default: RUN_DIR/samples.jsonl, RUN_DIR/lm-eval/, "
                                    "RUN_DIR/samples.csv"),
           fmt: str = typer.Option("samples", "--format", "-f", help="samples (glotbench JSONL), lm-eval "
                                   "(lm-evaluation-harness results + per-sample JSONL) or csv (one row per sample).")) -> None:
    """Write a run's samples (samples.jsonl), or its results in lm-eval's layout or as CSV."""
    from glotbench.engine.journal import Journal
    from glotbench.engine.session import JOURNAL_NAME
    from glotbench.errors import GlotbenchError
    from glotbench.output.results import export_samples

    if fmt not in ("samples", "lm-eval", "csv"):
        raise typer.BadParameter(f"unknown format {fmt!r}; choose samples, lm-eval or csv", param_hint="--format")
    if fmt in ("lm-eval", "csv"):
        from glotbench.output.export_csv import write_csv
        from glotbench.output.export_lmeval import write_lmeval

        j = Journal(run_dir / JOURNAL_NAME) if (run_dir / JOURNAL_NAME).exists() else None
        try:
            if fmt == "lm-eval":
                for p in write_lmeval(run_dir, out or run_dir / "lm-eval", journal=j):
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
