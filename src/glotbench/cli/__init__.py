"""The ``glotbench`` command line. Each sub-command lives in its own module in this package
and registers itself on :data:`app` when imported below."""

from __future__ import annotations

import sys

import typer

app = typer.Typer(
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
        from glotbench import __version__

        typer.echo(f"glotbench {__version__}")
        raise typer.Exit()


@app.callback()
def _main(version: bool = typer.Option(False, "--version", help="Print the glotbench version and exit.",
                                       callback=_version, is_eager=True)) -> None:
    """Evaluate language models on native-language benchmarks."""


def _register() -> None:
    # One import per command module; each module decorates functions with @app.command().
    import importlib

    for mod in COMMAND_MODULES:
        importlib.import_module(f"glotbench.cli.{mod}")


# Add a module name here when you add a command module.
COMMAND_MODULES: list[str] = ["run", "tasks_cmd", "serve", "report_cmd", "compare_cmd", "estimate_cmd", "submission_cmd", "judge_cmd", "analyze_cmd", "analyze_factuality_cmd", "doctor_cmd", "translate_cmd", "build_cmd", "merge_cmd", ]


def main() -> None:
    import sqlite3

    from glotbench.errors import GlotbenchError

    _register()
    try:
        app()
    except GlotbenchError as err:
        typer.echo(f"error: {err}", err=True)
        sys.exit(2)
    except sqlite3.DatabaseError as err:  # a journal damaged in a page read after it opened
        typer.echo(f"error: SQLite: {err}; if this is a run journal, salvage it with: glotbench doctor RUN_DIR", err=True)
        sys.exit(2)
