"""Any OpenAI-compatible server: OpenAI, vLLM, Ollama, LMDeploy, llama.cpp server, DeepSeek, ...

Requests are plain JSON POSTs sent with aiohttp. We measured the official ``openai`` SDK at about
3 ms of CPU per request on this project's 2-core machines (request transformation, pydantic
response models, httpx connection-pool bookkeeping), which capped the harness at ~350 items/s
against an instant server; aiohttp keeps the backend thin (see bench/throughput.py). The engine
owns retries; this backend only classifies failures (timeouts, connection errors, 408, 429 and
5xx are transient, other 4xx permanent), each as one line naming the URL.

Chat requests go to ``/chat/completions``, plain prompts to ``/completions``. A separate thinking
trace (``reasoning_content`` from DeepSeek / vLLM, ``reasoning`` from some others) lands in
``GenResult.reasoning``.

Log-likelihoods come from ``/completions`` with ``echo=True, logprobs=1, max_tokens=1`` -- only when
the caller vouches for the server with ``logprobs_trusted=True``. Many servers reject echo, ignore
it, or (llama-cpp-python's server) return misaligned prompt log-probs; see docs/footguns.md.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import TYPE_CHECKING, Any, Awaitable
from urllib.parse import urljoin

from glotbench import json_codec
from glotbench.errors import AuthModelError, ModelError, PermanentModelError, TransientModelError
from glotbench.models.chat_turns import ends_with_assistant
from glotbench.models.backends import construct
from glotbench.models.base import GenRequest, GenResult, LoglikelihoodRequest, LoglikelihoodResult, Model
from glotbench.models.deadlines import bounded, deadlines_for
from glotbench.models.replicas import Replicas, parse_urls
from glotbench.models.http_errors import parse_retry_after, read_capped, same_origin, server_message
from glotbench.models.response_shape import chat_fields, completion_fields, logprobs_field

if TYPE_CHECKING:
    import aiohttp

OPENAI_URL = "https://api.openai.com/v1"
NO_KEY = "sk-no-key-needed"  # local servers ignore the key, but some proxies insist on one
MAX_RESPONSE_BYTES = 32 << 20  # a larger body is refused while it streams in (memory stays flat)
MAX_REDIRECTS = 3
CONNECT_TIMEOUT_S = 20.0  # a host that does not accept the TCP connection in this long counts as unreachable
# aiohttp is imported on the first request, not with this module: a re-report builds the model to
# find its run and sends nothing (about 0.1 CPU-s of imports; docs/performance.md)


def _aiohttp():
    """The aiohttp module, imported on first use (then a global read, not an import statement per request)."""
    global _AIOHTTP
    if _AIOHTTP is None:
        import aiohttp

        _AIOHTTP = aiohttp
    return _AIOHTTP


_AIOHTTP = None


def _one_line(text: object, limit: int = 300) -> str:
    s = " ".join(str(text).split())
    return s if len(s) <= limit else s[: limit - 3] + "..."


def _check_positive(name: str, **options) -> None:
    """Model options that must be positive numbers (``-M max_response_bytes=-1`` failed every request
    only after all were sent): one line before any request."""
    for key, value in options.items():
        if value is None and key == "max_parallel":
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0 or value != value:
            raise ModelError(f"openai:{name}: model option {key}={value!r} must be a positive number")
        if key in ("max_response_bytes", "max_parallel") and not float(value).is_integer():
            raise ModelError(f"openai:{name}: model option {key}={value!r} must be a whole number")


class OpenAICompatModel(Model):
    serves_remotely = True  # the server answers under any name: the cache keys on what it says it serves
    def __init__(self, name: str, base_url: str | list[str] | None = None, api_key_env: str = "OPENAI_API_KEY",
                 chat: bool = True, timeout: float = 60, logprobs_trusted: bool = False,
                 max_parallel: int | None = None, max_response_bytes: int = MAX_RESPONSE_BYTES,
                 connect_timeout: float = CONNECT_TIMEOUT_S, replica_cooldown: float = 5.0,
                 continue_final_message: bool = False):
        self.name = name
        _check_positive(name, max_response_bytes=max_response_bytes, max_parallel=max_parallel, timeout=timeout,
                        connect_timeout=connect_timeout)
        if not isinstance(replica_cooldown, (int, float)) or isinstance(replica_cooldown, bool) or not replica_cooldown >= 0:
            raise ModelError(f"openai:{name}: model option replica_cooldown={replica_cooldown!r} must be a number of seconds >= 0")
        urls = parse_urls(base_url) or [OPENAI_URL]
        # Several URLs are replicas of one model: requests spread over them (models/replicas.py).
        # The model's identity leaves the list out, so adding or losing a replica resumes the run.
        self.replicas = Replicas(urls, cooldown_s=replica_cooldown) if len(urls) > 1 else None
        self.base_url = urls[0] if self.replicas is None else "replicas"
        self.is_chat = chat
        if not isinstance(continue_final_message, bool):
            raise ModelError(f"openai:{name}: model option continue_final_message={continue_final_message!r} must be "
                             "true or false")
        # the server continues a final assistant turn when asked (vLLM's and SGLang's chat API:
        # continue_final_message, add_generation_prompt false): a task's gen_prefix (run_checks.check_prefill)
        self.continue_final_message = continue_final_message
        self.continues_assistant_turn = continue_final_message and chat
        self.timeout = timeout
        self.logprobs_trusted = logprobs_trusted
        self.supports_loglikelihood = logprobs_trusted
        self.max_parallel = max_parallel
        self.max_response_bytes = int(max_response_bytes)
        self.connect_timeout = min(float(connect_timeout), float(timeout))
        key = os.environ.get(api_key_env or "") if api_key_env else None
        if not key:
            if base_url is None:
                raise ModelError(f"openai:{name}: environment variable {api_key_env} is not set "
                                 f"(needed for {OPENAI_URL}; pass base_url for a local server)")
            key = NO_KEY
        self.model_id = f"openai:{name}@{self.base_url}"
        self._headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
        self._session: aiohttp.ClientSession | None = None
        self._deadlines: dict = {}  # the per-request time limit's table, per event loop (models/deadlines.py)
        self._loop = None

    def settings(self) -> dict:
        out = {"model_id": self.model_id, "backend": "openai-compatible", "name": self.name,
               "base_url": self.base_url, "chat": self.is_chat, "logprobs_trusted": self.logprobs_trusted}
        if self.continue_final_message:  # only when set: the identity of every other run is as before
            out["continue_final_message"] = True
        return out

    def served_identity(self) -> dict | None:
        """What the server (every replica) says it serves (models/served_identity.py); None when one
        cannot say or the replicas differ."""
        from glotbench.models.served_identity import probe

        urls = self.replicas.urls if self.replicas is not None else [self.base_url]
        found = [probe(u, self.name, self._headers) for u in urls]
        if any(f is None for f in found):
            return None
        first = json.dumps(found[0], sort_keys=True)
        return found[0] if all(json.dumps(f, sort_keys=True) == first for f in found[1:]) else None

    # ------------------------------------------------------------------ plumbing
    def _get_session(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        session = self._session
        if session is not None and self._loop is loop and not session.closed:
            return session
        import aiohttp

        # a session belongs to one event loop; a new loop (a new asyncio.run) gets a new one
        connector = aiohttp.TCPConnector(limit=0, ttl_dns_cache=300)
        # no aiohttp timer per request (``total``): _post_to bounds each request, redirects and body
        # included, on the model's one timer (models/deadlines.py); the connect limit stays aiohttp's
        self._session = aiohttp.ClientSession(connector=connector, headers=self._headers,
                                              timeout=aiohttp.ClientTimeout(total=None, sock_connect=self.connect_timeout),
                                              json_serialize=lambda o: json.dumps(o, ensure_ascii=False))
        self._loop = loop
        return self._session

    def _post(self, path: str, payload: dict) -> Awaitable[dict]:
        """The POST's awaitable (one coroutine frame fewer per request without replicas)."""
        if self.replicas is None:
            return self._post_to(self.base_url, path, payload)
        return self._post_replica(path, payload)

    async def _post_replica(self, path: str, payload: dict) -> dict:
        with self.replicas.use() as i:
            try:
                data = await self._post_to(self.replicas.urls[i], path, payload)
            except TransientModelError as err:
                if err.connection:
                    self.replicas.unreachable(i)
                raise
            self.replicas.ok(i)
            return data

    def run_notes(self) -> list[str]:
        notes = list(super().run_notes())
        if self.replicas is not None:
            notes.append(self.replicas.note())
        return notes

    async def _post_to(self, base_url: str, path: str, payload: dict) -> dict:
        aiohttp = _aiohttp()
        url = f"{base_url}{path}"
        try:
            status, headers, raw, url = await bounded(self._post_following(url, payload),
                                                      deadlines_for(self._deadlines, self.timeout))
        except getattr(aiohttp, "ConnectionTimeoutError", ()) as exc:  # aiohttp >= 3.10  # no TCP connection within connect_timeout: the server is not there
            raise TransientModelError(f"{self.model_id}: cannot reach {url} (no connection within "
                                      f"{self.connect_timeout:g}s: {type(exc).__name__})", connection=True) from None
        except asyncio.TimeoutError:
            raise TransientModelError(f"{self.model_id}: request to {url} timed out after {self.timeout:g}s") from None
        except aiohttp.ClientConnectionError as exc:
            raise TransientModelError(f"{self.model_id}: cannot reach {url} ({type(exc).__name__}: {_one_line(exc, 120)})",
                                      connection=not isinstance(exc, aiohttp.ServerDisconnectedError)) from None
        except aiohttp.ClientError as exc:
            raise TransientModelError(f"{self.model_id}: request to {url} failed ({type(exc).__name__}: {_one_line(exc, 120)})") from None
        if status >= 400:
            msg = f"{self.model_id}: HTTP {status} from {url}: {_one_line(server_message(raw))}"
            if status in (408, 429) or status >= 500:
                raise TransientModelError(msg, retry_after=parse_retry_after(headers.get("Retry-After")))
            if status in (401, 403):
                raise AuthModelError(msg)
            raise PermanentModelError(msg)
        try:
            data = json_codec.loads(raw)
        except (ValueError, RecursionError):
            raise TransientModelError(f"{self.model_id}: {url} answered HTTP {status} with a body that is not JSON: "
                                      f"{_one_line(raw[:120].decode('utf-8', 'replace'))}") from None
        if isinstance(data, dict) and data.get("error") and not data.get("choices"):
            # a 200 carrying an error body ("quota exceeded"): keep the server's own words
            raise TransientModelError(f"{self.model_id}: {url} answered HTTP {status} with an error: "
                                      f"{_one_line(server_message(raw))}",
                                      retry_after=parse_retry_after(headers.get("Retry-After")))
        return data

    async def _post_following(self, url: str, payload: dict) -> tuple[int, Any, bytes, str]:
        """POST, following redirects only to the same scheme, host and port (and keeping the
        POST and its body: aiohttp would turn a 302 into a GET); another host is refused."""
        body = json_codec.dumps_bytes(payload)  # once, not once per redirect hop
        for _hop in range(MAX_REDIRECTS + 1):
            async with self._get_session().post(url, data=body, allow_redirects=False) as resp:
                status, headers = resp.status, resp.headers
                if status in (301, 302, 303, 307, 308):
                    target = urljoin(url, headers.get("Location", ""))
                    if not same_origin(url, target):
                        raise PermanentModelError(f"{self.model_id}: {url} redirected (HTTP {status}) to another host, "
                                                  f"{target}: refused (set base_url to the server you mean)")
                    url = target
                    continue
                raw = await read_capped(resp, self.max_response_bytes, what=f"{self.model_id}: response from {url}")
                return status, headers, raw, url
        raise PermanentModelError(f"{self.model_id}: more than {MAX_REDIRECTS} redirects from {self.base_url}")

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
            kw.update(dict(request.extra))
        return kw

    # ------------------------------------------------------------------ generate
    async def generate(self, request: GenRequest) -> GenResult:
        kw = self._sampling(request)
        if request.messages is not None:
            url = "/chat/completions"
            if self.continue_final_message and ends_with_assistant(request.messages):
                kw = {**kw, "continue_final_message": True, "add_generation_prompt": False}  # the prefix, continued
            data = await self._post(url, {"model": self.name, "messages": [dict(m) for m in request.messages], **kw})
            fields = chat_fields(data, what=f"{self.model_id}: response from {self.base_url}{url}")
        elif request.prompt is not None:
            url = "/completions"
            data = await self._post(url, {"model": self.name, "prompt": request.prompt, **kw})
            fields = completion_fields(data, what=f"{self.model_id}: response from {self.base_url}{url}")
        else:
            raise PermanentModelError(f"{self.model_id}: request has neither messages nor prompt")
        return GenResult(**fields)

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
        data = await self._post("/completions", {"model": self.name, "prompt": context + continuation,
                                                 "echo": True, "logprobs": 1, "max_tokens": 1, "temperature": 0.0})
        lp = logprobs_field(data, what=f"{self.model_id}: response from {self.base_url}/completions")
        if not lp or not lp.get("token_logprobs") or lp.get("text_offset") is None:
            raise PermanentModelError(f"{self.model_id}: {self.base_url} returned no echoed prompt logprobs "
                                      f"(server does not support echo=True with logprobs)")
        if not context:  # log P(text): the server gives its first token no log-probability
            return self._sum_text(lp, len(continuation))
        return self._sum_continuation(lp, len(context), len(context) + len(continuation))

    def _sum_text(self, lp: dict, end_chars: int) -> LoglikelihoodResult:
        """log P(text) from one echoed request (no windows: the text must fit the server's context).
        The leading tokens the server scored null (the first: nothing precedes it, and the server
        adds no BOS to condition it on) are left out and their characters reported as ``unscored_chars``."""
        offsets, token_lps = list(lp["text_offset"]), list(lp["token_logprobs"])
        idx = [i for i, off in enumerate(offsets) if off < end_chars]
        skip = 0
        while skip < len(idx) and token_lps[idx[skip]] is None:
            skip += 1
        scored = idx[skip:]
        unscored = offsets[scored[0]] if scored else end_chars
        first = self._sum_continuation(lp, unscored, end_chars) if scored else LoglikelihoodResult(0.0, True, 0)
        return LoglikelihoodResult(logprob=first.logprob, is_greedy=first.is_greedy, n_tokens=first.n_tokens,
                                   unscored_chars=unscored)

    def _sum_continuation(self, lp: dict, ctx_chars: int, end_chars: int) -> LoglikelihoodResult:
        offsets, tokens = list(lp["text_offset"]), list(lp.get("tokens") or [])
        token_lps = list(lp["token_logprobs"])
        tops = list(lp.get("top_logprobs") or [None] * len(offsets))
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
        if self._session is not None and not self._session.closed and self._loop is asyncio.get_running_loop():
            await self._session.close()
        self._session = None


OLLAMA_URL = "http://127.0.0.1:11434/v1"


def from_spec(spec: str, rest: str, *, base_url=None, api_key_env=None, timeout=None, **kw) -> Model:
    """``openai:NAME`` (OpenAI or any compatible server with base_url), ``vllm:NAME`` (base_url
    required), ``ollama:NAME`` (default http://127.0.0.1:11434/v1)."""
    prefix = spec.partition(":")[0].strip().lower()
    if prefix == "ollama":
        base_url = base_url or OLLAMA_URL
    if prefix == "vllm" and not base_url:
        raise ModelError(f"model spec {spec!r}: a vLLM server needs base_url (e.g. http://127.0.0.1:8000/v1)")
    opts = dict(kw)
    if timeout is not None:
        opts["timeout"] = timeout
    if api_key_env is not None:
        opts["api_key_env"] = api_key_env
    elif prefix != "openai":
        opts["api_key_env"] = f"{prefix.upper()}_API_KEY"
    return construct(spec, OpenAICompatModel, rest, base_url=base_url, **opts)
