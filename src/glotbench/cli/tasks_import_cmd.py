"""`glotbench tasks import-lm-eval TASK.yaml`: an lm-eval task YAML as a glotbench task YAML."""

from __future__ import annotations

from pathlib import Path

import typer

from glotbench.cli import app


@app.command("tasks-import-lm-eval", hidden=True)
def import_lm_eval(
    task_yaml: Path = typer.Argument(..., help="An lm-eval task YAML (lm_eval/tasks/.../NAME.yaml)."),
    out: Path = typer.Option(None, "-o", "--out", help="Write the glotbench task here (default: print it)."),
    language: str = typer.Option("en", "--language", help="The task's language (lm-eval's YAML does not say)."),
    name: str = typer.Option(None, "--name", help="The glotbench task name (default: lm_eval.<task>)."),
    data_dir: str = typer.Option(None, "--data-dir", help="Read the splits from DATA_DIR/<task>_<split>.jsonl (the "
                                 "dataset's own record format; relative to the written task file) instead of the Hub."),
) -> None:
    """Convert an lm-eval task YAML into a glotbench task YAML; say what could not be converted. A task
    that could not run as lm-eval runs it is not written: one line names what is missing, exit 2."""
    from glotbench.tasks.lm_eval_import import cannot_run, convert, dump, read_lm_eval_yaml

    src = read_lm_eval_yaml(task_yaml)
    task, problems = convert(src, language=language, name=name, data_dir=data_dir)
    if fatal := cannot_run(problems):
        typer.echo(f"error: {task_yaml}: not converted, the task could not run as lm-eval runs it: {'; '.join(fatal)}"
                   + ("" if out is None else f" ({out} not written)"), err=True)
        raise typer.Exit(2)
    text = dump(task, task_yaml.name)
    if out is None:
        typer.echo(text, nl=False)
    else:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
        typer.echo(f"wrote {out} (task {task['name']})", err=True)
    for p in problems:
        typer.echo(p if p.startswith("note: ") else f"not converted: {p}", err=True)
