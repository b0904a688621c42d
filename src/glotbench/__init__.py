"""glotbench: evaluate language models on native-language benchmarks.

``glotbench.evaluate(...)`` and ``glotbench.load_result(...)`` are the Python API
(docs/python-api.md); they are imported on first use so ``import glotbench`` stays cheap.
Importing glotbench registers nothing: the composition roots (the CLI, ``glotbench.evaluate``, a
shard worker) build the catalog of names once (:func:`glotbench.catalog.build`).
"""

from glotbench.version import __version__  # noqa: F401  (the public glotbench.__version__)

_API = ("evaluate", "evaluate_async", "load_result", "EvalResult", "TaskResult", "MetricValue", "SampleRecord")


def __getattr__(name: str):
    if name in _API:
        from glotbench import api

        return getattr(api, name)
    raise AttributeError(f"module 'glotbench' has no attribute {name!r}")


def __dir__():
    return sorted([*globals(), *_API])
