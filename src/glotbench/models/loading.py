"""A run's models from its settings: the model (``--model``, ``-M``, ``--base-url``,
``--chat-template``), the judge (``--judge``, ``--judge-args``) and, before any item is read, the
model when building it loads no weights and sends nothing (``light``)."""

from __future__ import annotations

from pathlib import Path

from glotbench.errors import GlotbenchError
from glotbench.models.base import Model
from glotbench.settings import RunSettings

REPLICA_BACKENDS = ("openai", "vllm", "ollama")  # backends that spread requests over several --base-url replicas


def load_model_from_config(cfg: RunSettings) -> Model:
    from glotbench.models.registry import load_cli_model

    kw = dict(cfg.model_args)
    if cfg.chat_template:
        kw["chat_template"] = read_chat_template(cfg.chat_template)
    if cfg.base_url:
        backend = (cfg.model or "").partition(":")[0].lower()
        if len(cfg.base_urls) > 1 and backend not in REPLICA_BACKENDS:
            raise GlotbenchError(f"--base-url with {len(cfg.base_urls)} URLs (replicas) works with "
                                 f"{', '.join(b + ':' for b in REPLICA_BACKENDS)} models, not {cfg.model}")
    if cfg.api_key_env:
        kw["api_key_env"] = cfg.api_key_env
    return load_cli_model(cfg.model, kw, base_url=cfg.base_url, timeout=cfg.timeout or None)


def read_chat_template(path: str) -> str:
    """The --chat-template file's text; a missing or unreadable file, or bad Jinja, is one line."""
    import jinja2

    try:
        text = Path(path).expanduser().read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise GlotbenchError(f"--chat-template {path}: cannot read it ({err})") from None
    from glotbench.prompts import sandbox

    try:
        sandbox.environment().parse(text)
    except jinja2.TemplateSyntaxError as err:
        raise GlotbenchError(f"--chat-template {path}, line {err.lineno}: {err.message}") from None
    why = sandbox.check(text)
    if why is not None:  # the backends render it in jinja2's sandbox too (llama-cpp-python, transformers)
        raise GlotbenchError(f"--chat-template {path}: {why}")
    return text


def load_judge(spec: str, judge_args: dict, timeout: float | None = None) -> Model:
    """A judge is any model glotbench can run; ``judge_args`` may carry base_url / api_key_env."""
    from glotbench.models.registry import load_cli_model

    return load_cli_model(spec, judge_args, timeout=timeout or None, flag="--judge-args")


def light_model(cfg: RunSettings) -> Model | None:
    """The run's model when building it loads no weights and sends nothing (an HTTP backend,
    ``light`` in models/backends.py), so it can be built before any item is read; None otherwise,
    or when building it fails (the run then builds it at its usual place and reports the error there)."""
    from glotbench.models.backends import BACKENDS

    try:
        if not BACKENDS.get((cfg.model or "embedded").partition(":")[0].strip().lower()).light:
            return None
        return load_model_from_config(cfg)
    except Exception:  # noqa: BLE001 - reported where the model is normally built, after the data checks
        return None


def recorded_grades_given(cfg: RunSettings) -> bool:
    """The run's model is a recorded file with a grade column (checked before the model is loaded)."""
    spec = cfg.model or ""
    return spec.split(":", 1)[0].lower() == "recorded" and bool((cfg.model_args or {}).get("grade"))
