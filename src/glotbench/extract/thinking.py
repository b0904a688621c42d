"""Separate a reasoning model's thinking trace from its answer.

Handles ``<think>…</think>`` (also ``<thinking>`` and ``<reasoning>``, any case), several blocks,
a closing tag with no opening one (chat templates that put ``<think>`` in the prompt, as
DeepSeek-R1 distills do), and an unclosed ``<think>`` (the model ran out of tokens while
thinking: there is no answer, only a trace).
"""

from __future__ import annotations

import re
from collections import Counter

from glotbench.extract.text import find_phrases
from glotbench.languages import LanguagePack

_TAGS = "think|thinking|reasoning"
_BLOCK = re.compile(rf"<\s*({_TAGS})\s*>(.*?)<\s*/\s*\1\s*>", re.IGNORECASE | re.DOTALL)
_OPEN = re.compile(rf"<\s*(?:{_TAGS})\s*>", re.IGNORECASE)
_CLOSE = re.compile(rf"<\s*/\s*(?:{_TAGS})\s*>", re.IGNORECASE)


def strip_thinking(text: str) -> tuple[str, str | None]:
    """Return ``(answer_text, trace)``; ``trace`` is None when the output has no thinking part.

    >>> strip_thinking("<think>2+2… wait, 4</think>The answer is 4.")
    ('The answer is 4.', '2+2… wait, 4')
    >>> strip_thinking("<think>still thinking")
    ('', 'still thinking')
    """
    if text is None:
        return "", None
    if "<" not in text:  # every tag starts with one: nothing to take out (most answers)
        return text.strip(), None
    traces: list[str] = []

    def _take(m: re.Match[str]) -> str:
        traces.append(m.group(2).strip())
        return " "

    rest = _BLOCK.sub(_take, text)
    # A closing tag with no opening one: everything before the last such tag is trace.
    closes = list(_CLOSE.finditer(rest))
    if closes:
        last = closes[-1]
        head = _CLOSE.sub(" ", rest[: last.start()])
        traces.insert(0, _OPEN.sub(" ", head).strip())
        rest = rest[last.end() :]
    # An unclosed opening tag: everything after it is trace, and there is no answer after it.
    opened = _OPEN.search(rest)
    if opened:
        traces.append(rest[opened.end() :].strip())
        rest = rest[: opened.start()]
    if not traces:
        return text.strip(), None
    return rest.strip(), "\n\n".join(t for t in traces if t)


def reflection_counts(trace: str | None, pack: LanguagePack) -> Counter[str]:
    """How often each of the pack's reflection markers opens a thought in ``trace``.

    Matching is case-insensitive, whole-word for alphabetic scripts and longest-first, so
    "várjunk csak" counts once as itself, not also as "várjunk".
    """
    counts: Counter[str] = Counter()
    if not trace:
        return counts
    by_key = {" ".join(m.casefold().split()): m for m in pack.reflection_markers}
    for m in find_phrases(trace, pack.reflection_markers):
        key = " ".join(m.group(0).casefold().split())
        counts[by_key.get(key, key)] += 1
    return counts
