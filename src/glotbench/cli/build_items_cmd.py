"""`glotbench build` steps (see build_cmd.BUILD_MODULES)."""

from __future__ import annotations

from glotbench.cli.build_cmd import build_app  # noqa: F401  (commands decorate @build_app.command())
