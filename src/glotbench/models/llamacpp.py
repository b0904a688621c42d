"""In-process GGUF model through llama-cpp-python.

Generation uses llama-cpp-python's high-level API (the GGUF's own chat template in chat mode).
Log-likelihoods are computed here from raw logits, *not* through ``create_completion(echo=True,
logprobs=...)``: that path misaligns prompt-token log-probs by one position for models whose GGUF
says not to add a BOS token (SmolLM2, Qwen, ...) and sorts the whole vocabulary in Python for
every token. See docs/footguns.md.

Log-likelihood calls share one llama.cpp context, so they are serialised and run in a worker
thread so the event loop stays responsive; when several options are one token each (" A" .. " D")
after the same context, their log-probs are read from one logits row. Generation goes through
:class:`~glotbench.models.llamacpp_batch.BatchGenerator` when ``n_seq > 1`` (several sequences
per llama.cpp batch, ``max_parallel = n_seq``). By default ``n_seq`` is as many slots as fit in
:data:`KV_BUDGET` of KV cache, at most 24 (24 for the embedded SmolLM2); ``n_seq=1`` and requests the
batch path cannot serve exactly (grammars, other chat formats, more tokens than a slot holds) take
the serial high-level path. Both paths give bitwise the same logits, so the same greedy text. A
request's latency grows with the others in its batch, so the per-request timeout is multiplied by
``n_seq`` (:attr:`timeout_scale`; docs/footguns.md).

``aclose`` takes the same thread
lock, so an interrupted run (Ctrl-C cancels the tasks, not the thread) never frees the context
while a decode is still running in the worker thread; it first raises a flag that stops that
decode at its next token (the answer was cancelled anyway), so Ctrl-C does not wait for it.

Chat or plain: by default a GGUF that carries a chat template (``tokenizer.chat_template``) runs
as a chat model and one without runs as a plain-completion model, with a one-line ``notice``;
llama-cpp-python would otherwise format its messages with a generic Llama-2 ``[INST] <<SYS>>``
template that the model never saw. ``chat=True`` on a GGUF without a template is refused.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import threading
from pathlib import Path
from typing import Any

import numpy as np

from glotbench.errors import ModelError, PermanentModelError, TransientModelError
from glotbench.models.chat_turns import ends_with_assistant, open_final_turn
from glotbench.models.base import GenRequest, GenResult, LoglikelihoodRequest, LoglikelihoodResult, Model
from glotbench.models.backends import construct
from glotbench.models.llamacpp_probe import (
    DEFAULT, SAFE, choose_mode, has_extra_bufts_setting, model_params_without_extra_bufts,
)

# Sampling knobs llama-cpp-python accepts on create_(chat_)completion besides the GenRequest fields.
_SAMPLING_KNOBS = {
    "frequency_penalty", "presence_penalty", "repeat_penalty", "top_k", "min_p", "typical_p",
    "tfs_z", "mirostat_mode", "mirostat_tau", "mirostat_eta", "logit_bias", "grammar",
    "response_format",
}
# Neutral sampling unless a request says otherwise: plain temperature sampling, like the OpenAI API
# (llama-cpp-python's own defaults are top_k=40, top_p=0.95, min_p=0.05).
_NEUTRAL = {"top_k": 0, "min_p": 0.0, "top_p": 1.0}


class ModelClosing(RuntimeError):
    """The model is being closed: the generation in progress stops at its next token."""


def file_fingerprint(path: Path) -> str:
    """sha256 of the file's first MiB plus its size: cheap, and stable across machines for one file."""
    size = path.stat().st_size
    h = hashlib.sha256()
    with path.open("rb") as fh:
        h.update(fh.read(1 << 20))
    h.update(str(size).encode())
    return h.hexdigest()[:16]


