"""`glotbench tasks import-lm-eval TASK.yaml`: an lm-eval task YAML as a glotbench task YAML;
`--all DIR -o PKG`: every task file below DIR as one benchmark package, with a converted / refused table."""

from __future__ import annotations

from pathlib import Path

import typer

from glotbench.cli.nouns import tasks_app
from glotbench.settings import RunSettings
from glotbench.cli.option_groups import Flags, options, setting_option


@tasks_app.command("import")
@options((RunSettings, "output"), (Flags, "name"),
         about={"name": "the glotbench task's name (default: lm_eval.<task>); with --all the package's name "
                        "(default: lm_eval_tasks).",
                "output": "write the glotbench task here (default: print it); with --all the benchmark package's "
                          "folder (required)."})
def import_lm_eval(
    task_yaml: Path = typer.Argument(..., help="An lm-eval task YAML (lm_eval/tasks/.../NAME.yaml); with --all a "
                                     "folder of them (lm_eval/tasks, or one family's folder)."),
    out_old: Path = typer.Option(None, "--out", hidden=True, help="The old spelling of --output."),
    data_dir: str = setting_option(None, "--data-dir", help="Read the splits from DATA_DIR/<task>_<split>.jsonl (the "
                                 "dataset's own record format; relative to the written task file) instead of the Hub."),
    lm_eval_hooks: bool = setting_option(False, "--lm-eval-hooks", help="Delegate process_docs and !function doc_to_* hooks to "
                               "lm-eval's own Python (the lm_eval package must be importable here and where the task "
                               "runs; its version is recorded in the task). Without it such tasks are refused."),
    all_: bool = typer.Option(False, "--all", help="Convert every task file below the folder TASK_YAML into one "
                              "benchmark package at --output; groups and tags become suites; print converted / refused (why)."),
    language: str = setting_option("en", "--language", "-l", help="The task's language (lm-eval's YAML does not "
                                                                  "say)."),
    *, output: Path, name: str | None = None,
) -> None:
    """Convert an lm-eval task YAML into a glotbench task YAML; say what could not be converted.

    A task that could not run as lm-eval runs it is not written: one line names what is missing, exit 2."""
    out, hooks = output or out_old, lm_eval_hooks
    if all_:
        _import_tree(task_yaml, out, language, name or "lm_eval_tasks", data_dir, hooks)
        return
    from glotbench.tasks.lm_eval_import import cannot_run, convert, dump, read_lm_eval_yaml

    src = read_lm_eval_yaml(task_yaml)
    task, problems = convert(src, language=language, name=name, data_dir=data_dir, hooks=hooks)
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


def _import_tree(root: Path, out: Path | None, language: str, package: str, data_dir: str | None,
                 hooks: bool = False) -> None:
    from rich.console import Console
    from rich.table import Table

    from glotbench.errors import GlotbenchError
    from glotbench.tasks.lm_eval_import import convert_tree, package_files

    if not root.is_dir():
        raise GlotbenchError(f"{root}: --all takes a folder of lm-eval task YAMLs")
    if out is None:
        raise GlotbenchError("--all needs --output PKG_DIR: the benchmark package's folder")
    if not package.isidentifier():
        raise GlotbenchError(f"--name {package}: a package name is a Python identifier")
    tasks, rows = convert_tree(root, language=language, data_dir=data_dir, hooks=hooks)
    origin = {t: Path(f).name for f, t, status, _ in rows if status == "converted"}
    for rel, text in package_files(package, tasks, origin).items():
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    table = Table(title=f"lm-eval tasks below {root}", show_lines=False)
    for col in ("file", "lm-eval", "result", "why / what was left out"):
        table.add_column(col, overflow="fold")
    for row in rows:
        table.add_row(*row)
    console = Console(soft_wrap=True)
    console.print(table)
    n = {k: sum(1 for r in rows if r[2] == k) for k in ("converted", "refused", "group")}
    console.print(f"{n['converted']} converted, {n['refused']} refused, {n['group']} group file(s) as suites; "
                  f"package {package} in {out} (pip install {out}, or GLOTBENCH_TASKS_PATH={out / 'src' / package / 'tasks'})",
                  markup=False)
