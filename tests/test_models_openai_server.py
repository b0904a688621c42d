"""The OpenAI-compatible backend against a real llama.cpp server running the embedded model."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from glotbench.errors import PermanentModelError
from glotbench.models.base import GenRequest, LoglikelihoodRequest
from glotbench.models.registry import load_model

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest_llama_server import embedded_llama_server

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def llama_server():
    with embedded_llama_server() as served:
        yield served


def run(coro):
    return asyncio.run(coro)


def test_chat_against_real_server(llama_server):
    base_url, path = llama_server
    model = load_model(f"openai:{path.name}", base_url=base_url, api_key_env="GLOTBENCH_TEST_NO_SUCH_KEY")
    req = GenRequest(messages=({"role": "user", "content": "Монгол улсын нийслэл хот аль вэ?"},), max_tokens=16)
    res = run(model.generate(req))
    assert res.text.strip()
    assert res.input_tokens > 5 and 0 < res.output_tokens <= 16
    assert res.finish_reason in {"stop", "length"}
    assert model.model_id == f"openai:{path.name}@{base_url}"


def test_plain_completion_against_real_server(llama_server):
    base_url, path = llama_server
    model = load_model(f"openai:{path.name}", base_url=base_url, chat=False)
    assert not model.is_chat
    res = run(model.generate(GenRequest(prompt="1, 2, 3, 4,", max_tokens=8, stop=(" 7",))))
    assert "5" in res.text and " 7" not in res.text


def test_same_greedy_text_as_embedded_backend(llama_server):
    """One GGUF, two routes (server vs in-process): greedy output must agree -- once the server's
    default repeat_penalty=1.1 is switched off (docs/footguns.md)."""
    base_url, path = llama_server
    server = load_model(f"openai:{path.name}", base_url=base_url)
    local = load_model("embedded")
    req = GenRequest(prompt="The capital of France is", max_tokens=12)
    plain = GenRequest(prompt=req.prompt, max_tokens=12, extra=(("repeat_penalty", 1.0),))
    assert run(server.generate(plain)).text == run(local.generate(req)).text


def test_loglikelihood_is_refused_unless_trusted(llama_server):
    base_url, path = llama_server
    model = load_model(f"openai:{path.name}", base_url=base_url)
    assert not model.supports_loglikelihood
    with pytest.raises(PermanentModelError):
        run(model.loglikelihood(LoglikelihoodRequest("The capital of France is", " Paris")))
