"""``recorded:answers.jsonl``: a file of answers a user already has, used as the model.

Every item found in the file is scored exactly as a live answer would be; an item missing from the
file is a per-item error saying so (listed and counted, never scored). The file's SHA-256 is the
model identity. The ``-M`` column options (id, question, question_var, answer, reasoning, sample,
grade, task, format) and the formats read: docs/recorded-answers.md.
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from pathlib import Path
from typing import Any

from glotbench.data.loaders import file_sha256, read_records, strip_compression
from glotbench.errors import ModelError, PermanentModelError
from glotbench.models.base import GenRequest, GenResult, Model

FORMATS = {".jsonl": "jsonl", ".json": "json", ".csv": "csv", ".tsv": "tsv", ".parquet": "parquet"}
_SPACE = re.compile(r"\s+")


def normalise_text(text: Any) -> str:
    """The text used to match items by question: NFC, whitespace collapsed, trimmed."""
    return _SPACE.sub(" ", unicodedata.normalize("NFC", str(text))).strip()


class RecordedModel(Model):
    """Answers read from a file instead of sent to a model."""

    is_chat = True
    supports_loglikelihood = False
    max_parallel = 64
    answers_items = True  # the key names the item: identical prompts of two items keep their own rows
    continues_assistant_turn = True  # the answers are given: no prompt is sent

    def __init__(self, path: str | Path, *, id: str | None = None, question: str | None = None,
                 question_var: str = "question", answer: str = "answer", reasoning: str | None = None,
                 sample: str | None = None, grade: str | None = None, task: str | None = None,
                 format: str | None = None, chat: bool = True):
        self.path = Path(path).expanduser()
        if not self.path.is_file():
            raise ModelError(f"recorded answers file not found: {self.path}")
        fmt = format or FORMATS.get(Path(strip_compression(self.path.name)).suffix.lower())  # answers.csv.gz: csv
        if fmt is None:
            raise ModelError(f"{self.path}: cannot tell the format from the suffix; give format=csv|tsv|jsonl|json|parquet")
        self.rows = read_records(self.path, fmt)
        self.sha = file_sha256(self.path)
        self.model_id = f"recorded:{self.path.name}@{self.sha[:12]}"
        self.is_chat = chat
        self.cols = {"id": id, "question": question, "answer": answer, "reasoning": reasoning, "sample": sample,
                     "grade": grade, "task": task}
        if id is None and question is None:
            self.cols["id"] = "id"  # the default: match by the task's item ids
        self.question_var = question_var
        self._check_columns()
        self._by_id: dict[tuple[str | None, str, int], list[dict]] = defaultdict(list)
        self._by_question: dict[tuple[str | None, str, int], list[dict]] = defaultdict(list)
        for row in self.rows:
            k = self._sample_of(row)
            t = str(row[self.cols["task"]]) if self.cols["task"] else None
            if self.cols["id"]:
                self._by_id[(t, str(row[self.cols["id"]]), k)].append(row)
            if self.cols["question"]:
                self._by_question[(t, normalise_text(row[self.cols["question"]]), k)].append(row)
        self.matched: set[tuple[str, str]] = set()
        self.missing: dict[str, list[str]] = defaultdict(list)
        self.ambiguous: dict[str, list[str]] = defaultdict(list)

    # ------------------------------------------------------------------ file checks
    def _check_columns(self) -> None:
        have = set().union(*(r.keys() for r in self.rows))
        for role, col in self.cols.items():
            if col is not None and col not in have:
                raise ModelError(f"{self.path}: column {col!r} (the {role} column) is in no row; columns: "
                                 f"{', '.join(sorted(map(str, have)))}; name it with -M {role}=COLUMN")
        for i, row in enumerate(self.rows):
            if row.get(self.cols["answer"]) is None:
                raise ModelError(f"{self.path}: row {i + 1}: field {self.cols['answer']!r} (the answer) is empty")
            self._sample_of(row, i)
            if self.cols["grade"]:
                try:
                    recorded_grade_value(row.get(self.cols["grade"]))
                except ValueError as err:
                    raise ModelError(f"{self.path}: row {i + 1}: field {self.cols['grade']!r} (the grade): {err}") from None

    def _sample_of(self, row: dict, i: int | None = None) -> int:
        col = self.cols["sample"]
        if not col:
            return 0
        try:
            return int(row.get(col) or 0)
        except (TypeError, ValueError):
            where = f"row {i + 1}: " if i is not None else ""
            raise ModelError(f"{self.path}: {where}field {col!r} (the sample index) is not an integer: {row.get(col)!r}") from None

    # ------------------------------------------------------------------ lookup
    def row_for(self, task: str, sample, k: int) -> dict | None:
        """The file's row for item ``sample`` of ``task`` (answer ``k``); None when the file has none.
        Several rows for one item (or several items for one question) are ambiguous: never guessed."""
        rows: list[dict] = []
        for t in ((task, None) if self.cols["task"] else (None,)):
            if self.cols["id"]:
                rows = self._by_id.get((t, str(sample.id), k), [])
            if not rows and self.cols["question"]:
                text = sample.vars.get(self.question_var)
                if text is None:
                    raise PermanentModelError(f"task {task}: has no variable {self.question_var!r} to match questions by "
                                              f"(set -M question_var=NAME; variables: {', '.join(sorted(sample.vars))})")
                rows = self._by_question.get((t, normalise_text(text), k), [])
            if rows:
                break
        if len(rows) > 1 and len({str(r[self.cols["answer"]]) for r in rows}) > 1:
            self.ambiguous[task].append(sample.id)
            raise PermanentModelError(f"item {sample.id}: {len(rows)} rows of {self.path.name} match it with different "
                                      f"answers (ambiguous; not scored)")
        if not rows:
            self.missing[task].append(sample.id)
            return None
        self.matched.add((task, sample.id))
        return rows[0]

    async def generate(self, request: GenRequest) -> GenResult:
        if request.item is None:
            raise PermanentModelError("recorded answers can only answer items of a task run (the request names no item)")
        task, sample = request.item
        row = self.row_for(task, sample, request.sample_index)
        if row is None:
            raise PermanentModelError(f"item {sample.id} (answer {request.sample_index}) is not in the recorded answers "
                                      f"file {self.path.name}: not scored")
        reasoning = row.get(self.cols["reasoning"]) if self.cols["reasoning"] else None
        return GenResult(text=str(row[self.cols["answer"]]), reasoning=None if reasoning is None else str(reasoning),
                         finish_reason="recorded", raw={"recorded_row": {k: v for k, v in row.items() if _plain(v)}})

    # ------------------------------------------------------------------ grades and notes
    @property
    def has_grades(self) -> bool:
        """Whether the file carries grades (``-M grade=COL``): a judged task then needs no ``--judge``."""
        return bool(self.cols["grade"])

    @property
    def grade_judge_id(self) -> str:
        return f"recorded-grades:{self.path.name}@{self.sha[:12]}"

    def recorded_grade(self, task: str, sample, k: int) -> Any:
        """The file's grade for this answer (None when the file has no grade column or row)."""
        if not self.cols["grade"]:
            return None
        row = self.row_for(task, sample, k)
        return None if row is None else recorded_grade_value(row.get(self.cols["grade"]))

    def run_notes(self) -> list[str]:
        notes = [f"recorded answers {self.path} ({len(self.rows)} rows): {len(self.matched)} item(s) matched"]
        for task, ids in sorted(self.missing.items()):
            uniq = sorted(set(ids))
            notes.append(f"{task}: {len(uniq)} item(s) not in the file, not scored: {', '.join(uniq[:10])}"
                         + (" ..." if len(uniq) > 10 else ""))
        for task, ids in sorted(self.ambiguous.items()):
            uniq = sorted(set(ids))
            notes.append(f"{task}: {len(uniq)} item(s) matched by several rows with different answers, not scored: "
                         f"{', '.join(uniq[:10])}" + (" ..." if len(uniq) > 10 else ""))
        return notes

    def settings(self) -> dict:
        return {"model_id": self.model_id, "backend": "recorded", "file": str(self.path), "sha256": self.sha,
                "columns": {k: v for k, v in self.cols.items() if v}, "chat": self.is_chat}


