"""Encoder-decoder checkpoints in the ``hf:`` backend (FLAN-T5, mT0, mT5, Aya-101, BART, NLLB...).

* **Which models**: a config with ``is_encoder_decoder`` or a model type transformers lists for
  ``AutoModelForSeq2SeqLM`` (lm-eval's ``HFLM._get_backend`` rule), or ``-M backend=seq2seq``.
* **Prompts**: the encoder reads the plain prompt with the tokenizer's special tokens (T5: a closing
  ``</s>``), as lm-eval's seq2seq branch encodes it; the model gets no chat template.
* **Loglikelihood** (lm-eval's seq2seq rule, ``HFLM._encode_pair`` / ``_loglikelihood_tokens``): the
  context's trailing whitespace moves onto the continuation; the context, encoded with special tokens,
  is the encoder input (an empty context: the BOS token, else EOS); the continuation, encoded alone
  without special tokens, is the decoder's target, teacher-forced from the decoder start token; its
  log-probability is the sum of the decoder's log-softmax at each target token, and it is greedy when
  each target token is the argmax. The options of one context share one encoder pass; their decoder
  inputs go through the decoder in one right-padded batch.
"""

from __future__ import annotations

from typing import Any

from glotbench.errors import PermanentModelError
from glotbench.models.base import LoglikelihoodRequest, LoglikelihoodResult
from glotbench.models.llamacpp import split_trailing_space

ARCHITECTURES = ("auto", "causal", "seq2seq")


def is_seq2seq(config: Any) -> bool:
    """An encoder-decoder config (lm-eval's test: the model type is one AutoModelForSeq2SeqLM knows)."""
    from transformers.models.auto.modeling_auto import MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES

    return bool(getattr(config, "is_encoder_decoder", False)) or (
        getattr(config, "model_type", None) in MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES)


def encode_pair(tok, context: str, continuation: str) -> tuple[list[int], list[int]]:
    """(encoder input, decoder target) token ids of one option, by lm-eval's seq2seq rule."""
    context, continuation = split_trailing_space(context, continuation)
    cont = tok(continuation, add_special_tokens=False).input_ids
    if not context:
        prefix = tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id
        return [prefix], cont
    return tok(context, add_special_tokens=True).input_ids, cont


def _max_positions(config) -> int | None:
    return getattr(config, "max_position_embeddings", None)  # T5 has none (relative positions)


def score_options(model, tok, device: str, model_id: str, reqs: list[LoglikelihoodRequest]) -> list[LoglikelihoodResult]:
    """Every option of one context: the encoder once, then all decoder targets in one batch."""
    import torch
    from transformers.modeling_outputs import BaseModelOutput

    pairs = [encode_pair(tok, r.context, r.continuation) for r in reqs]
    ctx = pairs[0][0]  # the same context string, so the same encoder input
    conts = [c for _, c in pairs]
    longest = max((len(c) for c in conts), default=0)
    n_pos = _max_positions(model.config)
    if n_pos and max(len(ctx), longest) > n_pos:
        raise PermanentModelError(f"{model_id}: {max(len(ctx), longest)} tokens exceed the model's {n_pos} positions")
    results: list = [None] * len(reqs)
    scored = [j for j, c in enumerate(conts) if c]
    for j, c in enumerate(conts):
        if not c:
            results[j] = LoglikelihoodResult(logprob=0.0, is_greedy=True, n_tokens=0)
    if not scored:
        return results
    ids = torch.tensor([ctx], device=device)
    mask = torch.ones_like(ids)
    hidden = model.get_encoder()(input_ids=ids, attention_mask=mask).last_hidden_state
    n = len(scored)
    labels = torch.full((n, longest), -100, dtype=torch.long, device=device)  # the model shifts them right
    for row, j in enumerate(scored):
        labels[row, : len(conts[j])] = torch.tensor(conts[j], device=device)
    out = model(encoder_outputs=BaseModelOutput(last_hidden_state=hidden.expand(n, -1, -1)),
                attention_mask=mask.expand(n, -1), labels=labels)
    logp = torch.log_softmax(out.logits.double(), dim=-1)
    greedy = out.logits.argmax(dim=-1)
    for row, j in enumerate(scored):
        c = torch.tensor(conts[j], device=device)
        k = len(conts[j])
        lp = float(logp[row, torch.arange(k, device=device), c].sum())
        results[j] = LoglikelihoodResult(logprob=lp, is_greedy=bool((greedy[row, :k] == c).all()), n_tokens=k)
    return results
