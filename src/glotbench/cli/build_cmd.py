"""`glotbench build ...`: the benchmark-building steps (docs/building-a-benchmark.md). Each group of
steps lives in its own module, listed in BUILD_MODULES, which adds its commands to :data:`build_app`."""

from __future__ import annotations

import typer

from glotbench.catalog import load_module
from glotbench.cli import app

build_app = typer.Typer(
    help="Build a native-language benchmark: cloze/word-order items from sentences, QA from passages, "
         "filters, selection, checklists, human review. Every step writes JSONL with provenance.",
    no_args_is_help=True,
)
app.add_typer(build_app, name="build")

# Add a module name here when you add a module of build steps.
BUILD_MODULES: list[str] = [
    # items made or checked by models: qa, criteria, difficulty, dedup, swiss select, checklist
    "build_qa_cmd",
    # items made from text without a model; human review; the one `filter` command (--sequential,
    # and --difficulty handed to build_qa_cmd): loaded last, as a later command of the same name wins
    "build_items_cmd",
]

for _mod in BUILD_MODULES:
    load_module(f"glotbench.cli.{_mod}")
