"""The ``glotbench`` command line. Each sub-command lives in its own module in this package
and registers itself on :data:`app` when imported.

Command modules are imported lazily (:class:`LazyGroup`): ``glotbench --version`` imports none,
``glotbench --help`` lists every command from :data:`COMMANDS` (name, modules, the help line
typer would show) without importing them, and ``glotbench NAME ...`` builds the catalog
(:func:`glotbench.catalog.build`, this composition root's one call) and imports only NAME's
modules through it. tests/test_cli_lazy.py checks that :data:`COMMANDS` matches what the modules register
and that the help text is the same as with every module imported."""

from __future__ import annotations

import sys

import click
import typer
from typer.core import TyperGroup

# Every top-level command or group, in the order --help lists them: name -> (the command modules
# that register it, the help line typer shows for it). Add a row when you add a command.
COMMANDS: dict[str, tuple[tuple[str, ...], str]] = {
    "run": (("run",), "Evaluate a model; re-running the same command resumes from the journal."),
    "tasks": (("tasks_cmd",), "List tasks with language, item count, metrics, version, source and the data's licence."),
    'export': (('tasks_cmd',), "Write a run's samples (samples.jsonl), or its results in lm-eval's layout, as CSV or as Inspect AI logs."),
    "serve": (("serve",), "Start the leaderboard web service (pages and REST API)."),
    "report": (("report_cmd",), "Scores with intervals, per-slice plots, error counts and a sample browser, in one offline HTML file."),
    "compare": (("compare_cmd",), "Compare finished runs: --crosslingual, --ranks (--a, --b), --paired RUN_A RUN_B or --duels RUN..."),
    "estimate": (("estimate_cmd",), "Count the requests, input and output tokens and the cost a run would have; no model is called."),
    "submission": (("submission_cmd",), "Write leaderboard submission files for the tasks the run scored on --split test."),
    "judge": (("judge_cmd",), "Re-grade an existing run with another judge, without calling the evaluated model."),
    'compare-judges': (('judge_cmd',), "Judge robustness (Chinese SimpleQA appendix B): each model's scores under each judge,\nKendall's tau between the judges' model rankings, Cohen's kappa on item grades."),
    "judge-pairwise": (("judge_pairwise_cmd",), "Judge two or more runs' answers side by side: each shared item twice, positions swapped."),
    "doctor": (("doctor_cmd",), "Check a run journal; if it is damaged, copy every readable row into a fresh journal (the\ndamaged file is kept beside it) and report what was lost. Rerunning then resends only the lost requests."),
    "translate": (("translate_cmd",), "Translate sentence by sentence, journaled: rerunning the same command sends nothing twice."),
    "merge": (("merge_cmd",), "Merge shard journals into RUN/journal.sqlite (idempotent: a second merge changes nothing).\nRerun `glotbench run` with the same settings afterwards to write results.json from it."),
    "tasks-import-lm-eval": (("tasks_import_cmd",), "Convert an lm-eval task YAML into a glotbench task YAML; say what could not be converted."),
    "admin": (("serve",), "Manage the leaderboard: users, API tokens and tasks."),
    "analyze": (("analyze_cmd", "analyze_signal_cmd", "analyze_contamination_cmd"), "Analyses of a finished run (reads its journal; no model calls unless --judge)."),
    "build": (("build_cmd",), "Build a native-language benchmark: cloze/word-order items from sentences, QA from passages, filters, selection, checklists, human review. Every step writes JSONL with provenance."),
    "data": (("data_cmd",), "Benchmark data: list, pull (download and check), verify, lock (docs/data.md)."),
}


# `glotbench GROUP SUB ...` spelled as a command of its own ("tasks" lists tasks and takes a glob,
# so it cannot be a click group): (GROUP, SUB) -> the hidden top-level command that runs it
NESTED = {("tasks", "import-lm-eval"): "tasks-import-lm-eval"}
HIDDEN = set(NESTED.values())


def _load(name: str) -> None:
    """Build the catalog, then import ``name``'s modules and those a package adds to it (bench.command)."""
    from glotbench import catalog

    catalog.build().load_command(name, tuple(f"glotbench.cli.{mod}" for mod in COMMANDS[name][0]))


