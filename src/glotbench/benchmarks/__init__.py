"""The built-in benchmarks, one package each (mm_eval, factuality, openhueval, hulu, czech_bench).

Each package holds its task YAMLs (``tasks/``), task classes, metrics, result tables, analyses,
config readers and submission formats, and one ``register(bench)`` function published as an entry
point in the ``glotbench.benchmarks`` group (pyproject.toml), the way a user's own benchmark
package registers (docs/adding-a-benchmark.md). Generic code never imports these packages.
"""
