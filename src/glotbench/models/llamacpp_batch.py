"""Batched generation for the in-process llama.cpp model: several sequences per ``llama_decode``.

llama-cpp-python's high-level ``create_(chat_)completion`` decodes one sequence at a time. On a CPU,
decoding 8-16 sequences in one batch costs little more than decoding one (the weights are read
once per step), so :class:`BatchGenerator` runs its own llama.cpp context with ``n_seq`` sequence
slots and one worker thread:

* each request gets a free slot (a sequence id) with its own KV stream (``kv_unified=False``); the
  prompt tokens that slot already holds (the previous request's prompt, e.g. the shared system
  prompt and instructions) are kept, and only the rest is decoded;
* every step decodes the prompts of newly admitted requests (each in its own ``llama_decode``
  calls, as ``Llama.eval`` does) and then one token for each generating sequence, all of them in
  one ``llama_batch`` with sequence ids;
* each request samples through its own llama.cpp sampler chain built by llama-cpp-python's
  ``Llama._init_sampler`` (penalties, greedy or seeded sampling), and stop strings, EOG tokens,
  ``max_tokens`` and the UTF-8 boundary rule follow ``Llama._create_completion`` line by line, so
  the text is what ``create_completion`` returns for the same logits.

Why one KV stream per slot: llama.cpp's CPU attention sums over a sequence's cells in the order
they sit in the cache (softmax and V sums in 8-wide SIMD lanes). In one pool of cells shared by all
slots (``kv_unified=True``) a sequence's cells are scattered among the others', so its logits
differed from a lone decode in the last bits and 9 of 60 greedy MM-Eval answers changed. In its own
stream a sequence's cells lie at the same places as in the serial context, and the weight matmuls
are row-wise, so its logits are bitwise those of ``Llama.eval`` whatever else is in the batch,
provided each of its tokens goes through a ubatch of the same shape as there: its prompt in calls
of its own, one generated token at a time (:meth:`BatchGenerator._step`;
tests/test_llamacpp_batch.py compares every logits row). A stream holds
``seq_ctx`` cells (a multiple of 256, llama.cpp's padding of the attended cells, so the cells a
sequence attends to are those of the serial context); a request that needs more goes through the
serial path.

Prompts are formatted exactly as llama-cpp-python's chat handler does for a GGUF chat template
(``Jinja2ChatFormatter``); other chat formats, grammars and logit biases are not handled here
(:meth:`BatchGenerator.supports` says so) and go through the serial path.
"""

from __future__ import annotations

import ctypes
import queue
import threading
from concurrent.futures import Future, InvalidStateError
from dataclasses import dataclass, field
from typing import Any

# knobs Llama._init_sampler takes (request name -> its parameter name)
SAMPLER_KNOBS = {
    "temperature": "temp", "top_k": "top_k", "top_p": "top_p", "min_p": "min_p", "typical_p": "typical_p",
    "repeat_penalty": "repeat_penalty", "frequency_penalty": "frequency_penalty",
    "presence_penalty": "presence_penalty", "tfs_z": "tfs_z", "mirostat_mode": "mirostat_mode",
    "mirostat_tau": "mirostat_tau", "mirostat_eta": "mirostat_eta",
}
# create_completion's own defaults for the knobs above
COMPLETION_DEFAULTS = {"top_k": 40, "top_p": 0.95, "min_p": 0.05, "typical_p": 1.0, "repeat_penalty": 1.0,
                       "frequency_penalty": 0.0, "presence_penalty": 0.0, "tfs_z": 1.0, "mirostat_mode": 0,
                       "mirostat_tau": 5.0, "mirostat_eta": 0.1}


COPY_MIN = 32  # shared prefix tokens worth a stream copy (one decode of ~30 tokens costs about a copy)


