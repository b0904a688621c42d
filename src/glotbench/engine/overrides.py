"""``--system-prompt`` and ``--gen-kwargs``: applied to every request a task makes for the model under
test (never to a judge's requests), after the task built them, so they override the task's defaults.

* the system prompt replaces the task's system message, or is put first when the task has none
  (standard tasks also put it in plain prompts and loglikelihood contexts: ``Task.requests``);
* ``temperature``, ``top_p``, ``max_tokens``, ``stop`` and ``seed`` set those request fields; any
  other key joins the request's ``extra`` knobs (overriding the task's ``generation.extra``), which
  the backend passes on (an OpenAI-compatible server gets them in the request body) or refuses
  with one line naming the knob.

Both are part of the request (and so of its cache key) and of the run's settings (fingerprint,
results.json ``settings``). See docs/overrides.md.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from glotbench.errors import GlotbenchError
from glotbench.models.base import GenRequest

FIELDS = {"temperature": float, "top_p": float, "max_tokens": int, "seed": int}


def check_gen_kwargs(gen_kwargs: dict[str, Any]) -> None:
    """Bad values are one line naming the key, before any model call."""
    for k, v in gen_kwargs.items():
        if k in FIELDS and (isinstance(v, bool) or not isinstance(v, (int, float))):
            raise GlotbenchError(f"--gen-kwargs {k}={v!r}: expected a number")
        if k == "max_tokens" and v < 1:
            raise GlotbenchError(f"--gen-kwargs max_tokens={v}: must be at least 1")
        if k in ("prompt", "messages", "sample_index", "extra"):
            raise GlotbenchError(f"--gen-kwargs {k}: not a generation option")


def backend_knobs(gen_kwargs: dict[str, Any]) -> list[str]:
    """The --gen-kwargs keys that go to the backend as extra knobs (not request fields)."""
    return [k for k in gen_kwargs if k not in FIELDS and k != "stop"]


def _with_system(messages: tuple[dict, ...], system: str) -> tuple[dict, ...]:
    rest = tuple(m for m in messages if m.get("role") != "system")
    return ({"role": "system", "content": system},) + rest


def apply(requests: list, system_prompt: str | None, gen_kwargs: dict[str, Any]) -> list:
    if system_prompt is None and not gen_kwargs:
        return requests
    out = []
    for r in requests:
        if not isinstance(r, GenRequest):
            out.append(r)
            continue
        change: dict[str, Any] = {}
        if system_prompt is not None and r.messages is not None:
            change["messages"] = _with_system(r.messages, system_prompt)
        extra = dict(r.extra)
        for k, v in gen_kwargs.items():
            if k in FIELDS:
                change[k] = FIELDS[k](v)
            elif k == "stop":
                change["stop"] = tuple(v) if isinstance(v, (list, tuple)) else (str(v),)
            else:
                extra[k] = v
        if gen_kwargs:
            change["extra"] = tuple(sorted(extra.items()))
        out.append(replace(r, **change) if change else r)
    return out
