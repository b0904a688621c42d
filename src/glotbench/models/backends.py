"""The model-backend registry: a spec prefix -> a :class:`Backend` (a factory making a ``Model``).

A backend is declared to the catalog (:mod:`glotbench.catalog`) by a ``register(bench)`` function:
the built-ins in :mod:`glotbench.builtins`, a package of your own through the ``glotbench.backends``
entry-point group (docs/adding-a-model-backend.md)::

    bench.backend("echo", factory="my_backend:from_spec", needs_name=True)

The factory is ``from_spec(spec, rest, *, base_url=None, api_key_env=None, timeout=None, **kw) -> Model``:
``spec`` is the whole model spec (``"vllm:qwen"``), ``rest`` what follows the prefix; ``kw`` are the
backend options (``--model-args``). It is a ``"module:attr"`` reference loaded on first use, so
listing the backends (or ``glotbench tasks``) imports no HTTP client, numpy or llama.cpp binding.
"""

from __future__ import annotations

from typing import Any, Callable

from glotbench.errors import ModelError, TaskSpecError
from glotbench.registry import Registry, import_ref

BackendFactory = Callable[..., Any]


class Backend:
    """``needs_name=False``: the prefix alone is a spec; ``renders_prompts``: the backend renders chat
    prompts in process, so it takes ``chat_template=``; ``light``: building it loads no weights and
    sends nothing (an HTTP client), so a run may build it before reading any item, to find a finished
    run it only re-reports (engine/session.py)."""

    def __init__(self, factory: str | BackendFactory, needs_name: bool = True, renders_prompts: bool = False,
                 light: bool = False):
        self._factory, self.needs_name, self.renders_prompts, self.light = factory, needs_name, renders_prompts, light

    @property
    def factory(self) -> BackendFactory:
        if isinstance(self._factory, str):
            self._factory = import_ref(self._factory, where="model backend", error=TaskSpecError)
        return self._factory

    def same(self, other: Backend) -> bool:
        return self._factory == other._factory and (self.needs_name, self.renders_prompts, self.light) == (
            other.needs_name, other.renders_prompts, other.light)


BACKENDS: Registry[Backend] = Registry("model backend", same=Backend.same, error=TaskSpecError)


def construct(spec: str, cls, *args, **kw):
    """``cls(*args, **kw)``; an option the backend does not take becomes a ModelError naming the spec."""
    try:
        return cls(*args, **kw)
    except TypeError as exc:
        raise ModelError(f"model spec {spec!r}: {exc}") from exc
