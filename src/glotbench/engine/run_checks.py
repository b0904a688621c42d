"""Checks made before a run sends its first request, and the model part of a run's identity.

* ``model_identity``: the model settings that change its outputs (chat or plain completion,
  context size, seed, ...) without where the model lives (a file path, a server URL), so the
  chat and plain runs of one GGUF land in different run directories while a moved file does not.
* ``check_same_model``: ``-o DIR`` onto a directory holding another model's (or the same model
  with other settings') run is refused: one journal would mix two models' answers.
* ``check_mode``: ``--mode loglikelihood`` needs a backend that can score log-probabilities
  and at least one multiple-choice task; generation tasks in the selection are named.
"""

from __future__ import annotations

from pathlib import Path

from glotbench.errors import GlotbenchError
from glotbench.tasks.request_settings import RequestSettings

# Where a model lives, not what it computes: left out of the run directory's identity.
LOCATION_KEYS = ("path", "base_url", "file")  # where the model lives, not what it is (a recorded file: its sha256)
# What the model id already names (hf: the architecture is the checkpoint's config's, and an override of
# it is part of the id): recorded in results.json, left out of the identity so older run directories match.
DERIVED_KEYS = ("architecture",)


def model_identity(model_settings: dict) -> dict:
    return {k: v for k, v in sorted(model_settings.items()) if k not in LOCATION_KEYS + DERIVED_KEYS}


def _describe(settings: dict) -> str:
    ident = model_identity(settings)
    name = ident.pop("model_id", None) or "an unknown model"
    extra = ", ".join(f"{k}={v}" for k, v in ident.items() if k != "backend")
    return f"{name} ({extra})" if extra else str(name)


def check_same_model(previous: dict | None, current: dict, out_dir: Path) -> None:
    """Refuse to add a model's answers to a run directory that holds another model's run."""
    if not previous or model_identity(previous) == model_identity(current):
        return
    raise GlotbenchError(f"{out_dir} holds the run of {_describe(previous)}, not of {_describe(current)}; "
                         "pick another -o directory (or leave -o out: each model and setting gets its own)")


OVERRIDES = {"system_prompt": "--system-prompt", "gen_kwargs": "--gen-kwargs", "chat_template": "--chat-template",
             "circular": "--circular"}


def check_same_overrides(previous: dict | None, current: dict, out_dir: Path) -> None:
    """Refuse to resume a run directory with another --system-prompt, --gen-kwargs or --chat-template:
    its answers would sit beside answers to other prompts (each override is in the fingerprint)."""
    if not previous:
        return
    for key, flag in OVERRIDES.items():
        old, new = previous.get(key) or None, current.get(key) or None
        if old != new:
            raise GlotbenchError(f"{out_dir} was run with {flag} {old!r}, this command has {new!r}; the answers would "
                                 "mix: pick another -o directory (or leave -o out: each setting gets its own)")


def check_mode(tasks, mode: str, model, task_mode) -> list[str]:
    """Fail before any request when ``mode`` cannot apply; return notes to print otherwise.

    ``task_mode(task)`` is the mode a task will actually run in."""
    scored = [t for t in tasks if task_mode(t) == "loglikelihood_rolling" or t.spec.output_type == "loglikelihood"]
    rolling = [t.name for t in scored]
    if rolling and not getattr(model, "supports_loglikelihood", False):
        kinds = " or ".join(sorted({t.spec.output_type for t in scored}, reverse=True))
        raise GlotbenchError(f"{', '.join(rolling)}: a text's log-likelihood (output_type {kinds}) needs "
                             f"a backend that scores log-probabilities; model {model.model_id} cannot (use the embedded "
                             "model, a llamacpp: GGUF, hf:, or an OpenAI-compatible server you trust with model_args "
                             "logprobs_trusted: true)")
    if mode != "loglikelihood":
        return []
    generation = [t.name for t in tasks if task_mode(t) not in ("loglikelihood", "loglikelihood_rolling")]
    if len(generation) == len(tasks):
        raise GlotbenchError(f"--mode loglikelihood applies to multiple-choice tasks only; "
                             f"{', '.join(generation)} {'is a generation task' if len(generation) == 1 else 'are generation tasks'}"
                             " (leave --mode out)")
    if not getattr(model, "supports_loglikelihood", False):
        raise GlotbenchError(f"--mode loglikelihood: model {model.model_id} cannot score log-probabilities "
                             "(use the embedded model, a llamacpp: GGUF, or an OpenAI-compatible server you trust "
                             "with model_args logprobs_trusted: true; or leave --mode out)")
    if generation:
        return [f"--mode loglikelihood applies to multiple-choice tasks only: {', '.join(generation)} "
                f"run{'s' if len(generation) == 1 else ''} in generate mode"]
    return []


def check_prefill(tasks, model, task_mode) -> None:
    """Refuse, before any request, a generation task whose prompt ends with the start of the answer
    (``prefills_answer``: lm-eval's ``gen_prefix``) on a chat backend that cannot continue an assistant
    turn: its answer would follow a closed turn, not continue the prefix."""
    if not getattr(model, "is_chat", True) or getattr(model, "continues_assistant_turn", False):
        return
    names = [t.name for t in tasks if t.prefills_answer and task_mode(t) == "generate"]
    if names:
        raise GlotbenchError(f"{', '.join(names)}: the prompt ends with the start of the answer (lm-eval's gen_prefix), "
                             f"which the model must continue; {model.model_id} takes chat turns and cannot continue "
                             "an assistant turn: run it with -M chat=false (the text prompt lm-eval builds without "
                             "--apply_chat_template), with hf: or a llamacpp: GGUF, or on a server that continues a "
                             "final assistant turn (vLLM, SGLang) with -M continue_final_message=true")


def plain_layout_notes(tasks, model, settings: RequestSettings) -> list[str]:
    """One line per task whose chat-shaped prompt a plain-text model (no chat template: an encoder-decoder,
    a base model) reads flattened, saying how; nothing for a chat model."""
    if getattr(model, "is_chat", True):
        return []
    notes = []
    for t in tasks:
        layout = t.plain_layout(settings.num_fewshot, settings.system_prompt)
        if layout:
            notes.append(f"{t.name}: {model.model_id} reads plain text, so the task's chat prompt is flattened: {layout}")
    return notes
