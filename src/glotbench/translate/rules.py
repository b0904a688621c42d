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
  times in a row ("MgMgMgMg...", "the the the the ") gets the run collapsed to one, and a
  translation still longer than ``max(4 x source, source + 40)`` characters is dropped for the
  source sentence. Both are noted.
  A unit is 2-20 characters, holds at least one letter and no digit: a model stuck on a word or a
  syllable is degenerate, a number is data ("40000", "1111", "0,0,0,0" are never rewritten) and so
  is punctuation ("....", "----") or a single doubled letter ("Hmmmm").
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
_UNIT_MIN, _UNIT_MAX, _RUN_MIN = 2, 20, 4
_LETTER = re.compile(r"[^\W\d_]")
_WORD_RUN = re.compile(r"(?<![^\W\d_])([^\W\d_]+(?:\s+[^\W\d_]+){0,4}?)(?:[\s,;]+\1(?![^\W\d_])){3,}")
_DIGIT = re.compile(r"\d")


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
    cleaned = collapse_runs(output)
    note = None
    if cleaned != output:
        note = "repeated run collapsed"
    if len(cleaned) > max(4 * len(source), len(source) + 40):
        return source, "runaway output: source sentence kept"
    return cleaned, note


def _unit_ok(unit: str) -> bool:
    return _LETTER.search(unit) is not None and _DIGIT.search(unit) is None and len(set(unit)) > 1


def collapse_runs(text: str) -> str:
    """Each run of one unit repeated ``_RUN_MIN`` or more times in a row, collapsed to one unit.

    First whole words: a phrase of one to five letter-only words said four or more times in a row
    (separated by spaces, commas or semicolons) is said once ("the the the the" -> "the"). Then
    runs inside words or without spaces ("MgMgMgMg" -> "Mg"): at each position the shortest
    acceptable unit that repeats wins (as a lazy ``(.{2,20}?)\\1{3,}`` would), and a unit is
    acceptable only with a letter, no digit and two different characters, so digits are never
    touched.
    """
    text = _WORD_RUN.sub(r"\1", text)
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        for size in range(_UNIT_MIN, _UNIT_MAX + 1):
            unit = text[i:i + size]
            if len(unit) < size or not text.startswith(unit * _RUN_MIN, i):
                continue
            if not _unit_ok(unit):
                continue
            j = i + size * _RUN_MIN
            while text.startswith(unit, j):
                j += size
            out.append(unit)
            i = j
            break
        else:
            out.append(text[i])
            i += 1
    return "".join(out)
