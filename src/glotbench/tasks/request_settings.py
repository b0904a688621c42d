"""What a task sees of a run: the request settings, and nothing else of the run's configuration.

The engine builds one :class:`RequestSettings` from the run's settings (flags over the config file,
the run's settings) once per task, in its plan, and hands it to every task method that needs it; a task merges
it with its own defaults in one place, :meth:`RequestSettings.sampling`. A knob has one value:
``--gen-kwargs temperature=0.7`` and ``--temperature 0.7`` are the same knob, and giving it two
different values is refused before the run (:func:`one_value_per_knob`).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Mapping

from glotbench.errors import GlotbenchError
from glotbench.settings import items_for

# request fields a --gen-kwargs key sets directly (any other key is a backend knob in ``extra``)
REQUEST_FIELDS = {"temperature": float, "top_p": float, "max_tokens": int, "seed": int}


@dataclass(frozen=True)
class RequestSettings:
    """The knobs that shape a task's items and requests (docs/overrides.md)."""

    split: str | None = None
    limit: int | float | None = None
    sample: int | float | None = None
    stratify: str | None = None
    seed: int = 1234
    num_fewshot: int | None = None
    prompt_lang: str | None = None
    system_prompt: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    samples: int = 1
    mode: str = "generate"
    circular: bool = False  # --circular: every rotation of a multiple-choice item's options (tasks/circular.py)
    gen_kwargs: tuple[tuple[str, Any], ...] = ()  # --gen-kwargs, sorted by key
    perturb: tuple[str, ...] = ()  # --perturb, in the order given (prompts/perturb.py)

    @classmethod
    def from_values(cls, values: Mapping[str, Any]) -> "RequestSettings":
        """The request settings of a run, from its settings' values (``model_dump()``): the engine's
        plan builds one per task, and every task method takes that object as it is."""
        kw = {f.name: values[f.name] for f in fields(cls) if f.name not in ("gen_kwargs", "perturb") and f.name in values}
        return cls(**kw, gen_kwargs=tuple(sorted((values.get("gen_kwargs") or {}).items())),
                   perturb=tuple(values.get("perturb") or ()))

    def items_for(self, total: int) -> int:
        """How many of a task's ``total`` items the run takes (a share rounds up, at least one)."""
        return items_for(self.limit, total)

    def sampling(self, generation: Any) -> dict[str, Any]:
        """A generation request's fields: the task's ``generation`` defaults, then ``--max-tokens`` /
        ``--temperature`` / ``--seed``, then ``--gen-kwargs`` (request fields and ``stop`` set the
        field, any other key joins the backend knobs in ``extra``)."""
        out: dict[str, Any] = {
            "max_tokens": self.max_tokens or generation.max_tokens,
            "temperature": generation.temperature if self.temperature is None else self.temperature,
            "top_p": generation.top_p,
            "stop": tuple(generation.stop),
            "seed": self.seed,
        }
        extra = dict(generation.extra)
        for k, v in self.gen_kwargs:
            if k in REQUEST_FIELDS:
                out[k] = REQUEST_FIELDS[k](v)
            elif k == "stop":
                out["stop"] = tuple(v) if isinstance(v, (list, tuple)) else (str(v),)
            else:
                extra[k] = v
        out["extra"] = tuple(sorted(extra.items()))
        return out

    def with_system(self, messages: tuple[dict, ...] | list[dict]) -> tuple[dict, ...]:
        """``--system-prompt``: replaces the messages' system message, or goes first when there is none."""
        messages = tuple(messages)
        if self.system_prompt is None:
            return messages
        rest = tuple(m for m in messages if m.get("role") != "system")
        return ({"role": "system", "content": self.system_prompt},) + rest


def one_value_per_knob(settings: RequestSettings) -> None:
    """``--gen-kwargs K=V`` beside the knob's own flag with another value: one line, before the run."""
    gk = dict(settings.gen_kwargs)
    for k in ("temperature", "max_tokens", "seed"):
        own = getattr(settings, k)
        if k in gk and own is not None and k != "seed" and REQUEST_FIELDS[k](gk[k]) != own:
            flag = "--" + k.replace("_", "-")
            raise GlotbenchError(f"--gen-kwargs {k}={gk[k]!r} and {flag} {own!r} set one knob to two values; give one")
