"""Load an extraction corpus (tests/extraction_corpus/) and score the extractors on it.

A corpus file holds groups of cases; a group gives the extractor, the source and optional
``labels`` / ``choices`` shared by its cases, each case being ``[text, expected]`` (expected
None: the output must stay unparseable). See tests/extraction_corpus/README.md.

Outcomes per case: ``correct`` (read as expected, or None as expected), ``wrong`` (read as
something other than expected, including a reading where None was expected), ``missed``
(expected an answer, got None). Precision = correct readings / readings; recall = correct
readings / cases with a clear answer.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from glotbench.errors import DataError
from glotbench.extract.choice import explain_choice
from glotbench.extract.number import explain_number
from glotbench.extract.result import Extraction
from glotbench.languages import get_pack

DEFAULT_LABELS = ["A", "B", "C", "D", "E"]
EXTRACTORS = ("choice", "number", "confidence")


@dataclass(frozen=True)
class Case:
    id: str
    lang: str
    extractor: str
    text: str
    expected: Any
    source: str
    group: str
    labels: tuple[str, ...] | None = None
    choices: tuple[str, ...] | None = None


def load_corpus(directory: str | Path) -> list[Case]:
    """Every case of every ``<lang>.yaml`` in ``directory``; DataError naming file and case on bad input."""
    directory = Path(directory)
    cases: list[Case] = []
    for path in sorted(directory.glob("*.yaml")):
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        lang = doc.get("language")
        get_pack(lang)
        for gi, group in enumerate(doc.get("groups") or []):
            ext = group.get("extractor")
            if ext not in EXTRACTORS:
                raise DataError(f"{path}: group {gi} ({group.get('name')}): field 'extractor': {ext!r} is not one of {EXTRACTORS}")
            if not group.get("source"):
                raise DataError(f"{path}: group {gi} ({group.get('name')}): field 'source' is required")
            labels = group.get("labels") or (DEFAULT_LABELS if ext == "choice" else None)
            choices = group.get("choices")
            for ci, item in enumerate(group.get("cases") or []):
                if isinstance(item, dict):
                    text, expected = item.get("text"), item.get("expected")
                    src = item.get("source") or group["source"]
                    item_labels, item_choices = item.get("labels") or labels, item.get("choices") or choices
                else:
                    if not isinstance(item, list) or len(item) != 2:
                        raise DataError(f"{path}: group {group.get('name')}: case {ci}: must be [text, expected]")
                    (text, expected), src, item_labels, item_choices = item, group["source"], labels, choices
                if not isinstance(text, str):
                    raise DataError(f"{path}: group {group.get('name')}: case {ci}: field 'text' must be a string")
                if ext == "choice" and expected is not None and str(expected) not in [str(x) for x in item_labels]:
                    raise DataError(f"{path}: group {group.get('name')}: case {ci}: expected {expected!r} is not a label")
                cases.append(Case(
                    id=f"{lang}:{group.get('name', gi)}:{ci}", lang=lang, extractor=ext, text=text,
                    expected=str(expected) if ext == "choice" and expected is not None else expected,
                    source=str(src), group=str(group.get("name", gi)),
                    labels=tuple(str(x) for x in item_labels) if item_labels else None,
                    choices=tuple(str(x) for x in item_choices) if item_choices else None,
                ))
    if not cases:
        raise DataError(f"{directory}: no corpus cases (*.yaml)")
    return cases


def run_case(case: Case) -> Extraction:
    if case.extractor == "choice":
        return explain_choice(case.text, case.labels, case.choices, case.lang)
    if case.extractor == "number":
        return explain_number(case.text, case.lang)
    from glotbench.extract.confidence import parse_stated_answer

    stated = parse_stated_answer(case.text)
    return Extraction(stated.confidence, f"confidence:{stated.scale}" if stated.scale else "confidence:none")


def _same(got: Any, expected: Any) -> bool:
    if isinstance(expected, (int, float)) and isinstance(got, (int, float)):
        return math.isclose(float(got), float(expected), rel_tol=1e-9, abs_tol=1e-9)
    return got == expected


def outcome(case: Case, got: Any) -> str:
    if got is None:
        return "correct" if case.expected is None else "missed"
    return "correct" if case.expected is not None and _same(got, case.expected) else "wrong"


@dataclass
class Tally:
    cases: int = 0
    clear: int = 0  # cases with an expected answer
    reads: int = 0  # outputs the extractor read (not None)
    right_reads: int = 0
    wrong: int = 0
    missed: int = 0
    kept_none: int = 0  # expected None and got None
    wrong_ids: list[str] = field(default_factory=list)

    def add(self, case: Case, got: Any) -> None:
        self.cases += 1
        self.clear += case.expected is not None
        out = outcome(case, got)
        if got is not None:
            self.reads += 1
            self.right_reads += out == "correct"
        self.wrong += out == "wrong"
        self.missed += out == "missed"
        self.kept_none += got is None and case.expected is None
        if out == "wrong":
            self.wrong_ids.append(case.id)

    @property
    def precision(self) -> float | None:
        return self.right_reads / self.reads if self.reads else None

    @property
    def recall(self) -> float | None:
        return self.right_reads / self.clear if self.clear else None


def score_corpus(cases: list[Case]) -> tuple[dict[tuple[str, str], Tally], list[tuple[Case, Extraction]]]:
    """Tallies per (language, extractor), plus ``("all", extractor)`` and ``(language, "all")``."""
    tallies: dict[tuple[str, str], Tally] = defaultdict(Tally)
    results = []
    for case in cases:
        res = run_case(case)
        results.append((case, res))
        for key in ((case.lang, case.extractor), ("all", case.extractor), (case.lang, "all"), ("all", "all")):
            tallies[key].add(case, res.value)
    return dict(tallies), results
