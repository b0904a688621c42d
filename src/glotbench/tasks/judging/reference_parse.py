"""The benchmarks' own judge-reply rules, which give the published numbers (docs/factuality.md).

``abc`` (Chinese SimpleQA): the first ``(A|B|C)`` anywhere in the raw reply, "C" (NOT_ATTEMPTED)
when there is none; every item stays in the denominator. ``evaluation_json`` (HuSimpleQA,
OpenCompass): the first capture of ``"evaluation": "(.*?)"``, lower-cased; no match is a
JUDGE_ERROR, an unknown label is counted as INCORRECT (reason ``reference: unknown label``).
glotbench's stricter reading (:mod:`glotbench.tasks.judging.parse`) is reported beside these, named
``*_strict``. One deliberate exception to both: a reply that echoes the grading prompt's label list
chose nothing and is a JUDGE_ERROR in the headline too (the doc says why).
"""

from __future__ import annotations

import re

from glotbench.scoring.grades import CORRECT, INCORRECT, JUDGE_ERROR, NOT_ATTEMPTED, Grade

_ABC = re.compile(r"(A|B|C)")
_EVALUATION = re.compile(r"\"evaluation\": \"(.*?)\"")
_LETTER = {"A": CORRECT, "B": INCORRECT, "C": NOT_ATTEMPTED}
_LABEL = {"correct": CORRECT, "incorrect": INCORRECT, "not_attempted": NOT_ATTEMPTED}


def _echo(parser: str, text: str | None) -> str | None:
    """Why the reply is an echo of the prompt's labels (None when it is not)."""
    from glotbench.tasks.judging.parse import parse_judge_output

    v = parse_judge_output(parser, text if isinstance(text, str) else "")  # the strict parse, read once per reply
    if v.grade is JUDGE_ERROR and v.reason.startswith(("several labels", "several evaluations")):
        return v.reason
    return None


def reference_abc(text: str | None) -> tuple[Grade, str]:
    echo = _echo("abc", text)
    if echo:
        return JUDGE_ERROR, f"label echo, not a grade ({echo})"
    m = _ABC.search(text if isinstance(text, str) else "")
    letter = m.group(0) if m else "C"
    return _LETTER[letter], f"reference: letter {letter}" + ("" if m else " (default)")


def reference_evaluation(text: str | None) -> tuple[Grade, str]:
    echo = _echo("evaluation_json", text)
    if echo:
        return JUDGE_ERROR, f"label echo, not a grade ({echo})"
    found = _EVALUATION.findall(text if isinstance(text, str) else "")
    if not found:
        return JUDGE_ERROR, "reference: no \"evaluation\": \"...\" in reply (dropped by the reference)"
    label = found[0].lower()
    if label in _LABEL:
        return _LABEL[label], f"reference: evaluation {label}"
    return INCORRECT, f"reference: unknown label {label!r} (in the denominator, not correct)"


REFERENCE_PARSERS = {"abc": reference_abc, "evaluation_json": reference_evaluation}


def reference_grade(parser: str, text: str | None) -> tuple[Grade, str]:
    """(grade, how it was read) under the benchmark's own rule for ``parser``."""
    try:
        fn = REFERENCE_PARSERS[parser]
    except KeyError:
        raise ValueError(f"unknown judge parser {parser!r}; known: {', '.join(REFERENCE_PARSERS)}") from None
    return fn(text)
