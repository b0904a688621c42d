"""``--system-prompt`` and ``--gen-kwargs``: checked here before the run; a task merges them into its
requests in one place (:meth:`glotbench.tasks.request_settings.RequestSettings.sampling` and
``with_system``), for the model under test only (never a judge's requests), over the task's defaults.

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

from typing import Any

from glotbench.errors import GlotbenchError
from glotbench.tasks.request_settings import REQUEST_FIELDS as FIELDS


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
