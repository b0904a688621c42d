"""The embedded model and a llama.cpp server (llama-cpp-python's) on the same GGUF give the same
greedy tokens for the same rendered prompt, one sequence at a time, once the server is sent
glotbench's neutral sampling. The server's own defaults are not neutral: repeat_penalty 1.1 for
every request (llama_cpp/server/types.py), which llama-cpp-python applies before the greedy pick
even at temperature 0, so the two paths part where the greedy answer repeats a recent token
(docs/footguns.md, "Two paths of one model")."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from conftest_llama_server import embedded_llama_server
from glotbench.models.base import GenRequest

pytestmark = pytest.mark.slow

PROMPTS = [
    "Count from one to twelve in words: one, two, three,",
    "Монгол улсын нийслэл хот бол",
    "Question: Which planet is the largest in the solar system?\nA. Mars\nB. Jupiter\nC. Venus\nD. Mercury\nAnswer:",
    "Repeat after me: the cat sat on the mat, the cat sat on the mat, the cat",
]
MAX_TOKENS = 24


def _server(base: str, prompt: str, **extra) -> str:
    body = {"prompt": prompt, "max_tokens": MAX_TOKENS, "temperature": 0.0, **extra}
    r = httpx.post(f"{base}/completions", json=body, timeout=300)
    r.raise_for_status()
    return r.json()["choices"][0]["text"]


def test_embedded_and_server_agree_token_for_token_with_neutral_sampling():
    from glotbench.models.llamacpp import LlamaCppModel

    with embedded_llama_server() as (base, path):
        model = LlamaCppModel(path, n_ctx=2048, chat=False, n_seq=1)  # serial: one sequence at a time
        try:
            embedded = [asyncio.run(model.generate(GenRequest(prompt=p, max_tokens=MAX_TOKENS, temperature=0.0))).text
                        for p in PROMPTS]
        finally:
            asyncio.run(model.aclose())
        neutral = [_server(base, p, repeat_penalty=1.0) for p in PROMPTS]  # the one knob that differs under greedy
        defaults = [_server(base, p) for p in PROMPTS]
    assert neutral == embedded
    # what the server's defaults change (printed with -s; the count depends on the prompts)
    print(f"server defaults (repeat_penalty 1.1) agree on {sum(a == b for a, b in zip(defaults, embedded))} "
          f"of {len(PROMPTS)} prompts: {[(a, b) for a, b in zip(defaults, embedded) if a != b]}")
