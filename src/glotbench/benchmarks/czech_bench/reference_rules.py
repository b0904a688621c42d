"""Moved to :mod:`glotbench.benchmarks.czech_bench.metrics` (metric code lives with scoring, so reading a
finished run resolves the cb_* metrics without importing the Czech-Bench package); kept importable
here for run directories whose results.json names this module."""

from glotbench.benchmarks.czech_bench.metrics import *  # noqa: F401,F403
from glotbench.benchmarks.czech_bench.metrics import (  # noqa: F401
    CB,
    first_token,
    macro_f1_of,
    parse_gsm8k,
    parse_int,
    parse_letter,
    reference_values,
    topic_macro_accuracy,
)
