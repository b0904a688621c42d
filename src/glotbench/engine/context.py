"""The item a request belongs to, for backends that answer per item rather than per prompt
(``recorded:``). The runner sets it around each item's requests; asyncio copies it into every
task the item's requests run in."""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

current_item: ContextVar[tuple[str, Any] | None] = ContextVar("glotbench_current_item", default=None)
