"""Tiny transformers checkpoints made offline, for tests of the ``hf:`` backend: random weights,
a ByT5 tokenizer (bytes: no vocabulary file), saved by ``save_pretrained`` in the Hub's cache layout
(``models--org--name/snapshots/<sha>/`` and ``refs/main``), so one folder serves as a local directory
(the snapshot) and as a hub id with a pinned revision (``HF_HUB_CACHE``)."""

from __future__ import annotations

from pathlib import Path

SHA = "5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed"


def _hub_folder(root: Path, repo_id: str) -> Path:
    repo = root / f"models--{repo_id.replace('/', '--')}"
    snap = repo / "snapshots" / SHA
    snap.mkdir(parents=True, exist_ok=True)
    (repo / "refs").mkdir(exist_ok=True)
    (repo / "refs" / "main").write_text(SHA)
    return snap


def make_tiny_t5(root: Path, repo_id: str = "glotbench-test/tiny-byt5", seed: int = 0) -> Path:
    """A ByT5-style ``T5ForConditionalGeneration`` (2+2 layers, d_model 32) under ``root`` in the hub layout;
    returns the snapshot folder."""
    import torch
    from transformers import ByT5Tokenizer, T5Config, T5ForConditionalGeneration

    snap = _hub_folder(Path(root), repo_id)
    torch.manual_seed(seed)
    config = T5Config(vocab_size=384, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_decoder_layers=2, num_heads=4,
                      relative_attention_num_buckets=8, feed_forward_proj="gated-gelu", tie_word_embeddings=False,
                      pad_token_id=0, eos_token_id=1, decoder_start_token_id=0)
    T5ForConditionalGeneration(config).eval().save_pretrained(snap)
    ByT5Tokenizer().save_pretrained(snap)
    return snap


def make_tiny_causal(root: Path, repo_id: str = "glotbench-test/tiny-byte-llama", seed: int = 0) -> Path:
    """A decoder-only ``LlamaForCausalLM`` of the same size with the same byte tokenizer (no chat template)."""
    import torch
    from transformers import ByT5Tokenizer, LlamaConfig, LlamaForCausalLM

    snap = _hub_folder(Path(root), repo_id)
    torch.manual_seed(seed)
    config = LlamaConfig(vocab_size=384, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                         num_key_value_heads=4, max_position_embeddings=4096, pad_token_id=0, eos_token_id=1,
                         bos_token_id=1, tie_word_embeddings=False)
    LlamaForCausalLM(config).eval().save_pretrained(snap)
    ByT5Tokenizer().save_pretrained(snap)
    return snap


LANGUAGE_TOKENS = ("ces_Latn", "hun_Latn", "eng_Latn")


def make_tiny_marian(root: Path, repo_id: str = "glotbench-test/tiny-marian", seed: int = 0) -> Path:
    """A ``MarianMTModel`` (1+1 layers, d_model 32) with the byte tokenizer plus NLLB-style language tokens
    (:data:`LANGUAGE_TOKENS`, special tokens: ``forced_bos_token`` / ``tgt_lang`` name them); a Marian
    tokenizer needs sentencepiece, which is not a dependency. Returns the snapshot folder."""
    import torch
    from transformers import ByT5Tokenizer, MarianConfig, MarianMTModel

    snap = _hub_folder(Path(root), repo_id)
    torch.manual_seed(seed)
    tok = ByT5Tokenizer(extra_ids=0, additional_special_tokens=list(LANGUAGE_TOKENS))
    config = MarianConfig(vocab_size=len(tok), d_model=32, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
                          decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64, max_position_embeddings=512,
                          pad_token_id=0, eos_token_id=1, decoder_start_token_id=0, forced_eos_token_id=1)
    MarianMTModel(config).eval().save_pretrained(snap)
    tok.save_pretrained(snap)
    return snap
