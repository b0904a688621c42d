"""The `glotbench build` command group. Each module of build steps adds its commands to
:data:`build_app`; cli/build_cmd.py imports those modules, in order, and adds the group to the CLI."""

import typer

from glotbench.cli import NounGroup

build_app = typer.Typer(
    cls=NounGroup,
    help="Build a native-language benchmark: cloze/word-order items from sentences, QA from passages, "
         "filters, selection, checklists, human review, translation. Every step writes JSONL with provenance.",
    no_args_is_help=True,
)
