"""The model contract: a few async methods every backend implements.

A backend turns a :class:`GenRequest` into a :class:`GenResult` and, where it can do so
trustworthily, a :class:`LoglikelihoodRequest` into a :class:`LoglikelihoodResult`.
Caching, journaling, retries and concurrency live in ``glotbench.engine`` and wrap any
backend from outside; backends only raise :class:`~glotbench.errors.TransientModelError`
(worth a retry) or :class:`~glotbench.errors.PermanentModelError`.
"""

from __future__ import annotations

import hashlib
import json
from abc import ABC, abstractmethod
from dataclasses import MISSING, asdict, dataclass, field, fields, replace
from typing import Any

from glotbench import json_codec


def canonical_json(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _keyed_json(request: Any, kind: str, model_id: str) -> bytes:
    """The canonical JSON of a request for ``model_id``: ``{"kind", "model", **request.to_dict()}``,
    keys sorted (glotbench/json_codec.py). Its sha256 is the request's cache key, and the journal
    stores these very bytes as the request, so a row can be checked against its key."""
    return json_codec.canonical_bytes({"kind": kind, "model": model_id, **request.to_dict()})


@dataclass(frozen=True)
class GenRequest:
    """One generation call. Exactly one of ``messages`` (chat) or ``prompt`` (plain) is set."""

    messages: tuple[dict, ...] | None = None
    prompt: str | None = None
    max_tokens: int = 256
    temperature: float = 0.0
    top_p: float | None = None
    stop: tuple[str, ...] = ()
    seed: int | None = None
    # Distinguishes the i-th of N samples drawn for the same prompt (Best-of-N): part of the key.
    sample_index: int = 0
    extra: tuple[tuple[str, Any], ...] = ()  # backend-specific knobs, e.g. (("frequency_penalty", 1.0),)
    # The item the request answers, ``(task name, Sample)``, set by the runner: a backend that answers
    # items rather than prompts (``recorded:``) looks its answer up by it. Not part of the key.
    item: Any = field(default=None, compare=False, repr=False)

    def to_dict(self) -> dict:
        """Every field that is part of the key (all but ``item``), as JSON shapes: the form the key hashes."""
        names = type(self).__dict__.get("_key_fields")
        if names is None:  # the compared fields, once per class (dataclasses.fields per call was 2% of a run)
            names = tuple(f.name for f in fields(self) if f.compare)
            setattr(type(self), "_key_fields", names)
        d = {n: getattr(self, n) for n in names}
        return {**d, "messages": list(self.messages) if self.messages is not None else None,
                "stop": list(self.stop), "extra": dict(self.extra)}

    @classmethod
    def from_dict(cls, d: dict) -> "GenRequest":
        return cls(
            messages=tuple(d["messages"]) if d.get("messages") is not None else None,
            prompt=d.get("prompt"),
            max_tokens=d.get("max_tokens", 256),
            temperature=d.get("temperature", 0.0),
            top_p=d.get("top_p"),
            stop=tuple(d.get("stop") or ()),
            seed=d.get("seed"),
            sample_index=d.get("sample_index", 0),
            extra=tuple(sorted((d.get("extra") or {}).items())),
        )

    def key(self, model_id: str) -> str:
        """Cache key: the model's identity plus every field that changes the output:
        ``sha256`` of :meth:`keyed_json`."""
        return hashlib.sha256(self.keyed_json(model_id)).hexdigest()

    def keyed_json(self, model_id: str) -> bytes:
        """The canonical JSON (UTF-8) the key hashes: ``{"kind", "model", **to_dict()}``, keys sorted."""
        template = self.__dict__.get("_key_template")
        if template is not None:  # built by a task from one set of fields: only the messages (prompt) differ
            return template.keyed_json(self, model_id)
        return _keyed_json(self, "generate", model_id)

    def with_item(self, item: Any) -> "GenRequest":
        """A copy naming ``item`` (not part of the key): ``dataclasses.replace(self, item=item)``, without
        its per-field ``__init__`` (frozen: an ``object.__setattr__`` per field) for a plain GenRequest."""
        if type(self) is not GenRequest:
            return replace(self, item=item)
        new = object.__new__(GenRequest)
        new.__dict__.update(self.__dict__)
        new.__dict__["item"] = item
        return new


_GEN_DEFAULTS = {f.name: f.default for f in fields(GenRequest)}  # every field has a plain default
# the fields KeyTemplate.request sets from a task's sampling settings (none when a field has no plain default)
_GEN_COMMON = (frozenset(_GEN_DEFAULTS) - {"messages", "prompt", "sample_index", "item"}
               if MISSING not in _GEN_DEFAULTS.values() else frozenset())


class KeyTemplate:
    """The keyed JSON of generation requests that a task builds from one set of fields (its sampling
    settings), differing only in their messages, or only in their prompt: the canonical JSON of the
    rest is made once per model, kind and ``sample_index`` (a head and a tail around the variable part,
    found with a marker), and each request's keyed JSON is head + the canonical JSON of its messages
    (prompt) + tail. Compact JSON with sorted keys is each value's own JSON between the keys, so the
    bytes are what :func:`_keyed_json` gives (tests/test_request_prep_same_output.py compares both on
    every built-in task). A request gets the template only from the code that built it
    (:meth:`attach`); a copy with other fields (``dataclasses.replace``) has none."""

    _MARK = "\u0000glotbench:variable\u0000"

    def __init__(self, common: dict[str, Any] | None = None) -> None:
        self._parts: dict[tuple, tuple[bytes, bytes] | None] = {}
        # the fields :meth:`request` sets at once: GenRequest's own (anything else: its __init__ refuses it)
        self._common = common if common is not None and _GEN_COMMON.issuperset(common) else None

    def attach(self, request: GenRequest) -> GenRequest:
        request.__dict__["_key_template"] = self  # not a field: equality, the key and replace() ignore it
        return request

    def request(self, messages: tuple[dict, ...] | None, prompt: str | None, sample_index: int) -> GenRequest:
        """``GenRequest(messages=..., prompt=..., **common, sample_index=...)`` with the template attached,
        its fields set at once (a frozen dataclass's ``__init__`` sets each through ``object.__setattr__``):
        the same object (tests/test_request_prep_same_output.py)."""
        common = self._common
        if common is None or type(sample_index) is not int:
            return self.attach(GenRequest(messages=messages, prompt=prompt, **(common or {}), sample_index=sample_index))
        new = object.__new__(GenRequest)
        d = new.__dict__
        d.update(_GEN_DEFAULTS)
        d.update(common)
        d["messages"] = messages
        d["prompt"] = prompt
        d["sample_index"] = sample_index
        d["_key_template"] = self
        return new

    def keyed_json(self, request: GenRequest, model_id: str) -> bytes:
        chat = request.messages is not None
        where = (model_id, chat, request.sample_index)
        parts = self._parts.get(where, False)
        if parts is False:
            parts = self._parts[where] = self._split(request, model_id, chat)
        if parts is None:
            return _keyed_json(request, "generate", model_id)
        variable = list(request.messages) if chat else request.prompt
        return parts[0] + json_codec.canonical_bytes(variable) + parts[1]

    def _split(self, request: GenRequest, model_id: str, chat: bool) -> tuple[bytes, bytes] | None:
        d = {"kind": "generate", "model": model_id, **request.to_dict()}
        d["messages" if chat else "prompt"] = self._MARK
        mark = json_codec.canonical_bytes(self._MARK)
        whole = json_codec.canonical_bytes(d)
        if whole.count(mark) != 1:  # the model's name holds the marker: no template
            return None
        head, tail = whole.split(mark)
        return head, tail


@dataclass
class GenResult:
    text: str
    reasoning: str | None = None  # a separate thinking trace, when the API returns one
    input_tokens: int | None = None
    output_tokens: int | None = None
    finish_reason: str | None = None
    raw: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"text": self.text, "reasoning": self.reasoning, "input_tokens": self.input_tokens,
                "output_tokens": self.output_tokens, "finish_reason": self.finish_reason, "raw": dict(self.raw)}

    @classmethod
    def from_dict(cls, d: dict) -> "GenResult":
        return cls(**{k: d.get(k) for k in ("text", "reasoning", "input_tokens", "output_tokens", "finish_reason")},
                   raw=d.get("raw") or {})


