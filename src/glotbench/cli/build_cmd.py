"""`glotbench build ...`: the benchmark-building steps (docs/building-a-benchmark.md). Each group of
steps lives in its own module, imported at the end of this one, which adds its commands to
:data:`build_app`."""

from __future__ import annotations

import typer

from glotbench.cli import app

build_app = typer.Typer(
    help="Build a native-language benchmark: cloze/word-order items from sentences, QA from passages, "
         "filters, selection, checklists, human review. Every step writes JSONL with provenance.",
    no_args_is_help=True,
)
app.add_typer(build_app, name="build")

# Import a module of build steps here when you add one (each adds its commands to build_app).
# Items made or checked by models: qa, criteria, difficulty, dedup, swiss select, checklist.
from glotbench.cli import build_qa_cmd  # noqa: E402,F401

# Items made from text without a model; human review; the one `filter` command (--sequential, and
# --difficulty handed to build_qa_cmd): imported last, as a later command of the same name wins.
from glotbench.cli import build_items_cmd  # noqa: E402,F401
