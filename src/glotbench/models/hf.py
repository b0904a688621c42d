"""In-process Hugging Face ``transformers`` model: ``--model hf:<local dir or hub id>``, a causal LM or an
encoder-decoder (seq2seq) model, recognised from its config (:mod:`glotbench.models.hf_seq2seq`).

docs/hf-backend.md describes it (batched, shared-prefix generation and log-likelihoods, the ``-M``
options, time limits, chat flattening, sampled answers' dependence on their batch). torch and
transformers are the optional extra ``hf``; they are imported when the model loads.
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
from pathlib import Path
from typing import Any, Callable

from glotbench.errors import ModelError, PermanentModelError
from glotbench.models.backends import construct
from glotbench.models.base import GenRequest, GenResult, LoglikelihoodRequest, LoglikelihoodResult, Model
from glotbench.models.hf_seq2seq import ARCHITECTURES, is_seq2seq
from glotbench.models.llamacpp import file_fingerprint, split_trailing_space

INSTALL_HINT = "pip install 'glotbench[hf]'"
_DTYPES = {"auto": "auto", "float32": "float32", "fp32": "float32", "bfloat16": "bfloat16", "bf16": "bfloat16",
           "float16": "float16", "fp16": "float16"}
# generate() keyword arguments a request's ``extra`` (task generation.extra or --gen-kwargs) may set
_GEN_KNOBS = {"top_k", "min_p", "typical_p", "repetition_penalty", "no_repeat_ngram_size", "length_penalty",
              "num_beams", "do_sample", "min_new_tokens", "frequency_penalty", "presence_penalty"}


def _dir_fingerprint(path: Path, gguf_file: str | None) -> str:
    """A local model's identity: the GGUF's fingerprint, else config + weight files' names, sizes and heads."""
    if gguf_file:
        return file_fingerprint(path / gguf_file)
    h = hashlib.sha256()
    for f in sorted(path.iterdir()):
        if f.is_file() and (f.suffix in {".json", ".safetensors", ".bin", ".model", ".txt", ".jinja"}):
            h.update(f.name.encode())
            h.update(str(f.stat().st_size).encode())
            with f.open("rb") as fh:
                h.update(fh.read(1 << 16))
    return h.hexdigest()[:16]


class _OpenAIPenalty:
    """OpenAI's frequency/presence penalties as a transformers logits processor: each token's logit
    drops by ``frequency_penalty * count + presence_penalty * (count > 0)``, counting the tokens
    generated so far (not the prompt), as the OpenAI API defines them."""

    def __init__(self, prompt_len: int, frequency_penalty: float = 0.0, presence_penalty: float = 0.0):
        self.prompt_len, self.freq, self.pres = prompt_len, frequency_penalty, presence_penalty

    def __call__(self, input_ids, scores):
        import torch

        generated = input_ids[:, self.prompt_len:]
        if generated.shape[1] == 0:
            return scores
        counts = torch.zeros_like(scores)
        counts.scatter_add_(1, generated, torch.ones_like(generated, dtype=scores.dtype))
        return scores - self.freq * counts - self.pres * (counts > 0).to(scores.dtype)


def _cancel_criterion(rows: Callable[[], list[bool]]):
    """A transformers stopping criterion that ends the rows whose requests were given up on."""
    from transformers import StoppingCriteria

    class _GivenUp(StoppingCriteria):
        def __call__(self, input_ids, scores, **kwargs):
            import torch

            return torch.tensor(rows(), dtype=torch.bool, device=input_ids.device)

    return _GivenUp()


def chat_text(tok, messages, template: str | None = None) -> str:
    """The chat prompt as the tokenizer's template writes it: the generation prompt after the last turn,
    or, when the last turn is the assistant's (a task's ``gen_prefix``), that turn left open for the model
    to continue, as lm-eval's HFLM renders it (``continue_final_message``)."""
    from glotbench.models.chat_turns import ends_with_assistant

    msgs = [dict(m) for m in messages]
    kw = {"chat_template": template} if template else {}
    if ends_with_assistant(msgs):
        return tok.apply_chat_template(msgs, add_generation_prompt=False, continue_final_message=True,
                                       tokenize=False, **kw)
    return tok.apply_chat_template(msgs, add_generation_prompt=True, tokenize=False, **kw)


