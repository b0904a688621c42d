"""Call a model through the journal: cached responses come back at once, new ones are sent
with bounded concurrency and retries, and committed the moment they arrive."""

from __future__ import annotations

import asyncio
import hashlib
import random
import time
from dataclasses import dataclass, field, replace
from functools import partial

from glotbench.engine.journal import Journal
from glotbench.engine.retry import RetriesExhausted, RetryPolicy, RunGuard, with_retries
from glotbench.errors import ModelError
from glotbench.models.base import GenRequest, GenResult, LoglikelihoodRequest, LoglikelihoodResult, Model


class RequestFailed(Exception):
    """A request that still failed after its retries (or failed permanently)."""

    def __init__(self, message: str, attempts: int):
        super().__init__(message)
        self.attempts = attempts


@dataclass
class CallStats:
    sent: int = 0
    cached: int = 0
    shared_hits: int = 0  # of ``cached``: answers taken from the shared response cache
    repeat_hits: int = 0  # of ``cached``: requests this caller itself answered earlier in the run
    inflight_shared: int = 0  # identical requests that waited on one already on its way (not in ``cached``)
    retries: int = 0
    failed: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    errors_by_kind: dict[str, int] = field(default_factory=dict)


class CachedCaller:
    def __init__(self, model: Model, journal: Journal, *, role: str = "model", policy: RetryPolicy | None = None,
                 concurrency: int = 8, seed: int = 0, guard: RunGuard | None = None, shared=None,
                 shared_ident: dict | None = None):
        self.model = model
        # the shared response cache (engine/response_cache.py), read on a journal miss, written
        # after each answer; None when the run has none. ``shared_ident``: what its keys hold of the
        # model (response_cache.cache_identity: the settings and the served model's identity)
        self.shared = shared
        self._shared_ident = (shared_ident or model.settings()) if shared is not None else None
        self.journal = journal
        self.role = role
        self.policy = policy or RetryPolicy()
        scale = getattr(model, "timeout_scale", 1) or 1
        if scale != 1:  # a batched in-process model: a request waits on the others in its batch
            self.policy = replace(self.policy, timeout=self.policy.timeout * scale)
        self.guard = guard or RunGuard(self.policy)  # shared by the model's and the judge's callers
        self.concurrency = max(1, concurrency)
        self.semaphore = asyncio.Semaphore(self.concurrency)
        self.stats = CallStats()
        self._rng = random.Random(seed)
        self._inflight: dict[str, asyncio.Future | None] = {}  # key -> a future once a duplicate waits on it
        self.judge: "CachedCaller | None" = None  # the judge's caller, when the run has one
        self.on_answer = None  # called once per answer received (the run's progress display)
        # Keys already answered, read once: a miss then costs no database query.
        self._known = journal.cached_keys()
        self._answered_here: set[str] = set()  # keys this caller sent (or took from the shared cache)

    async def __call__(self, request: GenRequest | LoglikelihoodRequest, *, task: str | None = None,
                       sample_id: str | None = None, keyed: tuple[bytes, str] | None = None) -> GenResult | LoglikelihoodResult:
        """``keyed``: ``(request.keyed_json(model_id), its sha256 hex)`` when the caller has them already."""
        if keyed is None:
            keyed_json = request.keyed_json(self.model.model_id)  # what the journal stores; its sha256 is the key
            key = hashlib.sha256(keyed_json).hexdigest()
        else:
            keyed_json, key = keyed
        cached = self.journal.get_response(key) if key in self._known else None
        is_gen = isinstance(request, GenRequest)
        if cached is None and self.shared is not None:
            cached = self._from_shared(keyed_json, key, is_gen)
        if cached is None:
            self.guard.check()  # the breaker has tripped: send nothing more
        if cached is not None:
            self.stats.cached += 1
            if key in self._answered_here:
                self.stats.repeat_hits += 1
            return GenResult.from_dict(cached) if is_gen else LoglikelihoodResult.from_dict(cached)
        inflight = self._inflight
        if key in inflight:  # identical request already on its way (e.g. duplicate items)
            self.stats.inflight_shared += 1
            fut = inflight[key]
            if fut is None:  # the first to wait on it makes the future the sender settles
                fut = inflight[key] = asyncio.get_running_loop().create_future()
            return await asyncio.shield(fut)
        inflight[key] = None  # no future until someone waits on it (duplicates are rare)
        try:
            result = await self._send(request, keyed_json, key, is_gen, task, sample_id)
        except BaseException as err:
            fut = inflight.pop(key, None)
            if fut is not None:
                fut.set_exception(err)
                fut.exception()  # mark retrieved
            raise
        fut = inflight.pop(key, None)
        if fut is not None:
            fut.set_result(result)
        return result

    def _from_shared(self, keyed_json: bytes, key: str, is_gen: bool) -> dict | None:
        """An answer from the shared cache, copied into this run's journal (the run stays complete)."""
        found = self.shared.get(self.shared.cache_key(key, self._shared_ident), "generate" if is_gen else "loglikelihood")
        if found is None:
            return None
        self._known.add(key)
        self._answered_here.add(key)
        self.journal.put_response(key, role=self.role, kind="generate" if is_gen else "loglikelihood",
                                  model_id=self.model.model_id, request=keyed_json,
                                  response=found, latency_s=None)
        self.stats.shared_hits += 1
        return found

    def _on_retry(self, attempt: int, err: Exception) -> None:
        self.stats.retries += 1

    async def _send(self, request, keyed_json: bytes, key: str, is_gen: bool, task, sample_id):
        call = partial(self.model.generate if is_gen else self.model.loglikelihood, request)
        async with self.semaphore:
            # The answer that freed this slot is committed first: sent-but-uncommitted requests
            # then stay within the concurrency, which bounds what a kill re-sends (docs/footguns.md).
            await self.journal.committed()
            t0 = time.perf_counter()
            try:
                result, _attempts = await with_retries(call, self.policy, rng=self._rng, on_retry=self._on_retry,
                                                       guard=self.guard)
            except RetriesExhausted as err:
                why = f" ({err.why})" if err.why else ""
                self._fail(key, task, sample_id, f"{type(err.last).__name__}: {err.last}{why}", err.attempts)
                raise RequestFailed(f"{err.last}{why}", err.attempts) from None
            except ModelError as err:
                self._fail(key, task, sample_id, f"{type(err).__name__}: {err}", 1)
                raise RequestFailed(str(err), 1) from None
            latency = time.perf_counter() - t0
        self.stats.sent += 1
        if self.on_answer is not None:
            self.on_answer()
        if is_gen:
            self.stats.input_tokens += result.input_tokens or 0
            self.stats.output_tokens += result.output_tokens or 0
        self._known.add(key)
        self._answered_here.add(key)
        # Committed at once; if the write fails (disk full) the journal keeps the answer in memory
        # and writes it later, so it is never sent again (and the guard stops new sends).
        self.journal.put_response(key, role=self.role, kind="generate" if is_gen else "loglikelihood",
                                  model_id=self.model.model_id, request=keyed_json,
                                  response=result.to_dict(),
                                  latency_s=latency)
        if self.shared is not None:  # answers only: a failed request never gets here
            self.shared.put(self.shared.cache_key(key, self._shared_ident), model_id=self.model.model_id,
                            kind="generate" if is_gen else "loglikelihood", response=result.to_dict())
        if self.journal.write_error:
            self.guard.trip(f"cannot write the journal {self.journal.path} ({self.journal.write_error}); "
                            f"{self.journal.pending} write(s) held in memory")
        return result

    def _fail(self, key, task, sample_id, message: str, attempts: int) -> None:
        self.stats.failed += 1
        kind = message.split(":", 1)[0]
        self.stats.errors_by_kind[kind] = self.stats.errors_by_kind.get(kind, 0) + 1
        self.journal.put_error(key, role=self.role, task=task, sample_id=sample_id, error=message, attempts=attempts)
