"""A chat prompt whose last turn is the assistant's, left open for the model to continue (a task's
lm-eval ``gen_prefix``), for backends that render chat templates themselves.

transformers' ``apply_chat_template(continue_final_message=True)`` renders the whole conversation and
cuts it right after the final message's text, so that turn's closing tokens are gone. Restated here
(transformers 4.45-5.x), for the embedded llama.cpp model, which renders the same Jinja templates
through llama-cpp-python: tests/test_lm_eval_gen_prefix.py compares the two on the same GGUF.
"""

from __future__ import annotations

from glotbench.errors import PermanentModelError


def ends_with_assistant(messages) -> bool:
    """Whether a chat request's last message is the assistant's (a turn to continue)."""
    return bool(messages) and dict(messages[-1]).get("role") == "assistant"


def open_final_turn(rendered: str, final: str) -> str:
    """``rendered`` (the conversation rendered without a generation prompt) cut right after the final
    message's text ``final``: where the template kept the message's own trailing whitespace, after it;
    where it trimmed it, after the trimmed text."""
    core = final.strip()
    at = rendered.rfind(core)
    if not core or at < 0:
        raise PermanentModelError("the chat template does not write the final assistant turn's text, so it cannot be "
                                  "continued (run the task with -M chat=false)")
    if rendered[at: at + len(final.lstrip())] == final:
        return rendered[: at + len(final.lstrip())]
    return rendered[: at + len(core)]
