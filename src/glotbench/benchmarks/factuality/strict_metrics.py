"""Moved to :mod:`glotbench.benchmarks.factuality.metrics_strict` (metric declarations live with scoring, so
any process resolves them without importing benchmark code); kept importable from here."""

from glotbench.benchmarks.factuality.metrics_strict import NAMES, factuality_strict_metric  # noqa: F401
