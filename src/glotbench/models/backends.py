"""The model-backend registry. Each backend module registers its own spec prefixes::

    @register_backend("openai", "vllm", "ollama")
    def _from_spec(spec, rest, *, base_url=None, api_key_env=None, timeout=None, **kw) -> Model: ...

``spec`` is the whole model spec (``"vllm:qwen"``), ``rest`` what follows the prefix; ``kw`` are
the backend options (``--model-args``). :mod:`glotbench.builtins` imports the built-in backend
modules; a backend of your own registers the same way (see docs/adding-a-model-backend.md).
"""

from __future__ import annotations

from typing import Any, Callable

from glotbench.errors import ModelError, TaskSpecError
from glotbench.registry import Registry

BackendFactory = Callable[..., Any]


class _Backend:
    def __init__(self, factory: BackendFactory, needs_name: bool, renders_prompts: bool = False, light: bool = False):
        self.factory, self.needs_name, self.renders_prompts, self.light = factory, needs_name, renders_prompts, light


# The built-in backend modules: imported on the first lookup of a backend, not by
# glotbench.builtins, so commands that never name a model (`glotbench tasks`) import no HTTP client,
# numpy or llama.cpp binding for it.
BUILTIN_MODULES = ("glotbench.models.anthropic_api", "glotbench.models.embedded", "glotbench.models.hf",
                   "glotbench.models.llamacpp", "glotbench.models.openai_compat", "glotbench.models.recorded")
_builtins_loaded = {"done": False}


class _BackendRegistry(Registry):
    @staticmethod
    def before_lookup() -> None:
        Registry.before_lookup()  # glotbench.plugins.load: the benchmark packages' own backends
        if not _builtins_loaded["done"]:
            import importlib

            _builtins_loaded["done"] = True
            for module in BUILTIN_MODULES:
                importlib.import_module(module)


BACKENDS: Registry[_Backend] = _BackendRegistry("model backend", same=lambda a, b: a.factory is b.factory,
                                                error=TaskSpecError)


def register_backend(*prefixes: str, needs_name: bool = True, renders_prompts: bool = False,
                     light: bool = False) -> Callable[[BackendFactory], BackendFactory]:
    """Register a factory under each spec prefix (``needs_name=False``: the prefix alone is a spec;
    ``renders_prompts``: the backend renders chat prompts in process, so it takes ``chat_template=``;
    ``light``: building it loads no weights and sends nothing (an HTTP client), so a run may build it
    before reading any item, to find a finished run it only re-reports: engine/plan.py)."""

    def wrap(factory: BackendFactory) -> BackendFactory:
        entry = _Backend(factory, needs_name, renders_prompts, light)
        for p in prefixes:
            BACKENDS.register(p.lower(), entry)
        return factory

    return wrap


def construct(spec: str, cls, *args, **kw):
    """``cls(*args, **kw)``; an option the backend does not take becomes a ModelError naming the spec."""
    try:
        return cls(*args, **kw)
    except TypeError as exc:
        raise ModelError(f"model spec {spec!r}: {exc}") from exc