@dataclass(frozen=True)
class LoglikelihoodRequest:
    """log P(continuation | context), summed over the continuation's tokens."""

    context: str
    continuation: str

    def to_dict(self) -> dict:
        return {"context": self.context, "continuation": self.continuation}

    def key(self, model_id: str) -> str:
        return hashlib.sha256(self.keyed_json(model_id)).hexdigest()

    def keyed_json(self, model_id: str) -> bytes:
        return _keyed_json(self, "loglikelihood", model_id)


@dataclass
class LoglikelihoodResult:
    """An empty ``context`` asks for log P(continuation) itself (lm-eval's ``loglikelihood_rolling``:
    the first token conditioned on BOS, a text longer than the model's window scored in disjoint
    windows: glotbench.models.rolling). ``unscored_chars``: leading characters of the continuation
    the backend could give no log-probability (an echo server's first token, which nothing
    precedes); they are outside ``logprob`` and ``n_tokens``."""

    logprob: float  # sum of log-probabilities of the continuation tokens (nats)
    is_greedy: bool  # every continuation token was the argmax
    n_tokens: int  # continuation length in tokens (for length normalisation)
    unscored_chars: int = 0

    def to_dict(self) -> dict:
        d = asdict(self)
        if not self.unscored_chars:  # the journal's shape for every result that has none
            d.pop("unscored_chars")
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "LoglikelihoodResult":
        return cls(logprob=d["logprob"], is_greedy=d["is_greedy"], n_tokens=d["n_tokens"],
                   unscored_chars=int(d.get("unscored_chars") or 0))


