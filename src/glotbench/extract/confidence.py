"""Stated confidence: a model's "how sure are you" number, on whichever scale it chose.

Prompts ask for 0-100 (Chinese SimpleQA, HuSimpleQA), but models also answer 0-1 ("0.85") or
with a percent sign. :func:`read_confidence` returns the value on 0-100 **and the scale it was
read on**, so a run can report how often each scale was used:

``0-100``
    an integer (``85``, ``"85"``) or a number above 1 (``72.5``): taken as written. The integers
    0 and 1 are read on this scale because that is the scale the prompt asked for ("1" is 1%).
``0-1``
    a number written with a fraction part and at most 1 (``0.85``, ``"0,85"``, ``1.0``): x100.
``percent``
    a string ending in ``%`` (``"85%"``, ``"0.5 %"``): the number before it, as written.

Anything else (a bool, text, a value outside its scale, NaN) is unreadable: ``value`` is None
and ``error`` says why.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any, Literal

from glotbench.extract.jsonobj import first_json_object

Scale = Literal["0-100", "0-1", "percent"]

_NUM = re.compile(r"^\s*(?P<num>[-+]?\d+(?:(?P<frac>[.,])\d+)?)\s*(?P<pct>%)?\s*$")


@dataclass(frozen=True)
class StatedConfidence:
    value: float | None  # 0..100, None when unreadable
    scale: Scale | None  # the scale it was read on
    error: str | None = None


def read_confidence(raw: Any) -> StatedConfidence:
    """``raw`` (a JSON value: number or string) as a confidence on 0-100, with its scale."""
    if isinstance(raw, bool) or raw is None:
        return StatedConfidence(None, None, f"confidence {raw!r} is not a number")
    if isinstance(raw, int):
        v, has_frac, pct = float(raw), False, False
    elif isinstance(raw, float):
        v, has_frac, pct = raw, True, False
    elif isinstance(raw, str) and (m := _NUM.match(raw)):
        v = float(m.group("num").replace(",", "."))
        has_frac, pct = m.group("frac") is not None, m.group("pct") is not None
    else:
        return StatedConfidence(None, None, f"confidence {raw!r} is not a number")
    if not math.isfinite(v):
        return StatedConfidence(None, None, f"confidence {raw!r} is not a finite number")
    if pct:
        scale: Scale = "percent"
    elif has_frac and 0.0 <= v <= 1.0:
        scale, v = "0-1", v * 100.0
    else:
        scale = "0-100"
    if not 0.0 <= v <= 100.0:
        return StatedConfidence(None, None, f"confidence {raw!r} is outside 0-100 and 0-1")
    return StatedConfidence(v, scale)


@dataclass(frozen=True)
class StatedAnswer:
    """A model reply read as ``{"answer", "confidence_score"}``."""

    answer: str | None  # None when there was no JSON object with an "answer" field
    confidence: float | None  # 0..100, None when missing or not a number in range
    error: str | None = None  # why confidence is None
    scale: str | None = None  # "0-100", "0-1" or "percent": how the model wrote it


def parse_stated_answer(text: str) -> StatedAnswer:
    """Read the first JSON object of a reply; keep what can be read, say what could not."""
    obj = first_json_object(text or "")
    if obj is None:
        return StatedAnswer(answer=None, confidence=None, error="no JSON object in reply")
    ans = obj.get("answer")
    answer = None if ans is None else (ans if isinstance(ans, str) else json.dumps(ans, ensure_ascii=False))
    if "confidence_score" not in obj:
        return StatedAnswer(answer, None, "no confidence_score field")
    stated = read_confidence(obj["confidence_score"])
    if stated.value is None:
        return StatedAnswer(answer, None, f"confidence_score {obj['confidence_score']!r} is not a number in 0-100 or 0-1")
    return StatedAnswer(answer, stated.value, scale=stated.scale)
