"""Anthropic Messages API through the official async SDK (``max_retries=0``: the engine retries).

System messages are lifted out of the message list into ``system``; ``thinking`` content blocks
become ``GenResult.reasoning``. Extended thinking and other knobs come through ``GenRequest.extra``,
e.g. ``(("thinking", {"type": "enabled", "budget_tokens": 2048}),)``. The API has no seed, so
``seed`` is ignored. Chat only: a plain prompt is refused rather than silently wrapped.
"""

from __future__ import annotations

import os
from typing import Any

from glotbench.errors import ModelError, PermanentModelError, TransientModelError
from glotbench.models.backends import construct
from glotbench.models.base import GenRequest, GenResult, Model
from glotbench.models.http_errors import map_sdk_error

ANTHROPIC_URL = "https://api.anthropic.com"


def split_system(messages: tuple[dict, ...] | list[dict]) -> tuple[str | None, list[dict]]:
    """Separate system messages (joined by blank lines) from the user/assistant turns."""
    system = [m["content"] for m in messages if m.get("role") == "system"]
    rest = [{"role": m["role"], "content": m["content"]} for m in messages if m.get("role") != "system"]
    return ("\n\n".join(system) if system else None), rest


class AnthropicModel(Model):
    serves_remotely = True  # the API says nothing of the model behind a name: the cache needs --cache-trust-name
    is_chat = True
    supports_loglikelihood = False

    def __init__(self, name: str, api_key_env: str = "ANTHROPIC_API_KEY", timeout: float = 60,
                 base_url: str | None = None, max_parallel: int | None = None, send_sampling: bool = True):
        try:
            import anthropic
        except ImportError as exc:  # pragma: no cover - a declared dependency
            raise ModelError("the anthropic package is required for anthropic models (pip install anthropic)") from exc
        self._sdk = anthropic
        self.name = name
        self.base_url = (base_url or ANTHROPIC_URL).rstrip("/")
        self.timeout = timeout
        self.max_parallel = max_parallel
        self.send_sampling = send_sampling
        key = os.environ.get(api_key_env or "")
        if not key:
            if base_url is None:
                raise ModelError(f"anthropic:{name}: environment variable {api_key_env} is not set")
            key = "sk-ant-no-key-needed"
        self.model_id = f"anthropic:{name}" + (f"@{self.base_url}" if base_url else "")
        # follow_redirects=False: the SDK would follow a redirect to another host with the x-api-key
        # header still attached (httpx strips only Authorization); a 3xx becomes a one-line error
        http_client = anthropic.DefaultAsyncHttpxClient(follow_redirects=False) \
            if hasattr(anthropic, "DefaultAsyncHttpxClient") else None
        self._client = anthropic.AsyncAnthropic(api_key=key, base_url=self.base_url, timeout=timeout, max_retries=0,
                                                http_client=http_client)

    def settings(self) -> dict:
        return {"model_id": self.model_id, "backend": "anthropic", "name": self.name, "base_url": self.base_url}

    def build_params(self, request: GenRequest) -> dict[str, Any]:
        """The keyword arguments for ``messages.create`` (public so tests can check them).

        Sampling fields (temperature, top_p, top_k and unknown ``extra`` knobs) travel in
        ``extra_body``: recent SDK versions dropped them from the method signature although the
        API reads them from the JSON body. ``send_sampling=False`` leaves them out for models that
        refuse them.
        """
        if request.messages is None:
            raise PermanentModelError(f"{self.model_id}: Anthropic models are chat-only; got a plain prompt")
        system, messages = split_system(request.messages)
        kw: dict[str, Any] = {"model": self.name, "max_tokens": request.max_tokens, "messages": messages}
        body: dict[str, Any] = {}
        if self.send_sampling:
            body["temperature"] = request.temperature
            if request.top_p is not None:
                body["top_p"] = request.top_p
        if system:
            kw["system"] = system
        if request.stop:
            kw["stop_sequences"] = list(request.stop)
        extra = dict(request.extra)
        if "thinking" in extra:
            kw["thinking"] = extra.pop("thinking")
            body.pop("temperature", None)  # extended thinking requires the default temperature
        for k in ("metadata", "tool_choice", "tools"):
            if k in extra:
                kw[k] = extra.pop(k)
        body.update(extra)
        if body:
            kw["extra_body"] = body
        return kw

    async def generate(self, request: GenRequest) -> GenResult:
        kw = self.build_params(request)
        try:
            resp = await self._client.messages.create(**kw)
        except self._sdk.AnthropicError as exc:
            mapped = map_sdk_error(exc, self._sdk, url=self.base_url, what=self.model_id)
            raise (mapped or exc) from exc
        try:
            return self._result(resp)
        except (AttributeError, TypeError, ValueError, KeyError) as err:
            # a 200 whose body is not the Messages shape: a per-item error, retried, never a crash
            raise TransientModelError(f"{self.model_id}: response from {self.base_url} is malformed: "
                                      f"{type(err).__name__}: {err}") from None

    def _result(self, resp) -> GenResult:
        content = resp.content
        if content is not None and not isinstance(content, list):
            raise TypeError(f"'content' must be a list of blocks, got {type(content).__name__}")
        texts, thoughts = [], []
        for block in content or []:
            kind = getattr(block, "type", None) if not isinstance(block, dict) else block.get("type")
            get = (lambda k, b=block: b.get(k)) if isinstance(block, dict) else (lambda k, b=block: getattr(b, k, None))
            if kind == "text":
                if not isinstance(get("text"), str):
                    raise TypeError(f"a text block's 'text' must be a string, got {type(get('text')).__name__}")
                texts.append(get("text"))
            elif kind == "thinking":
                thoughts.append(str(get("thinking") or ""))
            elif kind == "redacted_thinking":
                thoughts.append("[redacted thinking]")
        usage = resp.usage

        def count(name: str):
            v = (usage.get(name) if isinstance(usage, dict) else getattr(usage, name, None)) if usage else None
            if v is not None and (isinstance(v, bool) or not isinstance(v, int)):
                raise TypeError(f"'usage.{name}' must be an integer, got {type(v).__name__}")
            return v

        return GenResult(text="".join(texts), reasoning="\n\n".join(thoughts) if thoughts else None,
                         input_tokens=count("input_tokens"), output_tokens=count("output_tokens"),
                         finish_reason=resp.stop_reason if isinstance(resp.stop_reason, str) else None,
                         raw={"id": resp.id, "model": resp.model})

    async def aclose(self) -> None:
        await self._client.close()


def from_spec(spec: str, rest: str, *, base_url=None, api_key_env=None, timeout=None, **kw) -> Model:
    """``anthropic:NAME``: the Anthropic Messages API."""
    opts = dict(kw)
    if timeout is not None:
        opts["timeout"] = timeout
    if api_key_env is not None:
        opts["api_key_env"] = api_key_env
    if base_url is not None:
        opts["base_url"] = base_url
    return construct(spec, AnthropicModel, rest, **opts)
