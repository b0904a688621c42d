"""Counting prompt tokens: exactly where a tokenizer is at hand offline, else an approximation
that says so.

Order of preference in :func:`get_token_counter`:

1. a ``count_tokens`` callable you pass (``str -> int``): a backend's ``Model.count_tokens``
   (the embedded GGUF model has one; a backend without an offline tokenizer returns None and
   is skipped, with a note) or :func:`llama_cpp_counter` over a ``llama_cpp.Llama``;
2. ``tiktoken`` for an OpenAI model whose price entry names ``tokenizer: tiktoken:<encoding>``,
   but only when that encoding file is already in tiktoken's local cache: tiktoken downloads
   encodings on first use, and an estimate must not reach the network (``allow_download=True``
   lifts that). Any failure falls through to 3;
3. ``ceil(chars / 4)``, flagged ``approximate=True`` with the reason. Four characters per token is
   the usual rule of thumb for English; Czech, Hungarian and especially Mongolian Cyrillic and
   Chinese usually need more tokens per character, so treat it as a lower-bound guess.
"""

from __future__ import annotations

import hashlib
import math
import os
import tempfile
from dataclasses import dataclass
from typing import Any, Callable

CHARS_PER_TOKEN = 4

# Where tiktoken fetches its encodings (tiktoken_ext/openai_public.py); the cache file name is
# the SHA-1 of this URL (tiktoken/load.py, read_file_cached).
_TIKTOKEN_BLOBS = {
    "cl100k_base": "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
    "o200k_base": "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
    "p50k_base": "https://openaipublic.blob.core.windows.net/encodings/p50k_base.tiktoken",
    "r50k_base": "https://openaipublic.blob.core.windows.net/encodings/r50k_base.tiktoken",
}


@dataclass(frozen=True)
class TokenCounter:
    count: Callable[[str], int]
    method: str  # "custom", "tiktoken:cl100k_base", "llama.cpp", "chars/4"
    approximate: bool
    note: str = ""

    def __call__(self, text: str) -> int:
        return self.count(text)


def approximate_counter(note: str = "") -> TokenCounter:
    return TokenCounter(
        count=lambda s: math.ceil(len(s) / CHARS_PER_TOKEN),
        method=f"chars/{CHARS_PER_TOKEN}",
        approximate=True,
        note=note or f"no tokenizer available: approximated as ceil(characters / {CHARS_PER_TOKEN})",
    )


def tiktoken_cached(encoding: str) -> bool:
    """Is tiktoken's file for ``encoding`` already in its local cache (no download needed)?"""
    blob = _TIKTOKEN_BLOBS.get(encoding)
    if blob is None:
        return False
    if "TIKTOKEN_CACHE_DIR" in os.environ:
        cache_dir = os.environ["TIKTOKEN_CACHE_DIR"]
    elif "DATA_GYM_CACHE_DIR" in os.environ:
        cache_dir = os.environ["DATA_GYM_CACHE_DIR"]
    else:
        cache_dir = os.path.join(tempfile.gettempdir(), "data-gym-cache")
    if not cache_dir:
        return False
    return os.path.exists(os.path.join(cache_dir, hashlib.sha1(blob.encode()).hexdigest()))


def tiktoken_counter(encoding: str, allow_download: bool = False) -> TokenCounter:
    """Exact OpenAI counts, or the approximation (with the reason) when tiktoken can't load."""
    try:
        import tiktoken
    except ImportError:
        return approximate_counter(f"tiktoken is not installed; approximated {encoding} as ceil(characters / 4)")
    if not allow_download and not tiktoken_cached(encoding):
        return approximate_counter(
            f"tiktoken encoding {encoding} is not cached offline; approximated as ceil(characters / 4)"
        )
    try:
        enc = tiktoken.get_encoding(encoding)
    except Exception as err:  # network, hash mismatch, unknown encoding...
        return approximate_counter(
            f"tiktoken could not load {encoding} ({type(err).__name__}); approximated as ceil(characters / 4)"
        )
    return TokenCounter(lambda s: len(enc.encode(s, disallowed_special=())), f"tiktoken:{encoding}", False)


def llama_cpp_counter(llm: Any) -> TokenCounter:
    """Count with a llama.cpp model (``llama_cpp.Llama``, e.g. the embedded GGUF model).

    ``Llama(model_path, vocab_only=True)`` loads only the tokenizer, which is fast. The BOS token
    is not counted; chat-template tokens are not added (see ``per_request_overhead``).
    """

    def count(text: str) -> int:
        return len(llm.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    return TokenCounter(count, "llama.cpp", False)


def get_token_counter(
    tokenizer: str | None = None,
    count_tokens: Callable[[str], int] | TokenCounter | None = None,
    allow_download: bool = False,
) -> TokenCounter:
    """Pick the best counter: ``count_tokens`` > ``tiktoken:<enc>`` (if cached) > chars/4."""
    if isinstance(count_tokens, TokenCounter):
        return count_tokens
    skipped = ""
    if count_tokens is not None:
        # Model.count_tokens returns None when the backend has no offline tokenizer.
        if count_tokens("probe") is not None:
            return TokenCounter(count_tokens, _name_of(count_tokens), False)
        skipped = f"{_name_of(count_tokens)} has no offline tokenizer; "
    if tokenizer and tokenizer.startswith("tiktoken:"):
        c = tiktoken_counter(tokenizer.split(":", 1)[1], allow_download)
        return TokenCounter(c.count, c.method, c.approximate, skipped + c.note) if skipped else c
    if tokenizer:
        return approximate_counter(
            f"{skipped}tokenizer {tokenizer!r} is not available offline; approximated as ceil(characters / 4)"
        )
    return approximate_counter(skipped + "no tokenizer available: approximated as ceil(characters / 4)" if skipped else "")


def _name_of(fn: Callable) -> str:
    owner = getattr(fn, "__self__", None)
    if owner is not None:
        return f"{type(owner).__name__}.{getattr(fn, '__name__', 'count_tokens')}"
    return getattr(fn, "__name__", "custom")
