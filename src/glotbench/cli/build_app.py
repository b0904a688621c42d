"""The `glotbench build` command group. Each module of build steps adds its commands to
:data:`build_app`; cli/build_cmd.py imports those modules, in order, and adds the group to the CLI."""

import typer

build_app = typer.Typer(
    help="Build a native-language benchmark: cloze/word-order items from sentences, QA from passages, "
         "filters, selection, checklists, human review. Every step writes JSONL with provenance.",
    no_args_is_help=True,
)
