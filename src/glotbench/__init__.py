"""glotbench: evaluate language models on native-language benchmarks.

``glotbench.evaluate(...)`` and ``glotbench.load_result(...)`` are the Python API
(docs/python-api.md); they are imported on first use so ``import glotbench`` stays cheap.
Every registry loads the built-ins and the installed benchmark packages before its first
lookup (:func:`glotbench.plugins.load`).
"""

from glotbench import plugins as _plugins
from glotbench.registry import Registry as _Registry
from glotbench.version import __version__  # noqa: F401  (the public glotbench.__version__)

_API = ("evaluate", "evaluate_async", "load_result", "EvalResult", "TaskResult", "MetricValue", "SampleRecord")

_Registry.before_lookup = staticmethod(_plugins.load)


def __getattr__(name: str):
    if name in _API:
        import importlib

        return getattr(importlib.import_module("glotbench.api"), name)
    raise AttributeError(f"module 'glotbench' has no attribute {name!r}")


def __dir__():
    return sorted([*globals(), *_API])
