"""Reading a judge's reply into a grade; an unreadable reply becomes JUDGE_ERROR, raw text kept.

glotbench's strict parse for ``abc`` (Chinese SimpleQA: a letter only when it stands alone, label
words accepted, no match or several labels JUDGE_ERROR; ``Verdict.reference_letter`` keeps what the
reference would read) and ``evaluation_json`` (HuSimpleQA: the first JSON object anywhere, a
one-element list, "NOT ATTEMPTED" with a space). How it differs from each reference, and why:
docs/factuality.md "Reading the judge's reply".
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from glotbench.extract.thinking import strip_thinking
from glotbench.extract.jsonobj import first_json_object
from glotbench.scoring.grades import (
    CORRECT,
    INCORRECT,
    JUDGE_ERROR,
    NOT_ATTEMPTED,
    Grade,
)


@dataclass(frozen=True)
class Verdict:
    grade: Grade
    raw: str
    reason: str = ""  # how the grade was read, or why it could not be
    reference_letter: str | None = None  # abc parser only: what the reference regex would give

    def to_dict(self) -> dict:
        return {"grade": self.grade.value, "raw": self.raw, "reason": self.reason, "reference_letter": self.reference_letter}


_LETTER = {"A": CORRECT, "B": INCORRECT, "C": NOT_ATTEMPTED}
_LONE_LETTER = re.compile(r"(?<![A-Za-z])([ABC])(?![A-Za-z])")
_ZH_WORDS = {"未尝试": NOT_ATTEMPTED, "正确": CORRECT, "错误": INCORRECT}
_EN_WORD = re.compile(r"\b(NOT[_ ]ATTEMPTED|INCORRECT|CORRECT)\b", re.IGNORECASE)


def _strip_thinking(text: str) -> str:
    """A reasoning judge's verdict is what follows its thinking trace."""
    return strip_thinking(text)[0]


def _words(text: str) -> set[Grade]:
    found = {INCORRECT} if "不正确" in text else set()
    text = text.replace("不正确", "")
    found |= {g for w, g in _ZH_WORDS.items() if w in text}
    found |= {Grade(m.group(1).upper().replace(" ", "_")) for m in _EN_WORD.finditer(text)}
    return found


def parse_abc(text: str) -> Verdict:
    raw = text if isinstance(text, str) else ""
    ref = re.search(r"(A|B|C)", raw)
    ref_letter = ref.group(0) if ref else "C"
    body = _strip_thinking(raw)
    letters = list(dict.fromkeys(m.group(1) for m in _LONE_LETTER.finditer(body)))
    if len(letters) > 1:  # "A:\nB:\nC:" - the label list echoed back, not a choice
        return Verdict(JUDGE_ERROR, raw, f"several labels ({', '.join(letters)}): the reply lists the labels "
                       "instead of choosing one", ref_letter)
    if letters:
        return Verdict(_LETTER[letters[0]], raw, f"letter {letters[0]}", ref_letter)
    found = _words(body)
    if len(found) == 1:
        g = found.pop()
        return Verdict(g, raw, f"label word {g.value}", ref_letter)
    why = "several label words" if found else "no A/B/C letter or label word"
    return Verdict(JUDGE_ERROR, raw, why, ref_letter)


_EVALUATION = re.compile(r'"evaluation"\s*:\s*\[?\s*"([^"]*)"')


def parse_evaluation_json(text: str) -> Verdict:
    raw = text if isinstance(text, str) else ""
    body = _strip_thinking(raw)
    named = {v.strip().upper().replace(" ", "_") for v in _EVALUATION.findall(body)}
    if len(named) > 1:  # the prompt's examples (or its ["CORRECT"/"INCORRECT"/...] scaffold) echoed back
        return Verdict(JUDGE_ERROR, raw, f"several evaluations ({', '.join(sorted(named))}): the reply repeats "
                       "the prompt instead of grading")
    obj = first_json_object(body)
    if obj is None:
        return Verdict(JUDGE_ERROR, raw, "no JSON object in reply")
    if "evaluation" not in obj:
        return Verdict(JUDGE_ERROR, raw, "JSON object has no 'evaluation' field")
    val = obj["evaluation"]
    if isinstance(val, list) and len(val) == 1:
        val = val[0]
    if not isinstance(val, str):
        return Verdict(JUDGE_ERROR, raw, f"'evaluation' is {type(val).__name__}, not a string")
    key = val.strip().upper().replace(" ", "_")
    if key in ("CORRECT", "INCORRECT", "NOT_ATTEMPTED"):
        return Verdict(Grade(key), raw, f"evaluation {key}")
    return Verdict(JUDGE_ERROR, raw, f"unknown evaluation {val!r}")


PARSERS = {"abc": parse_abc, "evaluation_json": parse_evaluation_json}


def parse_judge_output(parser: str, text: str) -> Verdict:
    """Parse with a named parser (``GraderPrompt.parser`` gives the right one for a grader).

    A reply text is parsed once (the last 1,024 distinct replies kept): a grader that answers one
    letter sends the same few replies for every item, and each is read by the strict parse, the
    echo check of the reference rule and the summary (the result is frozen, so sharing it is safe)."""
    if parser not in PARSERS:
        raise ValueError(f"unknown judge parser {parser!r}; known: {', '.join(PARSERS)}")
    return _parse_text(parser, text) if isinstance(text, str) else PARSERS[parser](text)


@functools.lru_cache(maxsize=1024)
def _parse_text(parser: str, text: str) -> Verdict:
    return PARSERS[parser](text)
