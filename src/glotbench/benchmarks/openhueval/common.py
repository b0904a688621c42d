"""Shared helpers for the OpenHuEval tasks: data and prompt loading, plain placeholder
substitution, JSON-object extraction, think-block stripping and per-category breakdowns.

Everything here is a plain function over strings and dicts, so the task engine can call it
without knowing anything about OpenHuEval.
"""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from glotbench.data.loaders import iter_jsonl
from glotbench.errors import DataError
from glotbench.extract.jsonobj import first_json_object
from glotbench.extract.thinking import strip_thinking
from glotbench.paths import benchmark_file, resolve_data_file
from glotbench.scoring.metrics import ScoredItem

DATA_DIR = "openhueval"
PROMPT_DIR = f"{DATA_DIR}/prompts"
# Prompts glotbench adds where the benchmark ships no Hungarian variant (see the file's "provenance").
_OWN_PROMPTS = Path(__file__).with_name("prompts_hu_glotbench.json")


def load_jsonl(path: str | Path, required: Iterable[str] = ()) -> list[dict]:
    """Read a JSONL file; each record must be an object holding every field in ``required``.

    ``path`` is an existing file, or relative to the data root (``openhueval/HuMatchingFIB.jsonl``).
    """
    p = Path(path)
    if not p.is_file():
        p = resolve_data_file(str(path))
    if not p.is_file():
        raise DataError(f"{p}: data file not found")
    records: list[dict] = []
    for lineno, rec in iter_jsonl(p, encoding="utf-8"):
        for name in required:
            if name not in rec:
                rid = rec.get("qid") or rec.get("session_id") or f"line {lineno}"
                raise DataError(f"{p}:{lineno}: record {rid} lacks field {name!r}")
        records.append(rec)
    return records


def load_prompts(filename: str) -> dict:
    """One of the benchmark's prompt files, ``openhueval/prompts/<filename>``: shipped with glotbench
    (taken from OpenCompass code; no upstream file holds them), else looked up in the data root."""
    p = benchmark_file(f"{PROMPT_DIR}/{filename}")
    if not p.is_file():
        raise DataError(f"{p}: OpenHuEval prompt file not found")
    return json.loads(p.read_text(encoding="utf-8"))


def load_own_prompts() -> dict:
    return json.loads(_OWN_PROMPTS.read_text(encoding="utf-8"))


def pick_template(variants: dict, key: str, prompt_lang: str, source: str, own: dict | None = None) -> str:
    """``variants[prompt_lang]``, else glotbench's own Hungarian variant from ``own``, else a one-line error."""
    if prompt_lang in variants:
        return variants[prompt_lang]
    if own is not None and prompt_lang in own:
        return own[prompt_lang]
    have = sorted(set(variants) | set(own or {}))
    raise DataError(f"{source}: {key} has no prompt variant {prompt_lang!r} (have: {', '.join(have)})")


def fill(template: str, **values: Any) -> str:
    """OpenCompass-style substitution: each ``{name}`` is replaced by ``str(value)``.

    Never ``str.format``: the FIB templates hold literal JSON braces. Lists are inserted as
    Python's ``str(list)`` (single-quoted), which is what OpenCompass's prompt template does.
    """
    out = template
    for name, value in values.items():
        out = out.replace("{" + name + "}", str(value))
    return out


def strip_think(text: str | None) -> str:
    """The answer part of an output that may carry an inline reasoning trace
    (``<think>...</think>`` and friends; see :func:`glotbench.extract.thinking.strip_thinking`).
    An unclosed ``<think>`` (a trace cut off by the length limit) leaves no answer."""
    return strip_thinking(text or "")[0]


_REFERENCE_JSON = re.compile(r"\{.*?\}", re.DOTALL)


def reference_json_object(text: str) -> dict | None:
    """The OpenCompass FIB evaluators' extraction, byte for byte in behaviour:
    ``re.search(r'\\{.*?\\}', pred.strip(), re.DOTALL)`` (first ``{`` up to the FIRST ``}``),
    then ``.strip().replace('\\\\xa0', '')`` (the literal four characters, not U+00A0), then
    ``json.loads``. Anything that fails gives ``None``."""
    m = _REFERENCE_JSON.search(text.strip())
    if not m:
        return None
    try:
        obj = json.loads(m.group(0).strip().replace("\\xa0", ""))
    except json.JSONDecodeError:
        return None
    return obj if isinstance(obj, dict) else None


def extract_json(text: str, reference_regex: bool) -> dict | None:
    """The reference's regex extraction, or the shared first-JSON-object extractor (which also
    repairs single quotes and trailing commas)."""
    return reference_json_object(text) if reference_regex else first_json_object(text)


def ratio(num: float, den: float) -> float:
    return num / den if den else math.nan


def fib_scored_item(
    record: dict,
    gold: list,
    pred: list | None,
    blanks: list[bool],
    category_fields: Iterable[str],
    extra_values: dict[str, float] | None = None,
) -> ScoredItem:
    """The scored item both fill-in-the-blank tasks build: per-blank verdicts ``blanks`` (one per
    gold blank, by position), question right only when every blank is; ``pred is None`` means the
    output had no usable JSON object. ``extra_values`` are task-specific sums for the summary."""
    n_right = sum(blanks)
    return ScoredItem(
        gold=gold,
        pred=pred,
        values={
            "blank_correct": float(n_right),
            "blank_total": float(len(gold)),
            "question_correct": float(n_right == len(gold) and len(gold) > 0),
            **(extra_values or {}),
            "parse_failed": float(pred is None),
        },
        metadata={
            "qid": record.get("qid"),
            "blanks": blanks,
            "n_returned": len(pred or []),
            **{f: record.get(f) for f in category_fields},
            "source_info": record.get("source_info"),
        },
    )


def summarize_fib(items: list[ScoredItem], per_blank_ratios: dict[str, str] | None = None) -> dict:
    """Blank-level and question-level accuracy (fractions in [0, 1]) plus counts, over items from
    :func:`fib_scored_item`. ``per_blank_ratios`` adds ``{name: values key}`` sums divided by the
    number of blanks, listed right after ``blank_accuracy``."""
    bc = sum(i.values["blank_correct"] for i in items)
    bt = sum(i.values["blank_total"] for i in items)
    qc = sum(i.values["question_correct"] for i in items)
    return {
        "blank_accuracy": ratio(bc, bt),
        **{name: ratio(sum(i.values[key] for i in items), bt) for name, key in (per_blank_ratios or {}).items()},
        "question_accuracy": ratio(qc, len(items)),
        "n_questions": len(items),
        "n_blanks": int(bt),
        "n_parse_failed": int(sum(i.values["parse_failed"] for i in items)),
    }


def breakdown(items: list, field: str, summarize: Callable[[list], dict]) -> dict[str, dict]:
    """Group scored items by ``item.metadata[field]`` and summarise each group.

    ``summarize`` is the task's own summary function, e.g.
    ``breakdown(items, "hu_specific_dim", matching_fib.summarize)``.
    """
    groups: dict[str, list] = defaultdict(list)
    for it in items:
        key = it.metadata.get(field)
        if isinstance(key, (list, tuple)):
            for k in dict.fromkeys(key):
                groups[str(k)].append(it)
        else:
            groups[str(key)].append(it)
    return {k: summarize(v) for k, v in sorted(groups.items())}
