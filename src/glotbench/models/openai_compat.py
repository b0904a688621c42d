"""Any OpenAI-compatible server: OpenAI, vLLM, Ollama, LMDeploy, llama.cpp server, DeepSeek, ...

Uses the official ``openai`` async client with ``max_retries=0``: the engine owns retries, this
backend only classifies failures (timeouts, connection errors, 429 and 5xx are transient).

Chat requests go to ``/chat/completions``, plain prompts to ``/completions``. A separate thinking
trace (``reasoning_content`` from DeepSeek / vLLM, ``reasoning`` from some others) lands in
``GenResult.reasoning``.

Log-likelihoods come from ``/completions`` with ``echo=True, logprobs=1, max_tokens=1`` -- only when
the caller vouches for the server with ``logprobs_trusted=True``. Many servers reject echo, ignore
it, or (llama-cpp-python's server) return misaligned prompt log-probs; see docs/footguns.md.
"""

from __future__ import annotations

import os
from typing import Any

from glotbench.errors import ModelError, PermanentModelError
from glotbench.models.base import GenRequest, GenResult, LoglikelihoodRequest, LoglikelihoodResult, Model
from glotbench.models.http_errors import map_sdk_error

OPENAI_URL = "https://api.openai.com/v1"
NO_KEY = "sk-no-key-needed"  # local servers ignore the key, but the client insists on one


