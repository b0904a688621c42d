"""Run config files in another framework's layout (a benchmark registers a reader with
``bench.config_reader``): an object with ``is_mine(raw) -> bool`` and ``read(raw, path) -> dict``
(the glotbench run config the file means). :func:`glotbench.engine.config.load_config` asks each."""

from __future__ import annotations

from typing import Any

from glotbench.errors import TaskSpecError
from glotbench.registry import Registry

CONFIG_READERS: Registry[Any] = Registry("run config reader", error=TaskSpecError)


def translate(raw: dict, path: str) -> dict:
    """``raw`` as a glotbench run config: the first registered reader that recognises it, else as is."""
    for name in CONFIG_READERS.in_order():
        reader = CONFIG_READERS.get(name)
        if reader.is_mine(raw):
            return reader.read(raw, path)
    return raw
