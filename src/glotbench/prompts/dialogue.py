"""A dialogue: user turns with the assistant's answers between them, as chat messages and as the text a
judge reads (docs/multi-turn.md).

A multi-turn task (``prompt.turns``) builds turn k's request from its user turns and the model's own
earlier answers; a benchmark whose items carry a fixed conversation (HuWildBench's ``turn`` list) builds
its messages and the judge's history here too, so both show a dialogue the same way.
"""

from __future__ import annotations

from typing import Sequence

USER_LABEL = "USER: "  # WildBench's score_prompt history layout (OpenHuEval's HuWildBench keeps it)
ASSISTANT_LABEL = "ASSISTANT: "


def messages(user_turns: Sequence[str], answers: Sequence[str], system: str | None = None) -> list[dict]:
    """``user_turns[0]``, ``answers[0]``, ``user_turns[1]``, ...: one assistant message per answer given
    (``len(answers)`` is ``len(user_turns)`` or one less: the request for the next answer)."""
    if not len(user_turns) - 1 <= len(answers) <= len(user_turns):
        raise ValueError(f"{len(answers)} answer(s) for {len(user_turns)} user turn(s)")
    out = [{"role": "system", "content": system}] if system else []
    for k, user in enumerate(user_turns):
        out.append({"role": "user", "content": user})
        if k < len(answers):
            out.append({"role": "assistant", "content": answers[k]})
    return out


def transcript(turns: Sequence[dict]) -> str:
    """The dialogue as one text: each message as ``"USER: ..."`` or ``"ASSISTANT: ..."`` followed by a
    blank line (system messages left out), WildBench's ``{history}`` layout."""
    out = ""
    for t in turns:
        if t.get("role") == "system":
            continue
        out += (USER_LABEL if t.get("role") == "user" else ASSISTANT_LABEL) + str(t.get("content")) + "\n\n"
    return out


def plain_shots(turns: Sequence[dict]) -> tuple[list[tuple[str, str]], str]:
    """A conversation ending in a user turn as (earlier (user, answer) pairs, the last user turn), the
    parts :func:`glotbench.prompts.render.plain_from_chat` lays out for a plain-completion model."""
    rest = [t for t in turns if t.get("role") != "system"]
    if not rest or rest[-1].get("role") != "user":
        raise ValueError("a conversation the model answers ends with a user turn")
    shots = [(str(rest[k]["content"]), str(rest[k + 1]["content"])) for k in range(0, len(rest) - 1, 2)]
    return shots, str(rest[-1]["content"])