class OpenAICompatModel(Model):
    def __init__(self, name: str, base_url: str | None = None, api_key_env: str = "OPENAI_API_KEY",
                 chat: bool = True, timeout: float = 60, logprobs_trusted: bool = False,
                 max_parallel: int | None = None):
        try:
            import openai
        except ImportError as exc:  # pragma: no cover - a declared dependency
            raise ModelError("the openai package is required for openai-compatible models (pip install openai)") from exc
        self._sdk = openai
        self.name = name
        self.base_url = (base_url or OPENAI_URL).rstrip("/")
        self.is_chat = chat
        self.timeout = timeout
        self.logprobs_trusted = logprobs_trusted
        self.supports_loglikelihood = logprobs_trusted
        self.max_parallel = max_parallel
        key = os.environ.get(api_key_env or "") if api_key_env else None
        if not key:
            if base_url is None:
                raise ModelError(f"openai:{name}: environment variable {api_key_env} is not set "
                                 f"(needed for {OPENAI_URL}; pass base_url for a local server)")
            key = NO_KEY
        self.model_id = f"openai:{name}@{self.base_url}"
        self._client = openai.AsyncOpenAI(api_key=key, base_url=self.base_url, timeout=timeout, max_retries=0)

    def settings(self) -> dict:
        return {"model_id": self.model_id, "backend": "openai-compatible", "name": self.name,
                "base_url": self.base_url, "chat": self.is_chat, "logprobs_trusted": self.logprobs_trusted}

    # ------------------------------------------------------------------ plumbing
    def _error(self, exc: BaseException) -> Exception:
        mapped = map_sdk_error(exc, self._sdk, url=self.base_url, what=self.model_id)
        return mapped if mapped is not None else exc

    async def _call(self, fn, **kwargs):
        try:
            return await fn(**kwargs)
        except self._sdk.OpenAIError as exc:
            raise self._error(exc) from exc

    @staticmethod
    def _sampling(request: GenRequest) -> dict[str, Any]:
        kw: dict[str, Any] = {"max_tokens": request.max_tokens, "temperature": request.temperature}
        if request.top_p is not None:
            kw["top_p"] = request.top_p
        if request.stop:
            kw["stop"] = list(request.stop)
        if request.seed is not None:
            # Best-of-N: the i-th sample must not repeat sample 0 on servers that honour the seed.
            kw["seed"] = request.seed + request.sample_index
        if request.extra:
            # Backend knobs (frequency_penalty, reasoning_effort, top_k, ...) go into the JSON body as
            # they are, so server-specific fields work without the SDK knowing them.
            kw["extra_body"] = dict(request.extra)
        return kw

    # ------------------------------------------------------------------ generate
    async def generate(self, request: GenRequest) -> GenResult:
        kw = self._sampling(request)
        if request.messages is not None:
            resp = await self._call(self._client.chat.completions.create, model=self.name,
                                    messages=[dict(m) for m in request.messages], **kw)
            if not resp.choices:
                raise PermanentModelError(f"{self.model_id}: response from {self.base_url} has no choices")
            choice = resp.choices[0]
            msg = choice.message
            extra = getattr(msg, "model_extra", None) or {}
            reasoning = getattr(msg, "reasoning_content", None) or extra.get("reasoning_content") or extra.get("reasoning")
            text = msg.content or ""
        elif request.prompt is not None:
            resp = await self._call(self._client.completions.create, model=self.name, prompt=request.prompt, **kw)
            if not resp.choices:
                raise PermanentModelError(f"{self.model_id}: response from {self.base_url} has no choices")
            choice = resp.choices[0]
            text, reasoning = choice.text or "", None
        else:
            raise PermanentModelError(f"{self.model_id}: request has neither messages nor prompt")
        usage = resp.usage
        return GenResult(text=text, reasoning=reasoning or None,
                         input_tokens=getattr(usage, "prompt_tokens", None) if usage else None,
                         output_tokens=getattr(usage, "completion_tokens", None) if usage else None,
                         finish_reason=choice.finish_reason,
                         raw={"id": resp.id, "model": resp.model,
                              "system_fingerprint": getattr(resp, "system_fingerprint", None)})

    # ------------------------------------------------------------------ loglikelihood
    async def loglikelihood(self, request: LoglikelihoodRequest) -> LoglikelihoodResult:
        if not self.logprobs_trusted:
            return await super().loglikelihood(request)
        # lm-eval's rule: trailing whitespace of the context belongs to the continuation.
        context, continuation = request.context, request.continuation
        n = len(context) - len(context.rstrip())
        if n:
            context, continuation = context[:-n], context[-n:] + continuation
        # max_tokens=1, as lm-eval does: vLLM rejects 0 and llama-cpp-python reads 0 as "fill the
        # context". The one generated token lies past the echoed text and is dropped below.
        resp = await self._call(self._client.completions.create, model=self.name, prompt=context + continuation,
                                echo=True, logprobs=1, max_tokens=1, temperature=0.0)
        lp = resp.choices[0].logprobs if resp.choices else None
        if lp is None or not lp.token_logprobs or lp.text_offset is None:
            raise PermanentModelError(f"{self.model_id}: {self.base_url} returned no echoed prompt logprobs "
                                      f"(server does not support echo=True with logprobs)")
        return self._sum_continuation(lp, len(context), len(context) + len(continuation))

    def _sum_continuation(self, lp, ctx_chars: int, end_chars: int) -> LoglikelihoodResult:
        offsets, tokens = list(lp.text_offset), list(lp.tokens or [])
        token_lps, tops = list(lp.token_logprobs), list(lp.top_logprobs or [None] * len(offsets))
        # Continuation tokens: those ending after the context's last character (a token straddling the
        # boundary counts as continuation, as it would if the server had tokenised the pair apart),
        # and starting before the end of the echoed text (drops the generated token).
        idx = [i for i, off in enumerate(offsets)
               if off < end_chars and (off >= ctx_chars or (i < len(tokens) and off + len(tokens[i]) > ctx_chars))]
        total, greedy = 0.0, True
        for i in idx:
            if token_lps[i] is None:
                raise PermanentModelError(f"{self.model_id}: {self.base_url} returned a null logprob "
                                          f"for continuation token {i}")
            total += token_lps[i]
            top = tops[i] if i < len(tops) else None
            if top:
                best = max(top.values())
                greedy = greedy and token_lps[i] >= best - 1e-6
        return LoglikelihoodResult(logprob=float(total), is_greedy=greedy, n_tokens=len(idx))

    async def aclose(self) -> None:
        await self._client.close()