class HFModel(Model):
    known_knobs = frozenset(_GEN_KNOBS)
    knob_aliases = {"repeat_penalty": "repetition_penalty"}  # llama.cpp's name of the same knob
    supports_loglikelihood = True

    def __init__(self, name: str, device: str = "cpu", dtype: str = "auto", batch_size: int = 8,
                 revision: str | None = None, gguf_file: str | None = None, chat: bool | None = None,
                 trust_remote_code: bool = False, seed: int = 0, chat_template: str | None = None,
                 backend: str = "auto", max_length: int | None = None, forced_bos_token: str | None = None,
                 tgt_lang: str | None = None, src_lang: str | None = None):
        try:
            import torch
            import transformers
        except ImportError as exc:
            raise ModelError(f"--model hf:{name} needs torch and transformers: {INSTALL_HINT} [{exc}]") from None
        from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForSeq2SeqLM, AutoTokenizer
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
        self.torch = torch
        local = Path(name).expanduser()
        self.is_local = local.is_dir()
        if not self.is_local and local.suffix == ".gguf" and local.is_file():  # hf:/path/model.gguf
            local, gguf_file, self.is_local = local.parent, local.name, True
        if not self.is_local and not revision:
            raise ModelError(f"model spec 'hf:{name}': not a local directory, so it is a hub id and needs a pinned "
                             "revision (-M revision=<commit sha or tag>) so the run can be reproduced")
        if backend not in ARCHITECTURES:
            raise ModelError(f"model spec 'hf:{name}': backend={backend!r} (known: {', '.join(ARCHITECTURES)})")
        if dtype not in _DTYPES:
            raise ModelError(f"model spec 'hf:{name}': dtype={dtype!r} (known: {', '.join(_DTYPES)})")
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        if device.startswith("cuda") and not torch.cuda.is_available():
            raise ModelError(f"model spec 'hf:{name}': device={device} but torch sees no CUDA device")
        self.name, self.device, self.dtype_name = name, device, _DTYPES[dtype]
        self.batch_size, self.revision, self.gguf_file, self.seed = max(1, int(batch_size)), revision, gguf_file, seed
        self.max_parallel = self.batch_size
        self.timeout_scale = self.batch_size  # a request waits on its whole batch (docs/hf-backend.md)
        src = str(local) if self.is_local else name
        kw: dict[str, Any] = {"revision": revision} if revision else {}
        if gguf_file:
            kw["gguf_file"] = gguf_file
        if trust_remote_code:
            kw["trust_remote_code"] = True
        try:
            config = AutoConfig.from_pretrained(src, **kw)
            found = "seq2seq" if is_seq2seq(config) else "causal"
            self.architecture = found if backend == "auto" else backend
            self.tok = AutoTokenizer.from_pretrained(src, **kw)
            torch_dtype = "auto" if self.dtype_name == "auto" else getattr(torch, self.dtype_name)
            if gguf_file and torch_dtype == "auto":
                torch_dtype = torch.float32  # transformers de-quantises GGUF weights; float32 keeps them exact
            auto_cls = AutoModelForSeq2SeqLM if self.seq2seq else AutoModelForCausalLM
            self.model = auto_cls.from_pretrained(src, dtype=torch_dtype, **kw)
        except (OSError, ValueError, EnvironmentError) as exc:
            raise ModelError(f"cannot load hf:{name}: {' '.join(str(exc).split())[:400]}") from None
        self.model.to(device)
        self.dtype_name = str(self.model.dtype).removeprefix("torch.")  # what "auto" resolved to
        self.model.eval()
        # a decoder-only model is left-padded (generation continues the prompt); an encoder's input is
        # right-padded, as T5 was trained (the mask hides the padding either way)
        self.tok.padding_side = "right" if self.seq2seq else "left"
        if self.tok.pad_token_id is None:
            self.tok.pad_token = self.tok.eos_token
        self.chat_template = chat_template
        has_template = bool(chat_template or getattr(self.tok, "chat_template", None))
        if chat and not has_template:
            raise ModelError(f"hf:{name} has no chat template; leave chat out to run it as a plain-completion model "
                             "or pass --set chat_template=FILE")
        # an encoder-decoder model reads the plain prompt unless chat=true asks for its template
        self.is_chat = (has_template and not self.seq2seq) if chat is None else bool(chat)
        self.continues_assistant_turn = self.is_chat  # chat_text: continue_final_message
        if self.seq2seq:
            self.notice = None if chat is not None else (
                f"hf:{name} is an encoder-decoder model: it reads plain prompts (no chat template)")
        else:
            self.notice = None if has_template or chat is False else (
                f"hf:{name} has no chat template: running it as a plain-completion model")
        self._language_tokens(name, forced_bos_token, tgt_lang, src_lang)
        ident = revision if not self.is_local else _dir_fingerprint(local, gguf_file)
        label = Path(name).name if self.is_local else name
        forced = f"+{backend}" if backend != "auto" and backend != found else ""  # another architecture, other outputs
        self.model_id = (f"hf:{label}{'/' + gguf_file if gguf_file and gguf_file not in label else ''}{forced}"
                         f"{self._language_label()}@{ident}")
        self._flattened = 0  # chat requests rendered as plain text (a model without a chat template)
        self._pending: list[tuple[Any, asyncio.Future]] = []
        self._flusher: asyncio.Task | None = None
        self._thread_lock = threading.Lock()
        self._bos = self.tok.bos_token_id if self.tok.bos_token_id is not None else self.tok.eos_token_id
        # the window of a whole text's log-likelihood (glotbench.models.rolling): -M max_length, else the
        # model's max_position_embeddings (lm-eval's max_length); in the settings when given
        self.max_length = int(max_length) if max_length else None

    @property
    def seq2seq(self) -> bool:
        return self.architecture == "seq2seq"

    def _language_tokens(self, name: str, forced_bos_token: str | None, tgt_lang: str | None,
                         src_lang: str | None) -> None:
        """A translation model's languages (NLLB, M2M100, mBART, multilingual Marian): ``tgt_lang`` (the
        tokenizer's language id: M2M100's ``get_lang_id``, else the token itself, ``ces_Latn``) or
        ``forced_bos_token`` (a token) is forced as the first generated token; ``src_lang`` is the
        tokenizer's source language (the token it puts on the input). A token the tokenizer does not
        know is one line here, before any request (docs/hf-backend.md)."""
        self.forced_bos_token, self.tgt_lang, self.src_lang = forced_bos_token, tgt_lang, src_lang
        self.forced_bos_token_id = None
        if forced_bos_token and tgt_lang:
            raise ModelError(f"model spec 'hf:{name}': give forced_bos_token or tgt_lang, not both")
        if src_lang:
            if not hasattr(self.tok, "src_lang"):
                raise ModelError(f"model spec 'hf:{name}': src_lang={src_lang!r}, but its tokenizer "
                                 f"({type(self.tok).__name__}) takes no source language")
            self.tok.src_lang = src_lang
        wanted = forced_bos_token or tgt_lang
        if not wanted:
            return
        if tgt_lang and callable(getattr(self.tok, "get_lang_id", None)):  # M2M100: cs -> __cs__
            try:
                token_id = self.tok.get_lang_id(tgt_lang)
            except KeyError:
                token_id = None
        else:
            token_id = self.tok.convert_tokens_to_ids(wanted)
        if token_id is None or (token_id == self.tok.unk_token_id and wanted != self.tok.unk_token):
            which = "forced_bos_token" if forced_bos_token else "tgt_lang"
            raise ModelError(f"model spec 'hf:{name}': {which}={wanted!r} is not a token of its tokenizer "
                             f"(a language token such as ces_Latn for NLLB, cs for M2M100)")
        if not self.seq2seq:
            raise ModelError(f"model spec 'hf:{name}': {'forced_bos_token' if forced_bos_token else 'tgt_lang'} "
                             f"applies to encoder-decoder (translation) models; this one is decoder-only")
        self.forced_bos_token_id = int(token_id)

    def _language_label(self) -> str:
        """The languages in the model's id (they change its outputs, so its cache keys)."""
        parts = [f"bos={self.forced_bos_token}" if self.forced_bos_token else "",
                 f"tgt={self.tgt_lang}" if self.tgt_lang else "", f"src={self.src_lang}" if self.src_lang else ""]
        return "".join(f"+{p}" for p in parts if p)

    # ------------------------------------------------------------------ identity
    def settings(self) -> dict:
        where = {"path": str(Path(self.name).expanduser())} if self.is_local else {"hub_id": self.name}
        out = {"model_id": self.model_id, "backend": "hf", **where,  # a local path is left out of the run identity
               "architecture": self.architecture, "dtype": self.dtype_name,
               "chat": self.is_chat, "revision": self.revision, "gguf_file": self.gguf_file}
        if self.chat_template:
            out["chat_template_sha256"] = hashlib.sha256(self.chat_template.encode()).hexdigest()[:16]
        if self.max_length:  # only when set: existing runs keep their model fingerprint
            out["max_length"] = self.max_length
        for k in ("forced_bos_token", "tgt_lang", "src_lang"):  # only when set, as max_length
            if getattr(self, k):
                out[k] = getattr(self, k)
        return out

    def count_tokens(self, text: str) -> int | None:
        return len(self.tok(text, add_special_tokens=False).input_ids)

    def run_notes(self) -> list[str]:
        if not self._flattened:
            return []
        return [f"{self.model_id} has no chat template: {self._flattened} chat request(s) were sent as plain text "
                "(system prompt, each user turn with its answer on the next line, the last user turn; blocks "
                "separated by blank lines)"]

    # ------------------------------------------------------------------ batching
    async def _submit(self, item: Any):
        fut = asyncio.get_running_loop().create_future()
        self._pending.append((item, fut))
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.ensure_future(self._flush())
        return await fut

    async def _flush(self) -> None:
        while self._pending:
            for _ in range(3):  # let every request sent in this tick (an item's options) join the batch
                await asyncio.sleep(0)
            batch, self._pending = self._pending[: self.batch_size], self._pending[self.batch_size:]
            batch = [(it, f) for it, f in batch if not f.done()]
            if not batch:
                continue
            # given_up[i]: request i was cancelled (its timeout, Ctrl-C) while the batch runs; set in the
            # event loop's thread, read by the worker between decoding steps
            given_up = [False] * len(batch)
            for i, (_, f) in enumerate(batch):
                f.add_done_callback(lambda f, i=i: given_up.__setitem__(i, f.cancelled()))
            try:
                outs = await asyncio.to_thread(self._locked, self._run_batch, [it for it, _ in batch], given_up)
            except Exception as exc:  # noqa: BLE001 - every request of the batch gets the error
                for _, f in batch:
                    if not f.done():
                        f.set_exception(exc)
                continue
            for (_, f), out in zip(batch, outs):
                if not f.done():
                    f.set_result(out)

    def _locked(self, fn, *args):
        with self._thread_lock:
            with self.torch.inference_mode():
                return fn(*args)

    def _run_batch(self, items: list, given_up: list[bool] | None = None) -> list:
        given_up = given_up if given_up is not None else [False] * len(items)
        out: list = [None] * len(items)
        gens = [(i, r) for i, r in enumerate(items) if isinstance(r, GenRequest)]
        lls = [(i, r) for i, r in enumerate(items) if isinstance(r, LoglikelihoodRequest)]
        groups: dict[tuple, list[tuple[int, GenRequest]]] = {}
        for i, r in gens:
            d = r.to_dict()
            groups.setdefault(repr({k: v for k, v in d.items() if k not in ("messages", "prompt")}), []).append((i, r))
        for members in groups.values():
            rows = [i for i, _ in members]
            if all(given_up[i] for i in rows):
                continue
            for i, res in zip(rows, self._generate_batch([r for _, r in members],
                                                         lambda rows=rows: [given_up[i] for i in rows])):
                out[i] = res
        by_ctx: dict[str, list[tuple[int, LoglikelihoodRequest]]] = {}
        for i, r in lls:
            if not r.context and not self.seq2seq:  # log P(text): its own windows
                if not given_up[i]:
                    out[i] = self._score_text(r.continuation)
                continue
            by_ctx.setdefault(r.context, []).append((i, r))
        for members in by_ctx.values():
            if all(given_up[i] for i, _ in members):
                continue  # every option of this context was given up on
            for (i, _), res in zip(members, self._score_options([r for _, r in members])):
                out[i] = res
        return out

    # ------------------------------------------------------------------ generate
    def render(self, request: GenRequest) -> str:
        if request.messages is None:
            if request.prompt is None:
                raise PermanentModelError(f"{self.model_id}: request has neither messages nor prompt")
            return request.prompt
        if not self.is_chat:  # a plain-text model: the messages as one plain prompt (counted for the run's note)
            from glotbench.prompts.render import plain_from_messages

            self._flattened += 1
            return plain_from_messages(request.messages)
        return chat_text(self.tok, request.messages, self.chat_template)

    def _generate_batch(self, reqs: list[GenRequest],
                        given_up: Callable[[], list[bool]] | None = None) -> list[GenResult]:
        from transformers import LogitsProcessorList, StoppingCriteriaList

        torch = self.torch
        texts = [self.render(r) for r in reqs]
        r0 = reqs[0]
        # a rendered chat prompt already holds its special tokens (BOS ...): do not add them twice; an
        # encoder reads its input with them (T5's closing </s>), as lm-eval encodes seq2seq prompts
        special = self.seq2seq or r0.messages is None or not self.is_chat
        enc = self.tok(texts, return_tensors="pt", padding=True, add_special_tokens=special)
        enc = {k: v.to(self.device) for k, v in enc.items()}
        kw: dict[str, Any] = {"max_new_tokens": r0.max_tokens, "pad_token_id": self.tok.pad_token_id}
        if self.forced_bos_token_id is not None:  # the target language's token first (NLLB, M2M100, mBART)
            kw["forced_bos_token_id"] = self.forced_bos_token_id
        if given_up is not None:
            kw["stopping_criteria"] = StoppingCriteriaList([_cancel_criterion(given_up)])
        if r0.temperature and r0.temperature > 0:
            kw.update(do_sample=True, temperature=r0.temperature, top_p=1.0 if r0.top_p is None else r0.top_p, top_k=0)
            torch.manual_seed((self.seed if r0.seed is None else r0.seed) + r0.sample_index)
        else:
            kw.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        if r0.stop:
            kw.update(stop_strings=list(r0.stop), tokenizer=self.tok)
        penalties = {"frequency_penalty": 0.0, "presence_penalty": 0.0}
        for k, v in r0.extra:
            k = self.knob_name(k)
            if k not in _GEN_KNOBS:
                raise PermanentModelError(f"{self.model_id}: unknown generation knob {k!r} "
                                          f"(known: {', '.join(sorted(_GEN_KNOBS))})")
            if k in ("frequency_penalty", "presence_penalty"):
                penalties[k] = float(v)
            else:
                kw[k] = v
        # an encoder-decoder's output sequences hold the decoder start token, then the answer; a causal
        # model's hold the (padded) prompt, then the answer
        n_in = 1 if self.seq2seq else enc["input_ids"].shape[1]
        if any(penalties.values()):
            kw["logits_processor"] = LogitsProcessorList([_OpenAIPenalty(n_in, **penalties)])
        seqs = self.model.generate(**enc, **kw)
        results = []
        eos = self.tok.eos_token_id
        for row, r in enumerate(reqs):
            new = seqs[row, n_in:].tolist()
            if self.forced_bos_token_id is not None and new[:1] == [self.forced_bos_token_id]:
                new = new[1:]  # the forced language token is not part of the answer
            n_prompt = int(enc["attention_mask"][row].sum())
            finish = "length"
            if eos in new:
                new, finish = new[: new.index(eos)], "stop"
            while new and new[-1] == self.tok.pad_token_id:
                new.pop()
            text = self.tok.decode(new, skip_special_tokens=True)
            for s in r.stop:
                if s in text:
                    text, finish = text[: text.index(s)], "stop"
            results.append(GenResult(text=text, input_tokens=n_prompt, output_tokens=len(new), finish_reason=finish,
                                     raw={"model": self.model_id}))
        return results

    async def generate(self, request: GenRequest) -> GenResult:
        return await self._submit(request)

    # ------------------------------------------------------------------ loglikelihood
    def _encode(self, text: str) -> list[int]:
        return self.tok(text, add_special_tokens=True).input_ids

    def encode_pair(self, context: str, continuation: str) -> tuple[list[int], list[int]]:
        if self.seq2seq:
            from glotbench.models.hf_seq2seq import encode_pair

            return encode_pair(self.tok, context, continuation)
        context, continuation = split_trailing_space(context, continuation)
        if not context:
            return [self._bos], self.tok(continuation, add_special_tokens=False).input_ids
        ctx = self._encode(context)
        return ctx, self._encode(context + continuation)[len(ctx):]

    def _score_options(self, reqs: list[LoglikelihoodRequest]) -> list[LoglikelihoodResult]:
        """All continuations of one context: the context's forward pass once, its KV cache repeated over
        the options, then every continuation (right-padded) in one batch."""
        if self.seq2seq:
            from glotbench.models.hf_seq2seq import score_options

            return score_options(self.model, self.tok, self.device, self.model_id, reqs)
        torch = self.torch
        pairs = [self.encode_pair(r.context, r.continuation) for r in reqs]
        # the usual case: one shared context tokenisation; a continuation that merges with the context's
        # last token (no leading space) tokenises the context differently, so it is scored on its own
        shared = pairs[0][0]
        if any(ctx != shared for ctx, _ in pairs):
            out = []
            for r in reqs:
                out.extend(self._score_options([r]))
            return out
        conts = [c for _, c in pairs]
        n_pos = getattr(self.model.config, "max_position_embeddings", None)
        longest = len(shared) + max((len(c) for c in conts), default=0)
        if n_pos and longest > n_pos:
            raise PermanentModelError(f"{self.model_id}: {longest} tokens exceed the context window ({n_pos})")
        ctx_ids = torch.tensor([shared], device=self.device)
        first = self.model(input_ids=ctx_ids, use_cache=True)
        first_lp = torch.log_softmax(first.logits[0, -1].double(), dim=-1)
        first_arg = int(first.logits[0, -1].argmax())
        rest_len = max((len(c) - 1 for c in conts), default=0)
        rest_lp = None
        if rest_len > 0:
            n = len(conts)
            cache = first.past_key_values
            cache.batch_repeat_interleave(n)
            pad = self.tok.pad_token_id
            ids = torch.full((n, rest_len), pad, dtype=torch.long, device=self.device)
            mask = torch.zeros((n, len(shared) + rest_len), dtype=torch.long, device=self.device)
            mask[:, : len(shared)] = 1
            for j, c in enumerate(conts):
                tail = c[:-1]
                if tail:
                    ids[j, : len(tail)] = torch.tensor(tail, device=self.device)
                    mask[j, len(shared): len(shared) + len(tail)] = 1
            pos = torch.arange(len(shared), len(shared) + rest_len, device=self.device).expand(n, -1)
            logits = self.model(input_ids=ids, attention_mask=mask, past_key_values=cache, position_ids=pos,
                                use_cache=True).logits
            rest_lp = torch.log_softmax(logits.double(), dim=-1)
            rest_arg = logits.argmax(dim=-1)
        results = []
        for j, c in enumerate(conts):
            if not c:
                results.append(LoglikelihoodResult(logprob=0.0, is_greedy=True, n_tokens=0))
                continue
            lp = float(first_lp[c[0]])
            greedy = first_arg == c[0]
            for k, tok in enumerate(c[1:]):
                lp += float(rest_lp[j, k, tok])
                greedy = greedy and int(rest_arg[j, k]) == tok
            results.append(LoglikelihoodResult(logprob=lp, is_greedy=bool(greedy), n_tokens=len(c)))
        return results

    def window(self) -> int | None:
        """The most tokens one forward pass takes: -M max_length, else max_position_embeddings."""
        return self.max_length or getattr(self.model.config, "max_position_embeddings", None)

    def _score_text(self, text: str) -> LoglikelihoodResult:
        """log P(text): the first token after BOS (EOS where there is none), in lm-eval's disjoint
        windows of :meth:`window` tokens (glotbench.models.rolling)."""
        from glotbench.models.rolling import rolling_windows

        torch = self.torch
        tokens = self.tok(text, add_special_tokens=False).input_ids
        total, greedy = 0.0, True
        for ctx, cont in rolling_windows(tokens, self._bos, self.window() or len(tokens) + 1):
            inp = torch.tensor([ctx + cont[:-1]], device=self.device)
            logits = self.model(input_ids=inp).logits[0, len(ctx) - 1:]
            lp = torch.log_softmax(logits.double(), dim=-1)
            target = torch.tensor(cont, device=self.device)
            total += float(lp[torch.arange(len(cont), device=self.device), target].sum())
            greedy = greedy and bool((logits.argmax(dim=-1) == target).all())
        return LoglikelihoodResult(logprob=total, is_greedy=greedy, n_tokens=len(tokens))

    async def loglikelihood(self, request: LoglikelihoodRequest) -> LoglikelihoodResult:
        return await self._submit(request)

    async def aclose(self) -> None:
        def drop():
            self.model = None

        await asyncio.to_thread(self._locked, drop)  # never while a batch still runs in the worker thread


def from_spec(spec: str, rest: str, *, base_url=None, api_key_env=None, timeout=None, **kw) -> Model:
    """``hf:<local directory or hub id>``: a transformers causal LM or encoder-decoder model, in-process."""
    return construct(spec, HFModel, rest, **kw)
