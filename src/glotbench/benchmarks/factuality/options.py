"""The ``options:`` block of a SimpleQA-style task YAML, validated (one-line errors naming the file).

    options:
      grader: chinese_simpleqa        # judge prompt: chinese_simpleqa | chinese_simpleqa_en | husimpleqa
      confidence: false               # the prompt asks for {"answer", "confidence_score"}: report calibration
      judge_sees: raw                 # what the judge grades: raw (the reply, minus any thinking trace) or
                                      #   answer (the "answer" field of a JSON reply; raw when it has none)
      judge_max_tokens: 512
      judge_rule: reference           # headline grade: reference (the benchmark's own reply rule) | strict
                                      #   (glotbench's parse, judge errors apart); the other is scored beside it
      prompt_file:                    # the evaluated model's prompt, read from the benchmark's own file
        path: openhueval/prompts/HuSimpleQA_infer_prompts.json   # a benchmark package's files/ first, else the data root
        key: "INSTRUCTIONS.{lang}"    # dotted key; {lang} is --prompt-lang (or default_lang)
        style: substitute             # substitute ({name} replaced once) | format (Python str.format)
        default_lang: hu
      calibration_bins: 10            # reliability-table bins (ECE)
      retrieval:                      # retrieval-augmented mode (docs/factuality.md)
        retriever: bm25               # built-in local BM25 (bm25s) | "module:factory"
        docs: rag_docs/               # folder of .txt/.md documents (data root or absolute; $GLOTBENCH_RAG_DOCS wins)
        k: 3
      literal_fields: [metadata]      # CSV columns holding Python literals (simple-evals' metadata column)
      fewshot_pool: chinese_simpleqa_fewshot.jsonl   # solved examples for base models (factuality/pools/ or a path)
      data_hint: "..."                # added to the error when the data file is missing
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
