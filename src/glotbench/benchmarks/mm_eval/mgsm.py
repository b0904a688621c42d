"""MGSM originals of MM-Eval's reasoning items (paper §3.7), the counterparts for its knowledge-transfer reading.

MM-Eval's reasoning level is MGSM (google-research/url-nlp ``mgsm/``) translated to Mongolian from its
English and Chinese versions, and ``reasoning_eval.json`` keeps MGSM's order: record *i* is MGSM row *i*.
The files carry no link field; the order is what links them, checked on the data (250 of 250 gold answers
agree, 4 of them once MGSM's thousands separators are dropped: ``2,125`` / ``2125``; tests/test_mm_eval_mgsm.py).
So an MGSM row's item id is its row index, which is the id glotbench gives the MM-Eval record at the same
place (a task without an ``id`` field numbers its records from 0): ``compare --crosslingual`` and
``compare --paired`` join the two on it.

MGSM's ``mgsm_<lang>.tsv`` files have no header line: each line is ``question<TAB>answer``. The answer is
an integer, written with thousands separators in four rows; it is read without them (glotbench's numeric
scorer would read ``2,125`` as 2.125). Anything else on a line is refused in one line naming file, line
and field.
"""

from __future__ import annotations

import re
from pathlib import Path

from glotbench.errors import DataError
from glotbench.tasks.task import Task

_GROUPED = re.compile(r"-?\d{1,3}(?:,\d{3})+")
_PLAIN = re.compile(r"-?\d+(?:\.\d+)?")


def answer_value(text: str) -> str | None:
    """MGSM's answer as glotbench's numeric scorer reads it: ``2,125`` -> ``2125``; None if not a number."""
    text = text.strip()
    if _GROUPED.fullmatch(text):
        return text.replace(",", "")
    return text if _PLAIN.fullmatch(text) else None


def read_mgsm_tsv(path: Path, encoding: str = "utf-8") -> list[dict]:
    """``[{"id": "<row index>", "question", "answer"}]`` from a header-less MGSM TSV."""
    try:
        text = path.read_bytes().decode(encoding)
    except UnicodeDecodeError as err:
        raise DataError(f"{path}: not valid {encoding} (byte {err.start}: {err.reason})") from None
    rows: list[dict] = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        cols = line.split("\t")
        if len(cols) != 2:
            raise DataError(f"{path}: line {n}: expected 2 tab-separated fields (question, answer), got {len(cols)}")
        question, answer = cols
        value = answer_value(answer)
        if not question.strip():
            raise DataError(f"{path}: line {n}: field 'question' is empty")
        if value is None:
            raise DataError(f"{path}: line {n}: field 'answer': {answer!r} is not a number")
        rows.append({"id": str(len(rows)), "question": question, "answer": value})
    if not rows:
        raise DataError(f"{path}: the dataset holds no records")
    return rows


class MgsmTask(Task):
    """A plain generate task whose split file is a header-less MGSM TSV (``task_class: mm_eval_mgsm``)."""

    def raw_records(self, split: str) -> list[dict]:
        return read_mgsm_tsv(self.split_path(split), self.spec.dataset.encoding)
