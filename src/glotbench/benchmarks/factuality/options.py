"""The ``options:`` block of a SimpleQA-style task YAML, validated (one-line errors naming the file).

Every option (grader, confidence, judge_sees, judge_max_tokens, judge_rule, prompt_file,
calibration_bins, retrieval, literal_fields, fewshot_pool, data_hint), its default and meaning:
the options table in docs/factuality.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from glotbench.errors import TaskSpecError


class PromptFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str
    key: str
    style: Literal["format", "substitute"] = "substitute"
    default_lang: str | None = None
    langs: list[str] | None = None  # variants offered, for error messages (default: whatever the file holds)


class RetrievalOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    retriever: str = "bm25"
    docs: str
    k: int = 3
    args: dict = {}
    # {passages} and {question}; the question part is the task's own prompt
    template: str = "请参考以下资料回答问题。\n\n{passages}\n\n{question}"


class SimpleQAOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    grader: str
    confidence: bool = False
    judge_sees: Literal["raw", "answer"] = "raw"
    judge_max_tokens: int = 512
    judge_rule: Literal["reference", "strict"] = "reference"
    prompt_file: PromptFile | None = None
    calibration_bins: int = 10
    retrieval: RetrievalOptions | None = None
    literal_fields: list[str] = []
    fewshot_pool: str | None = None
    data_hint: str | None = None


def parse_options(raw: dict, where: str) -> SimpleQAOptions:
    from glotbench.tasks.judging.prompts import GRADERS

    try:
        opts = SimpleQAOptions.model_validate(raw or {})
    except ValidationError as err:
        first = err.errors()[0]
        loc = ".".join(str(p) for p in first["loc"]) or "(top level)"
        msg = "unknown field" if first["type"] == "extra_forbidden" else first["msg"]
        raise TaskSpecError(f"{where}: field 'options.{loc}': {msg}") from None
    if opts.grader not in GRADERS:
        raise TaskSpecError(f"{where}: field 'options.grader': unknown grader {opts.grader!r} "
                            f"(known: {', '.join(sorted(GRADERS))})")
    return opts


def where_of(spec_path: Path | None, name: str) -> str:
    return str(spec_path) if spec_path else f"task {name}"