def log_softmax(logits: np.ndarray) -> np.ndarray:
    x = logits.astype(np.float64, copy=False)
    m = x.max(axis=-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=-1, keepdims=True))


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def default_threads(batched: bool = False) -> int:
    """llama.cpp threads when ``-M n_threads`` does not say: at most 8.

    Serial decoding: half the cores this process may use (llama-cpp-python's own rule; one
    sequence gains little from more). Batched decoding (``n_seq > 1``, the default) is
    compute-bound and gains from every core, so it takes all of them. On a machine busy with
    other CPU-bound work, pass ``-M n_threads=1``: llama.cpp's threads spin while they wait for each
    other, and oversubscribed they were several times slower than fewer threads (docs/footguns.md;
    a guess from the load average was tried and dropped: it lags by a minute, so a run started
    right after another one got half the threads)."""
    n = usable_cores()
    return max(1, min(8, n if batched else n // 2))


KV_BUDGET = 5 << 28  # bytes of KV cache the batch path's slots may take by default (1.25 GiB)


def default_n_seq(llm, seq_cells: int, budget: int = KV_BUDGET, cap: int = 24) -> int:
    """Batch slots by default: as many as fit in ``budget`` bytes of f16 KV cache, 1 to ``cap``
    (SmolLM2-135M: 45 MiB per 2048-cell slot, so 24; Mistral-7B: 256 MiB, so 5).
    On 2 CPU cores, MM-Eval --limit 20 took 117.6 s with 8 slots and 113.3 s with 16; with 24
    its 20 long reasoning answers (384 tokens each) all fit at once instead of the last four
    running alone after the others: 104.9 / 103.3 s against 117.2 / 112.3 s with 16 in one
    interleaved bench (1.10x; 22 slots: 1.05x), for 360 MB more KV cache."""
    import llama_cpp

    m = llm._model.model
    n_head = max(1, llama_cpp.llama_model_n_head(m))
    kv_dim = llama_cpp.llama_model_n_embd(m) * llama_cpp.llama_model_n_head_kv(m) // n_head
    per_slot = 2 * 2 * llama_cpp.llama_model_n_layer(m) * kv_dim * seq_cells  # K and V, 2 bytes each
    return max(1, min(cap, budget // max(1, per_slot)))


def split_trailing_space(context: str, continuation: str) -> tuple[str, str]:
    """lm-eval's rule: trailing whitespace of the context belongs to the continuation."""
    n = len(context) - len(context.rstrip())
    if n:
        return context[:-n], context[-n:] + continuation
    return context, continuation


class LlamaCppModel(Model):
    known_knobs = frozenset(_SAMPLING_KNOBS)
    # HF/vLLM names of the same knobs (docs/overrides.md)
    knob_aliases = {"repetition_penalty": "repeat_penalty"}
    """A GGUF file run in-process. ``chat=True`` means prompts are rendered with the GGUF chat template;
    ``chat=None`` (default) decides from whether the file has one."""

    max_parallel = 1
    supports_loglikelihood = True

    @property
    def timeout_scale(self) -> int:
        """A batched request shares every decode step with up to ``n_seq - 1`` others, so its
        latency is up to ``n_seq`` times the serial one: the engine's per-request timeout is
        multiplied by this."""
        return self.n_seq

    def __init__(self, path: str | os.PathLike, n_ctx: int = 4096, n_threads: int | None = None,
                 seed: int = 0, chat: bool | None = None, n_gpu_layers: int = 0, n_seq: int | None = None,
                 chat_template: str | None = None, extra_bufts: bool | None = None):
        self.path = Path(path).expanduser()
        if not self.path.is_file():
            raise ModelError(f"GGUF model file not found: {self.path}")
        try:
            import llama_cpp
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ModelError(f"cannot load {self.path}: llama-cpp-python is not installed "
                             f"(pip install llama-cpp-python) [{exc}]") from exc
        self.n_ctx = n_ctx
        # n_seq > 1: the batch generator decodes this many requests at once, with logits bitwise equal
        # to the serial path's (tests/test_llamacpp_batch.py); None: as many as KV_BUDGET holds
        self.n_seq = max(1, int(n_seq)) if n_seq is not None else None
        self.n_threads = n_threads or default_threads(batched=self.n_seq != 1)
        self.seed = seed
        self.n_gpu_layers = n_gpu_layers
        # a build that dies with SIGILL on this CPU is found by a probe in a child process, not by dying
        mode, probe_notice = self._probe_mode(extra_bufts)
        try:
            with model_params_without_extra_bufts() if mode == SAFE else contextlib.nullcontext():
                self._llm = llama_cpp.Llama(model_path=str(self.path), n_ctx=n_ctx, n_threads=self.n_threads,
                                            n_threads_batch=self.n_threads, n_gpu_layers=n_gpu_layers,
                                            seed=seed, logits_all=False, verbose=False)
        except Exception as exc:
            raise ModelError(f"cannot load GGUF model {self.path}: {' '.join(str(exc).split())}") from exc
        self._llama_cpp = llama_cpp
        if self.n_seq is None:
            from glotbench.models.llamacpp_batch import default_seq_ctx

            self.n_seq = default_n_seq(self._llm, default_seq_ctx(n_ctx))
        self.max_parallel = self.n_seq
        self.chat_template = chat_template
        if chat_template is not None:
            self._use_chat_template(chat_template)
        self.is_chat, chat_notice = self._chat_mode(chat)
        self.continues_assistant_turn = self.is_chat  # a gen_prefix turn: continued_prompt (its template, left open)
        self._open_formatter = None
        self.notice = "; ".join(n for n in (probe_notice, chat_notice) if n) or None
        self._n_vocab = self._llm.n_vocab()
        self._add_bos = bool(self._llm._model.add_bos_token())
        self._bos = self._llm.token_bos()
        self.model_id = f"llamacpp:{self.path.name}@{file_fingerprint(self.path)}"
        self._thread_lock = threading.Lock()
        self._closing = threading.Event()
        llm_eval = self._llm.eval  # llama-cpp-python evaluates every generated token through eval()

        def eval_unless_closing(tokens):
            if self._closing.is_set():
                raise ModelClosing(f"{self.model_id} is closing")
            return llm_eval(tokens)

        self._llm.eval = eval_unless_closing
        self._alock: asyncio.Lock | None = None
        self._alock_loop: asyncio.AbstractEventLoop | None = None
        self._batcher = None  # BatchGenerator, made on the first generate call
        # (context tokens, log-softmax of the next-token logits, their argmax): one-token options after
        # the same context are read from it. one_row_options=False decodes every option (reference path).
        self._last_row: tuple[tuple[int, ...], np.ndarray, int] | None = None
        self.one_row_options = True

    def _probe_mode(self, extra_bufts: bool | None) -> tuple[str, str | None]:
        """How to load: llama.cpp's defaults, or without its extra buffer types (AMX, repacked
        weights) where a probe saw the defaults die on this CPU (models/llamacpp_probe.py)."""
        if extra_bufts is not None:
            if not extra_bufts and not has_extra_bufts_setting():
                raise ModelError("-M extra_bufts=false: this llama-cpp-python's llama_model_params has no "
                                 "use_extra_bufts field; upgrade llama-cpp-python")
            return (DEFAULT if extra_bufts else SAFE), None
        return choose_mode(self.path, file_fingerprint(self.path), self.n_gpu_layers)

    def _use_chat_template(self, template: str) -> None:
        """--chat-template: render chat prompts with this Jinja template instead of the GGUF's own
        (built as llama-cpp-python builds the GGUF's: same bos/eos strings and stop token)."""
        from glotbench.models.llamacpp_batch import jinja_formatter

        self._llm.chat_handler = jinja_formatter(self._llm, template).to_chat_handler()

    def _chat_mode(self, chat: bool | None) -> tuple[bool, str | None]:
        has_template = bool(self.chat_template or (self._llm.metadata or {}).get("tokenizer.chat_template"))
        if has_template:
            return (True if chat is None else bool(chat)), None
        if chat:
            self._llm.close()
            raise ModelError(f"{self.path.name} has no chat template (tokenizer.chat_template), so chat: true would "
                             "format prompts with a generic [INST] template the model never saw; leave chat out "
                             "to run it as a plain-completion model")
        if chat is None:
            return False, (f"{self.path.name} has no chat template: running it as a plain-completion model "
                           "(a base model); prompts are plain text with few-shot examples")
        return False, None

    # ------------------------------------------------------------------ helpers
    def settings(self) -> dict:
        out = {"model_id": self.model_id, "backend": "llamacpp", "path": str(self.path), "n_ctx": self.n_ctx,
               "seed": self.seed, "chat": self.is_chat, "add_bos": self._add_bos}
        if self.n_gpu_layers:  # only when set: existing runs keep their model fingerprint
            out["n_gpu_layers"] = self.n_gpu_layers
        if self.chat_template is not None:
            out["chat_template_sha256"] = hashlib.sha256(self.chat_template.encode()).hexdigest()[:16]
        return out

    def _lock(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        if self._alock is None or self._alock_loop is not loop:
            self._alock, self._alock_loop = asyncio.Lock(), loop
        return self._alock

    async def _run(self, fn, *args):
        async with self._lock():
            return await asyncio.to_thread(self._locked, fn, *args)

    def _locked(self, fn, *args):
        with self._thread_lock:
            return fn(*args)

    def tokenize(self, text: str, add_special: bool = True) -> list[int]:
        """Token ids; ``add_special`` adds BOS only where the GGUF says so. Special tokens in text are parsed."""
        if not text:
            return [self._bos] if (add_special and self._add_bos) else []
        return list(self._llm.tokenize(text.encode("utf-8"), add_bos=add_special, special=True))

    def count_tokens(self, text: str) -> int | None:
        return len(self.tokenize(text, add_special=False))

    # ------------------------------------------------------------------ generate
    def continued_prompt(self, messages, kw: dict[str, Any]) -> tuple[list[int], dict[str, Any]]:
        """The tokens of :meth:`continued_text`, tokenized as the chat path tokenizes, and the knobs ``kw``
        with its stop strings added."""
        text, add_bos, stops = self.continued_text(messages)
        tokens = list(self._llm.tokenize(text.encode("utf-8"), add_bos=add_bos, special=True))
        return tokens, {**kw, "stop": [*(kw["stop"] or []), *stops]}

    def continued_text(self, messages) -> tuple[str, bool, list[str]]:
        """``messages`` rendered with the model's chat template (``chat_template``, else the GGUF's) without
        a generation prompt and cut after the last (assistant) turn's text, as transformers'
        ``continue_final_message`` renders them (models/chat_turns.py); whether BOS is added on
        tokenizing (not when the template writes it), and the chat path's stop strings."""
        if self._open_formatter is None:
            from glotbench.models.llamacpp_batch import jinja_formatter

            template = self.chat_template or (self._llm.metadata or {})["tokenizer.chat_template"]
            self._open_formatter = jinja_formatter(self._llm, template, add_generation_prompt=False)
        msgs = [dict(m) for m in messages]
        res = self._open_formatter(messages=msgs)
        stops = res.stop if isinstance(res.stop, list) else [res.stop] if res.stop else []
        return open_final_turn(res.prompt, str(msgs[-1].get("content") or "")), not res.added_special, stops

    def _gen_kwargs(self, request: GenRequest) -> dict[str, Any]:
        kw: dict[str, Any] = dict(_NEUTRAL)
        kw.update(max_tokens=request.max_tokens, temperature=request.temperature,
                  stop=list(request.stop) or None,
                  # Best-of-N: sample i of N must differ from sample 0, so the index shifts the seed.
                  seed=(self.seed if request.seed is None else request.seed) + request.sample_index)
        if request.top_p is not None:
            kw["top_p"] = request.top_p
        for k, v in request.extra:
            k = self.knob_name(k)
            if k not in _SAMPLING_KNOBS and k not in kw:
                raise PermanentModelError(f"{self.model_id}: unknown extra generation knob {k!r} "
                                          f"(known: {', '.join(sorted(_SAMPLING_KNOBS))})")
            kw[k] = v
        return kw

    def _generate_sync(self, request: GenRequest) -> GenResult:
        kw = self._gen_kwargs(request)
        try:
            if request.messages is not None and ends_with_assistant(request.messages):  # a gen_prefix turn, continued
                tokens, knobs = self.continued_prompt(request.messages, kw)
                out = self._llm.create_completion(prompt=tokens, **knobs)
                choice = out["choices"][0]
                text, reasoning = choice.get("text") or "", None
            elif request.messages is not None:
                out = self._llm.create_chat_completion(messages=[dict(m) for m in request.messages], **kw)
                choice = out["choices"][0]
                msg = choice.get("message") or {}
                text = msg.get("content") or ""
                reasoning = msg.get("reasoning_content") or msg.get("reasoning")
            elif request.prompt is not None:
                out = self._llm.create_completion(prompt=request.prompt, **kw)
                choice = out["choices"][0]
                text, reasoning = choice.get("text") or "", None
            else:
                raise PermanentModelError(f"{self.model_id}: request has neither messages nor prompt")
        except ValueError as exc:  # e.g. prompt longer than the context window
            raise PermanentModelError(f"{self.model_id}: {' '.join(str(exc).split())}") from exc
        usage = out.get("usage") or {}
        return GenResult(text=text, reasoning=reasoning, input_tokens=usage.get("prompt_tokens"),
                         output_tokens=usage.get("completion_tokens"), finish_reason=choice.get("finish_reason"),
                         raw={"id": out.get("id"), "model": self.model_id})

    def _batch_generator(self):
        if self._batcher is None and self._llm is not None and self.n_seq > 1:
            from glotbench.models.llamacpp_batch import BatchGenerator

            self._batcher = BatchGenerator(self._llm, n_seq=self.n_seq)
        return self._batcher

    async def generate(self, request: GenRequest) -> GenResult:
        kw = self._gen_kwargs(request)
        batcher = self._batch_generator() if (request.messages is not None or request.prompt is not None) else None
        if batcher is None or not batcher.supports(request.messages is not None, kw):
            return await self._run(self._generate_sync, request)
        try:
            if request.messages is not None and ends_with_assistant(request.messages):  # a gen_prefix turn, continued
                tokens, knobs = self.continued_prompt(request.messages, kw)
                fut = batcher.submit(messages=None, prompt=None, tokens=tokens, knobs=knobs)
            else:
                fut = batcher.submit(messages=[dict(m) for m in request.messages] if request.messages is not None else None,
                                     prompt=request.prompt, knobs=kw)
        except ValueError as exc:  # e.g. prompt longer than the context window
            raise PermanentModelError(f"{self.model_id}: {' '.join(str(exc).split())}") from exc
        if fut is None:  # needs more KV cells than a batch slot holds
            return await self._run(self._generate_sync, request)
        try:
            text, n_in, n_out, finish = await asyncio.wrap_future(fut)
        except RuntimeError as exc:  # llama_decode failed for this batch (e.g. no free KV cells): worth a retry
            raise TransientModelError(f"{self.model_id}: {exc}") from exc
        return GenResult(text=text, reasoning=None, input_tokens=n_in, output_tokens=n_out, finish_reason=finish,
                         raw={"model": self.model_id})

    # ------------------------------------------------------------------ loglikelihood
    def encode_pair(self, context: str, continuation: str) -> tuple[list[int], list[int]]:
        """lm-eval's split: encode the whole string; the continuation is what follows the context's tokens."""
        context, continuation = split_trailing_space(context, continuation)
        if not context:  # nothing to condition on: use BOS as the prefix, as lm-eval does
            return [self._bos], self.tokenize(continuation, add_special=False)
        whole = self.tokenize(context + continuation)
        ctx = self.tokenize(context)
        return ctx, whole[len(ctx):]

    def _eval_logits(self, tokens: list[int], first_needed: int, last_needed: int | None = None) -> np.ndarray:
        """Evaluate ``tokens`` and return the logits at positions first_needed .. last_needed
        (default len(tokens)-2: every continuation token's predictor, the last token's own row unused).

        Reuses the KV cache for the longest prefix shared with what is already evaluated (options of
        one question share their context). Only the needed positions produce logits.
        """
        llm, lc = self._llm, self._llama_cpp
        total = len(tokens)
        last = total - 2 if last_needed is None else last_needed
        if total > self.n_ctx:
            raise PermanentModelError(f"{self.model_id}: {total} tokens exceed the context window n_ctx={self.n_ctx}")
        common = 0
        for a, b in zip(llm.input_ids[: llm.n_tokens], tokens):
            if a != b:
                break
            common += 1
        start = min(common, first_needed)
        if not llm._ctx.kv_cache_seq_rm(-1, start, -1):
            start = 0
            llm._ctx.kv_cache_seq_rm(-1, 0, -1)
        llm.n_tokens = start
        llm._requires_eval = True
        rows = np.empty((last + 1 - first_needed, self._n_vocab), dtype=np.float32)
        batch = llm._batch.batch
        n_batch = llm.n_batch
        pos = start
        while pos < total:
            if self._closing.is_set():
                raise ModelClosing(f"{self.model_id} is closing")
            chunk = tokens[pos: pos + n_batch]
            batch.n_tokens = len(chunk)
            for i, tok in enumerate(chunk):
                p = pos + i
                batch.token[i] = tok
                batch.pos[i] = p
                batch.seq_id[i][0] = 0
                batch.n_seq_id[i] = 1
                batch.logits[i] = first_needed <= p <= last
            llm._ctx.decode(llm._batch)
            for i in range(len(chunk)):
                p = pos + i
                if first_needed <= p <= last:
                    ptr = lc.llama_get_logits_ith(llm._ctx.ctx, i)
                    rows[p - first_needed] = np.ctypeslib.as_array(ptr, shape=(self._n_vocab,))
            llm.input_ids[pos: pos + len(chunk)] = chunk
            llm.n_tokens = pos + len(chunk)
            pos += len(chunk)
        return rows

    def _context_row(self, ctx: list[int]) -> tuple[np.ndarray, int]:
        """Log-softmax of the logits after ``ctx`` (the next-token distribution) and its argmax.

        One decode of the context's new tokens (KV of a shared prefix reused), one log-softmax; kept
        for the next request, so every one-token option after the same context is an index into it."""
        key = tuple(ctx)
        if self._last_row is not None and self._last_row[0] == key:
            return self._last_row[1], self._last_row[2]
        logits = self._eval_logits(ctx, len(ctx) - 1, len(ctx) - 1)[0]
        row = log_softmax(logits)
        self._last_row = (key, row, int(logits.argmax()))
        return row, self._last_row[2]

    def _loglikelihood_sync(self, request: LoglikelihoodRequest, one_row: bool | None = None) -> LoglikelihoodResult:
        """``one_row`` (default ``self.one_row_options``): a one-token continuation is read from the
        context's next-token row; False decodes context + option for every option (the reference
        path, same numbers within float rounding: tests/test_loglikelihood_one_row.py)."""
        ctx, cont = self.encode_pair(request.context, request.continuation)
        if not cont:
            return LoglikelihoodResult(logprob=0.0, is_greedy=True, n_tokens=0)
        if not request.context and len(ctx) + len(cont) > self.n_ctx:  # a whole text past the window
            return self._rolling_sync(cont)
        if self.one_row_options if one_row is None else one_row:
            if len(cont) == 1:
                row, best = self._context_row(ctx)
                return LoglikelihoodResult(logprob=float(row[cont[0]]), is_greedy=best == cont[0], n_tokens=1)
        logits = self._eval_logits(ctx + cont, len(ctx) - 1)
        logp = log_softmax(logits)
        self._last_row = (tuple(ctx), logp[0], int(logits[0].argmax()))  # the context's row, for one-token options
        target = np.asarray(cont)
        token_lp = logp[np.arange(len(cont)), target]
        greedy = bool((logits.argmax(axis=-1) == target).all())
        return LoglikelihoodResult(logprob=float(token_lp.sum()), is_greedy=greedy, n_tokens=len(cont))

    def _rolling_sync(self, tokens: list[int]) -> LoglikelihoodResult:
        """log P(text) over lm-eval's disjoint windows of ``n_ctx`` tokens (glotbench.models.rolling)."""
        from glotbench.models.rolling import rolling_windows

        total, greedy = 0.0, True
        for ctx, cont in rolling_windows(tokens, self._bos, self.n_ctx):
            inp = ctx + cont[:-1]
            logits = self._eval_logits(inp, len(ctx) - 1, len(inp) - 1)
            target = np.asarray(cont)
            total += float(log_softmax(logits)[np.arange(len(cont)), target].sum())
            greedy = greedy and bool((logits.argmax(axis=-1) == target).all())
        self._last_row = None  # the KV cache holds the last window now
        return LoglikelihoodResult(logprob=total, is_greedy=greedy, n_tokens=len(tokens))

    async def loglikelihood(self, request: LoglikelihoodRequest) -> LoglikelihoodResult:
        return await self._run(self._loglikelihood_sync, request)

    async def aclose(self) -> None:
        batcher, self._batcher = getattr(self, "_batcher", None), None
        if batcher is not None:
            await asyncio.to_thread(batcher.close)
        llm, self._llm = getattr(self, "_llm", None), None
        if llm is not None:
            # A decode may still run in a worker thread (its task was cancelled, the thread was not):
            # stop it at its next token, and free the context only under the lock it holds.
            self._closing.set()
            await asyncio.to_thread(self._locked, llm.close)


def from_spec(spec: str, rest: str, *, base_url=None, api_key_env=None, timeout=None, **kw) -> Model:
    """``llamacpp:/path/x.gguf``: any GGUF file, in-process."""
    path = Path(rest).expanduser()
    if not path.is_file():
        raise ModelError(f"model spec {spec!r}: GGUF file not found: {path}")
    return construct(spec, LlamaCppModel, path, **kw)
