"""Moved to :mod:`glotbench.scoring.factuality_strict` (metric declarations live with scoring, so
any process resolves them without importing benchmark code); kept importable from here."""

from glotbench.scoring.factuality_strict import NAMES, factuality_strict_metric  # noqa: F401
