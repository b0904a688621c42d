"""Plain sentences for `glotbench build cloze` / `word-order`: read, deduplicate, length-filter.

Input is a text file (one sentence per line) or JSONL with ``--field`` (a glotbench field path,
e.g. ``text`` or ``evidence[*][0]``: a list of strings gives one passage each). ``split=True`` cuts
passages into sentences at ., ! or ? (or …) followed by a space and an upper-case letter (after
an optional opening quote or bracket), except after a number ("19. října", "22. Září" stay whole):
a plain rule, stated, not a tokenizer (an abbreviation before a capital, "tzv. Praha", splits).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from glotbench.errors import DataError

_SPLIT = re.compile(r"(?<=[.!?…])\s+")
_OPEN = "„\"“«(‚'"


@dataclass(frozen=True)
class Sentence:
    text: str
    source: str  # "file:line"


def split_sentences(passage: str) -> list[str]:
    out: list[str] = []
    for part in _SPLIT.split(passage.strip()):
        part = part.strip()
        if not part:
            continue
        head = part.lstrip(_OPEN)[:1]
        prev = out[-1].split()[-1] if out else ""
        if out and (not head.isupper() or prev[:-1].isdigit()):
            out[-1] += " " + part
        else:
            out.append(part)
    return out


def _strings(value, where: str) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        out = []
        for v in value:
            out.extend(_strings(v, where))
        return out
    raise DataError(f"{where}: expected text or a list of texts, got {type(value).__name__}")


def read_sentences(path: Path, field: str | None = None, split: bool = False) -> list[Sentence]:
    """Sentences in file order, each with its ``file:line`` (empty lines skipped)."""
    from glotbench.data.fields import MissingField, get_path

    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8-sig").splitlines()
    except FileNotFoundError:
        raise DataError(f"{path}: no such file") from None
    except UnicodeDecodeError as err:
        raise DataError(f"{path}: not UTF-8 ({err.reason} at byte {err.start})") from None
    out: list[Sentence] = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{path}:{n}"
        if field:
            try:
                record = json.loads(line)
            except json.JSONDecodeError as err:
                raise DataError(f"{where}: not JSON ({err.msg})") from None
            try:
                texts = _strings(get_path(record, field) if isinstance(record, dict) else None, where)
            except MissingField:
                raise DataError(f"{where}: field '{field}': not in the record") from None
            except DataError:
                raise DataError(f"{where}: field '{field}': not text or a list of texts") from None
        else:
            texts = [line]
        for text in texts:
            for s in (split_sentences(text) if split else [text.strip()]):
                if s:
                    out.append(Sentence(" ".join(s.split()), f"{path.name}:{n}"))
    return out


def prepare(sentences: list[Sentence], min_words: int, max_words: int | None = None,
            limit: int | None = None) -> tuple[list[Sentence], list[dict]]:
    """MM-Eval §3.4: deduplicate (case-folded, whitespace collapsed) and keep sentences of at least
    ``min_words`` space-separated words (and at most ``max_words``). ``limit``: stop after that many
    kept. Returns (kept, dropped records with removed_by/reason)."""
    seen: dict[str, str] = {}
    kept: list[Sentence] = []
    dropped: list[dict] = []
    for s in sentences:
        if limit is not None and len(kept) >= limit:
            break
        key = s.text.casefold()
        n = len(s.text.split())
        base = {"sentence": s.text, "provenance": [{"step": "sentences", "source": s.source}]}
        if key in seen:
            dropped.append({**base, "removed_by": "dedup", "reason": f"duplicate of {seen[key]}"})
        elif n < min_words:
            dropped.append({**base, "removed_by": "min_words", "reason": f"{n} words < {min_words}"})
        elif max_words and n > max_words:
            dropped.append({**base, "removed_by": "max_words", "reason": f"{n} words > {max_words}"})
        else:
            seen[key] = s.source
            kept.append(s)
    return kept, dropped
