"""Model spec strings -> backends."""

from __future__ import annotations

import importlib.util

import pytest

from glotbench.errors import ModelError
from glotbench.models.anthropic_api import AnthropicModel
from glotbench.models.openai_compat import OpenAICompatModel
from glotbench.models.registry import load_model

needs_llama = pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="llama-cpp-python not installed")


@needs_llama
@pytest.mark.parametrize("spec", [None, "embedded"])
def test_default_is_the_embedded_smollm2(spec):
    from glotbench.models.embedded import default_gguf_path

    try:
        path = default_gguf_path()
    except ModelError as exc:
        pytest.skip(str(exc))
    m = load_model(spec, n_ctx=512)
    assert m.model_id.startswith("llamacpp:SmolLM2-135M-Instruct.Q4_1.gguf@")
    same = load_model(f"llamacpp:{path}", n_ctx=512, chat=False)
    assert same.model_id == m.model_id and not same.is_chat


def test_missing_gguf_names_the_path(tmp_path):
    missing = tmp_path / "nope.gguf"
    with pytest.raises(ModelError, match=f"GGUF file not found: {missing}"):
        load_model(f"llamacpp:{missing}")


@pytest.mark.parametrize("spec", ["gpt5", "foo:bar", "openai:", "anthropic"])
def test_bad_specs_name_the_spec(spec):
    with pytest.raises(ModelError, match="model spec"):
        load_model(spec)


def test_openai_compatible_aliases(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    m = load_model("openai:gpt-4o-mini", timeout=5)
    assert isinstance(m, OpenAICompatModel) and m.model_id == "openai:gpt-4o-mini@https://api.openai.com/v1"
    assert m.timeout == 5
    o = load_model("ollama:qwen2.5:0.5b")
    assert o.model_id == "openai:qwen2.5:0.5b@http://127.0.0.1:11434/v1"
    v = load_model("vllm:Qwen/Qwen2.5-7B", base_url="http://gpu:8000/v1/", logprobs_trusted=True, max_parallel=32)
    assert v.base_url == "http://gpu:8000/v1" and v.supports_loglikelihood and v.max_parallel == 32
    with pytest.raises(ModelError, match="needs base_url"):
        load_model("vllm:Qwen/Qwen2.5-7B")


def test_unknown_option_is_a_model_error(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with pytest.raises(ModelError, match="openai:x"):
        load_model("openai:x", n_ctx=4096)


def test_anthropic(monkeypatch):
    monkeypatch.setenv("MY_KEY", "sk-ant-test")
    m = load_model("anthropic:claude-sonnet-4-5", api_key_env="MY_KEY")
    assert isinstance(m, AnthropicModel) and m.model_id == "anthropic:claude-sonnet-4-5"
