"""`glotbench build ...`: the benchmark-building steps (docs/building-a-benchmark.md). Each group of
steps lives in its own module, imported here, which adds its commands to
:data:`glotbench.cli.build_app.build_app`."""

from __future__ import annotations

from glotbench.cli import app
from glotbench.cli.build_app import build_app

# Import a module of build steps here when you add one (each adds its commands to build_app).
# Items made or checked by models: qa, criteria, difficulty, dedup, swiss select, checklist.
from glotbench.cli import build_qa_cmd  # noqa: F401  (before build_items_cmd: see below)
from glotbench.cli import build_classify_cmd  # noqa: F401  (classify: labels from a judge)

# Items made from text without a model; human review; the one `filter` command (--sequential, and
# --difficulty handed to build_qa_cmd): imported last, as a later command of the same name wins.
from glotbench.cli import build_items_cmd  # noqa: F401
from glotbench.cli import build_ratings_cmd  # noqa: F401  (review import-ratings, in build_items_cmd's review group)
from glotbench.cli import build_winograd_cmd  # noqa: F401  (winograd: schemas to NLI pairs, no model)

app.add_typer(build_app, name="build")