def default_seq_ctx(n_ctx: int, cap: int = 2048) -> int:
    """KV cells per slot: the serial context's ``n_ctx`` up to ``cap`` (a slot's stream is allocated
    up front: 8 x 2048 cells are 377 MB for SmolLM2-135M), rounded down to a multiple of 256."""
    return max(256, min(n_ctx, cap) // 256 * 256)


def _resolve(fut: Future, result: Any = None, exc: BaseException | None = None) -> None:
    """Set a request's outcome unless its caller has cancelled it meanwhile (then nobody waits for it)."""
    try:
        fut.set_exception(exc) if exc is not None else fut.set_result(result)
    except InvalidStateError:
        pass


def jinja_formatter(llm, template: str, *, add_generation_prompt: bool = True):
    """llama-cpp-python's Jinja formatter of ``template`` for ``llm``, with the model's own BOS and EOS
    strings and its EOS token as the stop, as ``Llama.__init__`` builds it for a GGUF's template."""
    from llama_cpp import llama_chat_format

    eos_id, bos_id = llm.token_eos(), llm.token_bos()
    return llama_chat_format.Jinja2ChatFormatter(
        template=template, eos_token=llm._model.token_get_text(eos_id) if eos_id != -1 else "",
        bos_token=llm._model.token_get_text(bos_id) if bos_id != -1 else "",
        add_generation_prompt=add_generation_prompt, stop_token_ids=[eos_id])


@dataclass
class _Job:
    prompt: list[int]
    max_tokens: int
    stops: list[bytes]
    sampler: Any
    future: Future
    # temperature 0 with only a frequency penalty (or none): the chain's pick is computed here (_pick)
    greedy_freq: float | None = None
    history: list[int] = field(default_factory=list)  # tokens picked so far (the penalty's window)
    slot: int = -1
    fed: int = 0  # prompt tokens already in the slot's KV cache
    out: list[int] = field(default_factory=list)
    next_token: int | None = None  # sampled, not yet decoded
    multibyte_fix: int = 0
    text: bytes = b""
    finish: str | None = None


class BatchGenerator:
    """Owns a second llama.cpp context over the same weights and decodes up to ``n_seq`` requests at once."""

    def __init__(self, llm, n_seq: int = 8, seq_ctx: int | None = None):
        import llama_cpp
        from llama_cpp import _internals as internals

        self._lc = llama_cpp
        self.llm = llm
        self.n_seq = n_seq
        params = llama_cpp.llama_context_params()
        ctypes.memmove(ctypes.byref(params), ctypes.byref(llm.context_params), ctypes.sizeof(params))
        per_seq = llm.n_ctx()
        self.per_seq = per_seq
        self.seq_ctx = seq_ctx or default_seq_ctx(per_seq)
        params.n_ctx = self.seq_ctx * n_seq
        params.n_seq_max = n_seq
        params.kv_unified = False  # one KV stream per slot: logits bitwise equal to a lone decode (module doc)
        self.n_ctx = params.n_ctx
        self.ctx = internals.LlamaContext(model=llm._model, params=params, verbose=False)
        self.n_batch = llm.n_batch
        self.batch = internals.LlamaBatch(n_tokens=self.n_batch, embd=0, n_seq_max=1, verbose=False)
        self.n_vocab = llm.n_vocab()
        self.last_n = int(getattr(llm, "last_n_tokens_size", 64))  # the penalties sampler's window
        self._formatter = self._chat_formatter()
        self._queue: queue.Queue = queue.Queue()
        self._slots: list[list[int]] = [[] for _ in range(n_seq)]  # tokens in each slot's KV cache
        self._closed = False
        self._sampler_lock = threading.Lock()
        self._thread = threading.Thread(target=self._loop, name="glotbench-llamacpp-batch", daemon=True)
        self._thread.start()

    # ------------------------------------------------------------------ requests
    def _chat_formatter(self):
        """llama-cpp-python's formatter for the GGUF's own template, built as ``Llama.__init__`` builds it."""
        llm = self.llm
        if llm.chat_handler is not None or llm.chat_format != "chat_template.default":
            return None
        template = (llm.metadata or {}).get("tokenizer.chat_template")
        return jinja_formatter(llm, template) if template else None

    def supports(self, messages: bool, knobs: dict) -> bool:
        if messages and self._formatter is None:
            return False
        return all(k in SAMPLER_KNOBS or k in ("max_tokens", "stop", "seed") for k in knobs)

    def submit(self, *, messages: list[dict] | None, prompt: str | None, knobs: dict,
               tokens: list[int] | None = None) -> Future | None:
        """Queue one request; the future resolves to ``(text, prompt_tokens, completion_tokens, finish_reason)``.
        None when the prompt and ``max_tokens`` need more cells than a slot's stream has (``seq_ctx``).
        ``tokens``: the prompt already tokenized (a continued assistant turn), instead of messages or prompt."""
        llm = self.llm
        stop = list(knobs.get("stop") or [])
        if tokens is not None:
            tokens = list(tokens)
        elif messages is not None:
            res = self._formatter(messages=messages)
            tokens = llm.tokenize(res.prompt.encode("utf-8"), add_bos=not res.added_special, special=True)
            if res.stop is not None:
                stop = stop + (res.stop if isinstance(res.stop, list) else [res.stop])
        else:
            tokens = llm.tokenize(prompt.encode("utf-8"), special=True) if prompt else [llm.token_bos()]
        if len(tokens) >= self.per_seq:
            raise ValueError(f"Requested tokens ({len(tokens)}) exceed context window of {self.per_seq}")
        max_tokens = knobs.get("max_tokens")
        if max_tokens is None or max_tokens <= 0:
            max_tokens = self.per_seq - len(tokens)
        max_tokens = max_tokens if max_tokens + len(tokens) < self.per_seq else self.per_seq - len(tokens)
        if len(tokens) + max_tokens > self.seq_ctx:
            return None  # more than a slot's KV stream holds: the caller takes the serial path
        kw = {SAMPLER_KNOBS[k]: v for k, v in knobs.items() if k in SAMPLER_KNOBS}
        for k, v in COMPLETION_DEFAULTS.items():
            kw.setdefault(SAMPLER_KNOBS[k], v)
        with self._sampler_lock:  # _init_sampler reads the seed from the Llama object
            llm.set_seed(knobs["seed"]) if knobs.get("seed") is not None else None
            sampler = llm._init_sampler(**kw)
        fut: Future = Future()
        greedy = kw.get("temp") == 0.0 and kw["repeat_penalty"] == 1.0 and kw["presence_penalty"] == 0.0
        self._queue.put(_Job(prompt=list(tokens), max_tokens=max_tokens, stops=[s.encode("utf-8") for s in stop],
                             sampler=sampler, future=fut,
                             greedy_freq=float(kw["frequency_penalty"]) if greedy else None))
        return fut

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._queue.put(None)
            self._thread.join()
            self.batch.close()
            self.ctx.close()

    # ------------------------------------------------------------------ the decode loop
    def _common(self, slot: int, job: _Job) -> int:
        n = 0
        for a, b in zip(self._slots[slot], job.prompt):
            if a != b:
                break
            n += 1
        return n

    def _admit(self, job: _Job, free: list[int]) -> None:
        """Give the job the free slot whose cached tokens share the longest prefix with its prompt;
        when another slot (busy or not) shares a longer one, by at least :data:`COPY_MIN` tokens, its
        stream is copied into the free slot first (a buffer copy instead of decoding the shared
        system prompt and instructions again in every slot)."""
        slot = max(free, key=lambda s: self._common(s, job))
        free.remove(slot)
        src = max(range(self.n_seq), key=lambda s: self._common(s, job))
        if self._common(src, job) >= self._common(slot, job) + COPY_MIN:
            self.ctx.kv_cache_seq_cp(src, slot, -1, -1)  # streams differ: llama.cpp copies the whole stream
            self._slots[slot] = list(self._slots[src])
        # the last prompt token is decoded for its logits, and never alone (see _step): at least two
        keep = max(0, min(self._common(slot, job), len(job.prompt) - 2))
        if not self.ctx.kv_cache_seq_rm(slot, keep, -1):
            self.ctx.kv_cache_seq_rm(slot, 0, -1)
            keep = 0
        self._slots[slot] = job.prompt[:keep]
        job.slot, job.fed = slot, keep

    def _loop(self) -> None:
        active: list[_Job] = []
        waiting: list[_Job] = []
        while True:
            block = not active and not waiting
            try:
                while True:
                    item = self._queue.get(block=block)
                    block = False
                    if item is None:
                        for j in active + waiting:
                            _resolve(j.future, exc=RuntimeError("llama.cpp batch generator closed"))
                        return
                    waiting.append(item)
            except queue.Empty:
                pass
            # a request the caller gave up on (timeout, Ctrl-C) is dropped; its slot keeps what it decoded
            waiting = [j for j in waiting if not j.future.cancelled()]
            active = [j for j in active if not j.future.cancelled()]
            # admit while slots are free (a finished slot keeps its tokens for prefix reuse; each job
            # fits in a slot's own stream, submit checked)
            # One new request per step: its prompt is decoded before the next is admitted, so that
            # one can copy the shared prefix from its slot (_admit), and the generating sequences
            # advance a token between two prompts instead of waiting for all of them.
            free = [s for s in range(self.n_seq) if all(j.slot != s for j in active)]
            if waiting and free:
                job = waiting.pop(0)
                self._admit(job, free)
                active.append(job)
            try:
                self._step(active)
            except Exception as exc:  # a failed decode fails the requests in it, not the thread
                for j in active:
                    self.ctx.kv_cache_seq_rm(j.slot, 0, -1)
                    self._slots[j.slot] = []
                    _resolve(j.future, exc=exc)
                active = []
                continue
            done = [j for j in active if j.finish is not None]
            for j in done:
                active.remove(j)
                _resolve(j.future, (j.text.decode("utf-8", errors="ignore"), len(j.prompt), len(j.out), j.finish))

    def _step(self, active: list[_Job]) -> None:
        """Prompts of newly admitted jobs, then one token for every generating job.

        A job's prompt is decoded as ``Llama.eval`` decodes it: its own tokens only, in chunks of
        ``n_batch``. Beside other sequences' tokens llama.cpp would split it into ubatches with the
        same number of tokens per stream, and a token computed in a one-token ubatch gets other
        attention kernels (logits differ in the last bits). Generated tokens are one per sequence
        either way, so they all share one decode."""
        b = self.batch.batch

        def add(n: int, tok: int, pos: int, seq: int, logits: bool) -> None:
            b.token[n], b.pos[n], b.seq_id[n][0], b.n_seq_id[n], b.logits[n] = tok, pos, seq, 1, logits

        for j in active:
            if j.next_token is not None or j.finish is not None or j.fed >= len(j.prompt):
                continue
            while j.fed < len(j.prompt):
                chunk = j.prompt[j.fed: j.fed + self.n_batch]
                for i, tok in enumerate(chunk):
                    add(i, tok, j.fed + i, j.slot, j.fed + i == len(j.prompt) - 1)
                b.n_tokens = len(chunk)
                self.ctx.decode(self.batch)
                self._slots[j.slot].extend(chunk)
                j.fed += len(chunk)
            self._accept(j, self._pick(j, len(chunk) - 1))
        wants = [j for j in active if j.next_token is not None]
        if not wants:
            return
        for i, j in enumerate(wants):
            add(i, j.next_token, len(j.prompt) + len(j.out) - 1, j.slot, True)
        b.n_tokens = len(wants)
        self.ctx.decode(self.batch)
        for i, j in enumerate(wants):
            self._slots[j.slot].append(j.next_token)
            self._accept(j, self._pick(j, i))

    def _pick(self, j: _Job, row: int) -> int:
        """The next token from logits row ``row``, as the job's llama.cpp sampler chain picks it.

        At temperature 0 with no repeat or presence penalty, llama-cpp-python's chain
        (``_init_sampler``) is the penalties sampler, then greedy: each token among the last
        ``last_n_tokens_size`` picked has ``count * frequency_penalty`` taken off its logit (float32;
        exact here, the presence term being 0), and greedy takes the first highest logit, numpy's
        argmax. Computed here from the row, without the chain copying the whole vocabulary into a
        candidates array for every token (0.3 ms each); tests/test_llamacpp_batch.py compares texts
        with the serial path on MM-Eval, whose tasks set frequency_penalty 1."""
        if j.greedy_freq is None:
            return j.sampler.sample(self.ctx, row)
        import numpy as np

        logits = np.ctypeslib.as_array(self.ctx.get_logits_ith(row), shape=(self.n_vocab,))
        window = j.history[-self.last_n:] if self.last_n > 0 else []
        if window and j.greedy_freq != 0.0:
            logits = logits.copy()
            toks, counts = np.unique(np.asarray(window, dtype=np.int64), return_counts=True)
            logits[toks] -= counts.astype(np.float32) * np.float32(j.greedy_freq)
        token = int(logits.argmax())
        j.history.append(token)
        return token

    def _accept(self, j: _Job, token: int) -> None:
        """One sampled token, handled as ``Llama._create_completion`` handles it."""
        llm = self.llm
        j.next_token = None
        if self._lc.llama_vocab_is_eog(llm._model.vocab, token):
            j.text, j.finish = llm.detokenize(j.out, prev_tokens=j.prompt), "stop"
            return
        j.out.append(token)
        all_text = llm.detokenize(j.out, prev_tokens=j.prompt)
        for k, char in enumerate(all_text[-3:]):
            k = 3 - k
            for num, pattern in [(2, 192), (3, 224), (4, 240)]:
                if num > k and pattern & char == pattern:
                    j.multibyte_fix = num - k
        if j.multibyte_fix > 0:
            j.multibyte_fix -= 1
            j.next_token = token
            return
        hits = [s for s in j.stops if s in all_text]
        if hits:
            j.text, j.finish = all_text[: all_text.index(hits[0])], "stop"
            return
        if len(j.out) >= j.max_tokens:
            j.text, j.finish = llm.detokenize(j.out, prev_tokens=j.prompt), "length"
            return
        j.next_token = token
