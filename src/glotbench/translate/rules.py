"""The rules around each translated string (Czech-Bench, thesis §5.2, ``dataset_translation.py``).

* Strings that are only numbers or a formula (digits and ``+ - − * / ( ) % , .`` and spaces)
  are kept as they are, in both directions.
* English to Czech only: a fixed dictionary of overrides, matched case-insensitively on the
  whole string ("I only" -> "Pouze I", the four true/false pairs).
* English to Czech only, after translating: a one-word output containing "ová" (a surname
  turned female) is replaced by the source string, as the reference script does (the thesis'
  text says the ending is stripped; its code returns the input word).
* Repetition guard: the thesis set ``repetition_penalty`` 5 on its WMT21 model, which any
  backend can get through ``--knob`` (``repeat_penalty`` for llama.cpp, ``frequency_penalty``
  for OpenAI-style servers); on top, a sentence whose translation repeats one unit four or more
  times in a row ("MgMgMgMg...") gets the run collapsed to one, and a translation still longer
  than ``max(4 x source, source + 40)`` characters is dropped for the source sentence. Both are
  noted.
"""

from __future__ import annotations

import re

MATH = re.compile(r"^[\d+\-\u2212*/()%,. ]+$")
OVERRIDES_TO_CS = {
    "i only": "Pouze I",
    "true, false": "pravda, nepravda",
    "true, true": "pravda, pravda",
    "false, false": "nepravda, nepravda",
    "false, true": "nepravda, pravda",
}
_REPEAT = re.compile(r"(.{1,20}?)\1{3,}", re.DOTALL)


def untouched(text: str) -> bool:
    """Numbers and formulas are never sent to the model."""
    return text.isnumeric() or MATH.match(text) is not None


def override(text: str, target: str) -> str | None:
    if target == "cs":
        return OVERRIDES_TO_CS.get(text.lower())
    return None


def surname_fix(source: str, output: str, target: str) -> str | None:
    """The source string when the output is one word containing "ová" (English -> Czech)."""
    if target == "cs" and len(output.split()) == 1 and "ová" in output:
        return source
    return None


def repetition_guard(source: str, output: str) -> tuple[str, str | None]:
    """(cleaned output, note or None)."""
    cleaned = _REPEAT.sub(r"\1", output)
    note = None
    if cleaned != output:
        note = "repeated run collapsed"
    if len(cleaned) > max(4 * len(source), len(source) + 40):
        return source, "runaway output: source sentence kept"
    return cleaned, note
