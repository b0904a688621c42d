"""Read the fields glotbench needs out of an OpenAI-style JSON answer, checking every type.

A server that answers HTTP 200 with a body of the wrong shape (``{"choices": "A"}``,
``{"choices": {...}}``, ``{"choices": [{"message": "A"}]}``, ``"usage": "x"``, an int as content)
gets a :class:`~glotbench.errors.TransientModelError` naming what was wrong and quoting the start of
the body: the engine retries it like any transient fault and, if it persists, the item ends as an
error; the run goes on. Content given as a list of parts (``[{"type": "text", "text": ...}]``,
as some servers send) is joined.
"""

from __future__ import annotations

import json
from typing import Any

from glotbench.errors import TransientModelError


def _quote(data: Any) -> str:
    try:
        s = json.dumps(data, ensure_ascii=False)
    except (TypeError, ValueError):
        s = repr(data)
    s = " ".join(s.split())
    return s if len(s) <= 160 else s[:157] + "..."


def _bad(what: str, problem: str, data: Any) -> TransientModelError:
    return TransientModelError(f"{what} is malformed: {problem} (body: {_quote(data)})")


def _first_choice(data: Any, what: str) -> dict:
    if not isinstance(data, dict):
        raise _bad(what, f"expected a JSON object, got {type(data).__name__}", data)
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        got = "missing" if choices is None else (f"an empty list" if choices == [] else type(choices).__name__)
        raise _bad(what, f"'choices' must be a non-empty list, got {got}", data)
    choice = choices[0]
    if not isinstance(choice, dict):
        raise _bad(what, f"'choices[0]' must be an object, got {type(choice).__name__}", data)
    return choice


def _text(value: Any, field: str, what: str, data: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):  # content parts
        parts = []
        for p in value:
            if isinstance(p, str):
                parts.append(p)
            elif isinstance(p, dict) and isinstance(p.get("text"), str):
                parts.append(p["text"])
            elif isinstance(p, dict) and p.get("type") not in (None, "text"):
                continue  # image / audio parts carry no text
            else:
                raise _bad(what, f"'{field}' is a list holding {type(p).__name__}, not text parts", data)
        return "".join(parts)
    raise _bad(what, f"'{field}' must be a string, got {type(value).__name__}", data)


def _opt_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _usage(data: dict, what: str) -> tuple[int | None, int | None]:
    usage = data.get("usage")
    if usage is None:
        return None, None
    if not isinstance(usage, dict):
        raise _bad(what, f"'usage' must be an object, got {type(usage).__name__}", data)
    out = []
    for k in ("prompt_tokens", "completion_tokens"):
        v = usage.get(k)
        if isinstance(v, float) and v.is_integer():
            v = int(v)  # 10.0 from a lenient server is still a count
        if v is not None and (isinstance(v, bool) or not isinstance(v, int)):
            raise _bad(what, f"'usage.{k}' must be an integer, got {type(v).__name__}", data)
        out.append(v)
    return out[0], out[1]


def _raw(data: dict) -> dict:
    return {k: _opt_str(data.get(k)) for k in ("id", "model", "system_fingerprint")}


def chat_fields(data: Any, *, what: str) -> dict:
    """GenResult keyword arguments from a ``/chat/completions`` answer."""
    choice = _first_choice(data, what)
    msg = choice.get("message")
    if msg is None:
        msg = {}
    if not isinstance(msg, dict):
        raise _bad(what, f"'choices[0].message' must be an object, got {type(msg).__name__}", data)
    text = _text(msg.get("content"), "choices[0].message.content", what, data)
    reasoning = msg.get("reasoning_content") or msg.get("reasoning")
    reasoning = _text(reasoning, "choices[0].message.reasoning_content", what, data) if reasoning else None
    tin, tout = _usage(data, what)
    return {"text": text, "reasoning": reasoning or None, "input_tokens": tin, "output_tokens": tout,
            "finish_reason": _opt_str(choice.get("finish_reason")), "raw": _raw(data)}


def completion_fields(data: Any, *, what: str) -> dict:
    """GenResult keyword arguments from a ``/completions`` answer."""
    choice = _first_choice(data, what)
    text = _text(choice.get("text"), "choices[0].text", what, data)
    tin, tout = _usage(data, what)
    return {"text": text, "reasoning": None, "input_tokens": tin, "output_tokens": tout,
            "finish_reason": _opt_str(choice.get("finish_reason")), "raw": _raw(data)}


def logprobs_field(data: Any, *, what: str) -> dict | None:
    """``choices[0].logprobs`` of an echo request, type-checked (None when absent)."""
    choice = _first_choice(data, what)
    lp = choice.get("logprobs")
    if lp is None:
        return None
    if not isinstance(lp, dict):
        raise _bad(what, f"'choices[0].logprobs' must be an object, got {type(lp).__name__}", data)
    for k in ("tokens", "token_logprobs", "text_offset"):
        if lp.get(k) is not None and not isinstance(lp[k], list):
            raise _bad(what, f"'choices[0].logprobs.{k}' must be a list, got {type(lp[k]).__name__}", data)
    return lp
