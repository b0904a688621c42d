"""The ``glotbench`` command line: a tree of nouns. Each sub-command lives in a module of this
package and registers itself when imported: on :data:`app` (``run``, ``serve``) or on its noun's
group (``runs``, ``judge``, ``tasks``: cli/nouns.py; ``analyze``, ``build``, ``data``, ``admin``:
their own modules).

Command modules are imported lazily (:class:`LazyGroup`): ``glotbench --version`` imports none,
``glotbench --help`` lists the top level from :data:`COMMANDS` (name -> modules) with the help line
read from the modules' source (cli/command_help.py, no import), and ``glotbench NAME ...`` builds the
catalog (:func:`glotbench.catalog.build`, this composition root's one call) and imports only NAME's
modules through it. Old spellings (:data:`ALIASES`) run the new command after one line on stderr.
tests/test_cli_lazy.py checks that the help is the same as with every module imported."""

from __future__ import annotations

import sys

import click
import typer
from typer.core import TyperGroup

# The top level, in the order --help lists it: name -> the modules that add it (for a group, every
# module that adds sub-commands to it). The help lines are the modules' own (cli/command_help.py).
COMMANDS: dict[str, tuple[str, ...]] = {
    "run": ("run",),
    "tasks": ("nouns", "tasks_cmd", "tasks_import_cmd"),
    "runs": ("nouns", "report_cmd", "compare_cmd", "tasks_cmd", "merge_cmd", "doctor_cmd", "submission_cmd",
             "estimate_cmd"),
    "judge": ("nouns", "judge_cmd", "judge_pairwise_cmd"),
    "analyze": ("analyze_cmd", "analyze_signal_cmd", "analyze_contamination_cmd"),
    "build": ("build_cmd", "translate_cmd"),
    "data": ("data_cmd",),
    "serve": ("serve",),
    "admin": ("serve",),
}

# Old top-level spellings, kept for one release (hidden): old -> the new words. Each prints one line
# on stderr naming the new command, then runs it. Old sub-command spellings: NounGroup.aliases.
ALIASES: dict[str, tuple[str, ...]] = {
    "report": ("runs", "report"),
    "compare": ("runs", "compare"),
    "export": ("runs", "export"),
    "merge": ("runs", "merge"),
    "doctor": ("runs", "doctor"),
    "submission": ("runs", "submission"),
    "estimate": ("runs", "estimate"),
    "compare-judges": ("judge", "compare"),
    "judge-pairwise": ("judge", "pairwise"),
    "translate": ("build", "translate"),
    "tasks-import-lm-eval": ("tasks", "import"),
}


def renamed(old: str, new: str) -> None:
    """The one line an old spelling prints (stderr) before it runs the new command."""
    typer.echo(f"note: `glotbench {old}` is now `glotbench {new}`; the old spelling goes in the next release",
               err=True)


def _load(name: str) -> None:
    """Build the catalog, then import ``name``'s modules and those a package adds to it (bench.command)."""
    from glotbench import catalog

    catalog.build().load_command(name, tuple(f"glotbench.cli.{mod}" for mod in COMMANDS[name]))


def _no_such_command(ctx: click.Context, name: str, known: dict[str, list[str]]) -> None:
    """Fail with the nearest commands (:func:`glotbench.closest.closest`), closest first; ``known``:
    a name as typed -> the full commands it stands for."""
    from glotbench.closest import LIMIT, closest

    near = [full for n in closest(name, known) for full in known[n]][:LIMIT]
    ctx.fail(f"No such command {name!r}" + (f"; did you mean {', '.join(near)}?" if near else
                                            f"; the commands: {', '.join(dict.fromkeys(COMMANDS))}"))


