"""What an extraction produced and which rule produced it.

Every built-in extractor has an ``explain`` twin that returns an :class:`Extraction`; the
registered function returns ``Extraction.value`` (so task YAMLs and custom extractors keep the
one signature). The engine records ``Extraction.rule`` in samples.jsonl as ``extraction_rule``,
so any reading can be traced to the rule that made it (rules: docs/extraction.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Extraction:
    value: Any  # the answer; None when the output cannot be parsed
    rule: str  # the rule that decided, e.g. "choice:answer_phrase", "number:boxed", "choice:ambiguous"

    @property
    def parsed(self) -> bool:
        return self.value is not None


def explain(fn: Any, text: str, *, sample: dict, pack: Any, **options: Any) -> Extraction:
    """Run extractor ``fn`` and say which rule decided: its ``explain`` twin when it has one,
    else ``"<fn name>"`` (a custom extractor that reports no rules)."""
    return explainer(fn)(text, sample=sample, pack=pack, **options)


def explainer(fn: Any) -> Callable[..., Extraction]:
    """What :func:`explain` calls for ``fn``, found once (a task extracts every item with one extractor):
    its ``explain`` twin, else ``fn`` with its name as the rule."""
    twin = getattr(fn, "explain", None)
    if twin is not None:
        return twin
    name = getattr(fn, "__name__", "custom")

    def named(text: str, *, sample: dict, pack: Any, **options: Any) -> Extraction:
        return Extraction(fn(text, sample=sample, pack=pack, **options), name)

    return named