_LETTERS = {"A": "CORRECT", "B": "INCORRECT", "C": "NOT_ATTEMPTED"}  # the SimpleQA graders' letters


def recorded_grade_value(raw: Any) -> str | None:
    """A recorded grade as CORRECT / INCORRECT / NOT_ATTEMPTED (None when blank); ValueError otherwise."""
    if raw is None or (isinstance(raw, float) and raw != raw) or str(raw).strip() == "":
        return None
    key = str(raw).strip().upper().replace(" ", "_").replace("-", "_")
    key = _LETTERS.get(key, key)
    if key not in ("CORRECT", "INCORRECT", "NOT_ATTEMPTED"):
        raise ValueError(f"unknown grade {raw!r}; expected CORRECT, INCORRECT, NOT_ATTEMPTED or A, B, C")
    return key


def _plain(v: Any) -> bool:
    return v is None or isinstance(v, (str, int, float, bool))


def from_spec(spec: str, rest: str, *, base_url=None, api_key_env=None, timeout=None, **kw) -> Model:
    """``recorded:PATH``: answers from a CSV/TSV/JSONL/JSON/Parquet file (columns via -M)."""
    try:
        return RecordedModel(rest, **kw)
    except TypeError as exc:
        raise ModelError(f"model spec {spec!r}: {exc} (options: id, question, question_var, answer, reasoning, "
                         f"sample, grade, task, format, chat)") from exc