class NounGroup(TyperGroup):
    """A noun's group (``glotbench runs``, ``judge``, ``data``...): "did you mean" for a misspelt
    sub-command; ``aliases`` (old sub-command spellings, one line on stderr); ``default``: the
    sub-command run when the first word is none of them (``glotbench tasks GLOB`` is ``tasks list
    GLOB``), with the rename line when ``default_is_old`` (``glotbench judge RUN`` was ``judge rerun``)."""

    aliases: dict[str, str] = {}
    default: str | None = None
    default_is_old = False

    @staticmethod
    def _path(ctx: click.Context) -> str:
        """The words after ``glotbench`` that name this group (``build review``)."""
        names = []
        while ctx.parent is not None:
            names.append(ctx.info_name or "")
            ctx = ctx.parent
        return " ".join(reversed(names))

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        first = args[0] if args else None
        if self.default and (args or not self.default_is_old) and first not in self.commands \
                and first not in self.aliases and first not in ctx.help_option_names and not self._misspelt(first):
            if self.default_is_old:
                renamed(self._path(ctx), f"{self._path(ctx)} {self.default}")
            args = [self.default, *args]
        return super().parse_args(ctx, args)

    def _misspelt(self, word: str | None) -> bool:
        """A first word that is no option, file, glob or dotted name but near a sub-command's name:
        a typo (resolve_command says "did you mean"), not the default sub-command's argument."""
        import os

        from glotbench.closest import closest

        return bool(word and not word.startswith("-") and not os.path.exists(word)
                    and not any(c in word for c in "*?[./") and closest(word, self.commands))

    def resolve_command(self, ctx: click.Context, args: list[str]):
        if args and args[0] in self.aliases:
            new = self.aliases[args[0]]
            renamed(f"{self._path(ctx)} {args[0]}", f"{self._path(ctx)} {new}")
            args = [new, *args[1:]]
        if args and self.get_command(ctx, args[0]) is None and not args[0].startswith("-"):
            shown = [n for n in self.list_commands(ctx) if not getattr(self.get_command(ctx, n), "hidden", False)]
            _no_such_command(ctx, args[0], {n: [n] for n in shown})
        return super().resolve_command(ctx, args)


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
            from glotbench.cli.command_help import command_help

            text, hidden = command_help(cmd_name, COMMANDS[cmd_name])
            return click.Command(cmd_name, help=text, hidden=hidden)
        cmd = typer.main.get_group(app).commands.get(cmd_name)  # the click group again, now with it
        if cmd is not None:
            self.commands[cmd_name] = cmd
        return cmd

    def resolve_command(self, ctx: click.Context, args: list[str]):
        if args and args[0] in ALIASES and args[0] not in COMMANDS:
            new = ALIASES[args[0]]
            renamed(args[0], " ".join(new))
            args = [*new, *args[1:]]
        if args and args[0] == "run":  # lm-eval's flags (--model_args, --output_path ...) in glotbench's spelling
            from glotbench.cli.lm_eval_flags import translate

            args = [args[0], *translate(args[1:])]
        if args and not args[0].startswith("-") and args[0] not in COMMANDS and self.get_command(ctx, args[0]) is None:
            _no_such_command(ctx, args[0], _every_command())
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


def _every_command() -> dict[str, list[str]]:
    """Each shown top-level name and sub-command name -> the full commands it names (every module
    imported: only on the way to an unknown-command error)."""
    _register()
    known: dict[str, list[str]] = {}
    for name, cmd in typer.main.get_group(app).commands.items():
        if getattr(cmd, "hidden", False):
            continue
        known.setdefault(name, []).append(name)
        for sub, sub_cmd in getattr(cmd, "commands", {}).items():
            if not getattr(sub_cmd, "hidden", False):
                known.setdefault(sub, []).append(f"{name} {sub}")
    return known


def _suggest_option(err) -> None:
    """Replace click's own hint (difflib over every spelling, hidden ones too, sorted by name) with
    :func:`glotbench.closest.closest` over the command's shown options."""
    from glotbench.closest import closest

    command = getattr(getattr(err, "ctx", None), "command", None)
    known = [o for p in getattr(command, "params", []) if not getattr(p, "hidden", False)
             for o in [*p.opts, *p.secondary_opts] if o.startswith("--")]
    # the command's settings too (--timout -> --set timeout=...): matched by name as a flag would be spelled
    settings = {"--" + n.replace("_", "-"): f"--set {n}=..." for n in
                getattr(getattr(command, "callback", None), "glotbench_settings", None) or []}
    near = [settings.get(n, n) for n in closest(err.option_name, [*known, *(f for f in settings if f not in known)])]
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
        typer.echo(f"error: SQLite: {err}; if this is a run journal, salvage it with: glotbench runs doctor RUN_DIR", err=True)
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