class Model(ABC):
    """A model backend.

    ``model_id`` names the model and every setting that changes its outputs (it is part of each
    cache key and of the run fingerprint). ``max_parallel`` is how many requests the backend can
    usefully serve at once (the in-process llama.cpp model: its batch slots).
    """

    model_id: str
    is_chat: bool = True
    supports_loglikelihood: bool = False
    max_parallel: int | None = None
    # a backend that answers items, not prompts (``recorded:``): each request's key names its item, so
    # two items with the same prompt get their own answers, not the first one's from the journal
    answers_items: bool = False
    notice: str | None = None  # one line the run shows on loading (e.g. "no chat template: plain completion")
    timeout_scale: int = 1  # the engine's per-request timeout is multiplied by this (batched in-process models)
    # Extra generation knobs (task generation.extra, --gen-kwargs): the ones the backend takes (None:
    # passed on as is, e.g. an OpenAI-compatible server), and common names (HF/vLLM's) mapped to its own.
    known_knobs: frozenset[str] | None = None
    knob_aliases: dict[str, str] = {}
    # A model behind a server (OpenAI-compatible, Anthropic): the server may load another model under
    # the same name, so the shared response cache keys on what it says it serves (docs/cache.md).
    serves_remotely: bool = False
    # A chat backend that continues a prompt's last assistant turn (a task's ``gen_prefix``: lm-eval's
    # add_generation_prompt=False) instead of answering after it; a task that needs it is refused on
    # another chat backend before the run (engine/run_checks.check_prefill). Plain-text backends read
    # the prompt with the prefix at its end and need nothing.
    continues_assistant_turn: bool = False

    def served_identity(self) -> dict | None:
        """What the model's server says it serves (model ids, file, hash: stable fields only), or None
        when it cannot say. In-process backends are not asked (their settings name their file)."""
        return None

    def knob_name(self, name: str) -> str:
        """The backend's own name for a generation knob (``repetition_penalty`` -> llama.cpp's ``repeat_penalty``)."""
        return self.knob_aliases.get(name, name)

    def check_knobs(self, names) -> None:
        """One line, before any request, for a knob this backend has no counterpart of."""
        if self.known_knobs is None:
            return
        bad = [n for n in names if self.knob_name(n) not in self.known_knobs]
        if bad:
            from glotbench.errors import GlotbenchError

            common = sorted(set(self.known_knobs) | set(self.knob_aliases))
            raise GlotbenchError(f"--gen-kwargs {', '.join(bad)}: model {self.model_id} has no such generation knob "
                                 f"(it takes: {', '.join(common)})")

    @abstractmethod
    async def generate(self, request: GenRequest) -> GenResult: ...

    async def loglikelihood(self, request: LoglikelihoodRequest) -> LoglikelihoodResult:
        from glotbench.errors import PermanentModelError

        raise PermanentModelError(f"model {self.model_id!r} does not offer loglikelihood scoring")

    def settings(self) -> dict:
        """Settings recorded in results.json and the fingerprint."""
        return {"model_id": self.model_id}

    def run_notes(self) -> list[str]:
        """Lines the run prints and stores in results.json (e.g. recorded answers not found)."""
        return []

    def count_tokens(self, text: str) -> int | None:
        """Token count with the model's own tokenizer, when available offline."""
        return None

    async def aclose(self) -> None:
        return None
