"""The model-backend registry: a spec prefix -> a :class:`Backend`, whose factory
``from_spec(spec, rest, *, base_url=None, api_key_env=None, timeout=None, **kw) -> Model`` is a
``"module:attr"`` reference loaded on first use (``spec`` the whole model spec, ``rest`` what follows
the prefix, ``kw`` the ``--model-args``). Backends are declared with ``bench.backend(...)``: the
built-ins in :mod:`glotbench.builtins`, yours in a ``glotbench.backends`` entry point
(docs/adding-a-model-backend.md).
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
    run it only re-reports (engine/plan.py)."""

    def __init__(self, factory: str | BackendFactory, needs_name: bool = True, renders_prompts: bool = False,
                 light: bool = False):
        self._factory, self.needs_name, self.renders_prompts, self.light = factory, needs_name, renders_prompts, light

    @property
    def factory(self) -> BackendFactory:
        if isinstance(self._factory, str):
            self._factory = import_ref(self._factory, where="model backend", error=TaskSpecError)
        return self._factory



BACKENDS: Registry[Backend] = Registry("model backend", same=lambda a, b: a._factory == b._factory, error=TaskSpecError)


def construct(spec: str, cls, *args, **kw):
    """``cls(*args, **kw)``; an option the backend does not take becomes a ModelError naming the spec."""
    try:
        return cls(*args, **kw)
    except TypeError as exc:
        raise ModelError(f"model spec {spec!r}: {exc}") from exc
