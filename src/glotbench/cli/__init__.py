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
COMMAND_MODULES: list[str] = ["run", "tasks_cmd", "serve", "report_cmd", "compare_cmd", "estimate_cmd", "submission_cmd", "judge_cmd", "analyze_cmd", "analyze_factuality_cmd", "doctor_cmd", "translate_cmd", "build_cmd", "merge_cmd", "data_cmd", ]


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