class LazyGroup(TyperGroup):
    """The top-level group: lists :data:`COMMANDS` without importing them; imports a command's
    modules when it is run (or its own --help is asked for)."""

    listing = False  # True while the group's own help is written: commands are shown from COMMANDS

    def list_commands(self, ctx: click.Context) -> list[str]:
        names = list(COMMANDS)
        return names + [n for n in super().list_commands(ctx) if n not in COMMANDS]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in COMMANDS and not self.listing:
            _load(cmd_name)  # even when already imported: the catalog is built before any command runs
        cmd = super().get_command(ctx, cmd_name)
        if cmd is not None or cmd_name not in COMMANDS:
            return cmd
        if self.listing:
            return click.Command(cmd_name, help=COMMANDS[cmd_name][1], hidden=cmd_name in HIDDEN)
        cmd = typer.main.get_group(app).commands.get(cmd_name)  # the click group again, now with it
        if cmd is not None:
            self.commands[cmd_name] = cmd
        return cmd

    def resolve_command(self, ctx: click.Context, args: list[str]):
        if args and args[0] == "run":  # lm-eval's flags (--model_args, --output_path ...) in glotbench's spelling
            from glotbench.cli.lm_eval_flags import translate

            args = [args[0], *translate(args[1:])]
        if len(args) >= 2 and (args[0], args[1]) in NESTED:
            cmd = self.get_command(ctx, NESTED[args[0], args[1]])
            return f"{args[0]} {args[1]}", cmd, args[2:]
        return super().resolve_command(ctx, args)

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except Exception as err:
            if type(err).__name__ == "NoSuchOption":  # click's, or the copy recent typer ships
                _suggest_option(err)  # a sub-command's unknown option: the nearest of its own, closest first
            raise

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        self.listing = True
        try:
            return super().format_help(ctx, formatter)
        finally:
            self.listing = False


def _suggest_option(err) -> None:
    """Replace click's own hint (difflib over every spelling, hidden ones too, sorted by name) with
    :func:`glotbench.closest.closest` over the command's shown options."""
    from glotbench.closest import closest

    command = getattr(getattr(err, "ctx", None), "command", None)
    known = [o for p in getattr(command, "params", []) if not getattr(p, "hidden", False)
             for o in [*p.opts, *p.secondary_opts] if o.startswith("--")]
    near = closest(err.option_name, known)
    err.possibilities = None
    err.message = f"No such option: {err.option_name}" + (f"; did you mean {', '.join(near)}?" if near else "")


app = typer.Typer(
    cls=LazyGroup,
    name="glotbench",
    help="Evaluate language models on native-language benchmarks.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _quiet_flag_types() -> None:
    """Help shows a type (``<int>``) for options that take a value, none for on/off flags: recent
    typer labels every flag ``<bool>``, which reads as if the flag wanted a value."""
    core = getattr(typer, "core", None)
    option = getattr(core, "TyperOption", None)
    shown = getattr(option, "display_type_rich", None)
    if shown is None or getattr(shown, "_glotbench", False):
        return

    def display_type_rich(self, ctx):
        if getattr(self, "is_flag", False) and self.metavar is None:
            return None
        return shown(self, ctx)

    display_type_rich._glotbench = True  # type: ignore[attr-defined]
    option.display_type_rich = display_type_rich


_quiet_flag_types()


def _version(value: bool) -> None:
    if value:
        from glotbench.version import __version__

        typer.echo(f"glotbench {__version__}")
        raise typer.Exit()


@app.callback()
def _main(version: bool = typer.Option(False, "--version", help="Print the glotbench version and exit.",
                                       callback=_version, is_eager=True)) -> None:
    """Evaluate language models on native-language benchmarks."""


def _register() -> None:
    """Import every command module (tests and tools that want the whole command tree at once)."""
    for name in COMMANDS:
        _load(name)


def main() -> None:
    import sqlite3

    from glotbench.errors import GlotbenchError

    try:
        app()
    except GlotbenchError as err:
        typer.echo(f"error: {err}", err=True)
        sys.exit(2)
    except sqlite3.DatabaseError as err:  # a journal damaged in a page read after it opened
        typer.echo(f"error: SQLite: {err}; if this is a run journal, salvage it with: glotbench doctor RUN_DIR", err=True)
        sys.exit(2)
    except OSError as err:  # the file system said no: an output path that is a file, a read-only disk ...
        typer.echo(f"error: {os_error_line(err)}", err=True)
        sys.exit(2)


def os_error_line(err: OSError) -> str:
    """One line for an OSError, naming the path and what to do where that is clear."""
    import errno

    where = err.filename if err.filename is not None else "?"
    if isinstance(err, (FileExistsError, NotADirectoryError)):
        return f"{where}: exists and is not a folder; give an output folder that does not exist or is a folder"
    if err.errno == errno.EROFS:
        return f"{where}: read-only file system; write the output somewhere writable (--output)"
    if isinstance(err, PermissionError):
        return f"{where}: permission denied ({err.strerror}); write the output somewhere writable (--output)"
    if err.errno == errno.ENOSPC:
        return f"{where}: no space left on the device; free some and rerun (journaled answers are kept)"
    return f"{where}: {err.strerror or err}"
