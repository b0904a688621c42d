"""The task YAML a QA build ends with, graded by ``glotbench run --judge``.

The bare question as the user turn; the task class, grader, scorer and metrics come from the
``judged_short_answer`` task template a benchmark package registers (``bench.task_template``; the
built-in one grades CORRECT / INCORRECT / NOT_ATTEMPTED, metrics CO / NA / IN / CGA / F, with the
shipped grader for the language). The data file is written beside
the YAML (``data.jsonl``: ``id``, ``question``, ``answer`` plus the item's other plain fields) and
named by absolute path, so the YAML runs from anywhere.

:func:`match_task` is the variant for a difficulty filter without a judge: the same data,
``scorer: exact_match`` (the run's own metric), the build reading each reply for a fuzzy match.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

JUDGED_TEMPLATE = "judged_short_answer"


def write_data(items: list[dict], path: Path) -> Path:
    rows = []
    for it in items:
        row = {"id": str(it["id"]), "question": it["question"], "answer": str(it["answer"])}
        for k in ("passage_id", "title", "language"):
            if isinstance(it.get(k), str):
                row[k] = it[k]
        rows.append(row)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def _base(name: str, language: str, data: Path, description: str) -> dict:
    return {
        "name": name,
        "version": "1.0",
        "language": language,
        "description": description,
        "suites": [],
        "source": {"name": f"glotbench build ({name})", "paper": "built with `glotbench build` "
                   "(docs/building-a-benchmark.md), following Chinese SimpleQA §3 and OpenHuEval App. C"},
        "dataset": {"format": "jsonl", "splits": {"test": str(Path(data).resolve())}, "eval_split": "test"},
        "fields": {"id": "id", "question": "question", "target": "answer"},
        "required_fields": ["question"],
        "output_type": "generate",
        "prompt": {"user": "{{ question }}"},
        "generation": {"max_tokens": 256, "temperature": 0.0},
    }


def judged_task(items: list[dict], out_dir: Path, *, name: str, language: str, grader: str | None = None,
                max_tokens: int = 256) -> Path:
    from glotbench.tasks.templates import TASK_TEMPLATES

    out_dir = Path(out_dir)
    data = write_data(items, out_dir / "data.jsonl")
    spec = _base(name, language, data, f"{name}: {len(items)} short factual questions in {language} built with "
                                       f"`glotbench build qa`; graded CORRECT / INCORRECT / NOT_ATTEMPTED by an LLM judge "
                                       f"(CO, NA, IN, CGA, F). Needs --judge.")
    spec["generation"]["max_tokens"] = max_tokens
    spec.update(TASK_TEMPLATES.get(JUDGED_TEMPLATE)(language=language, grader=grader))
    return _dump(spec, out_dir / "task.yaml")


def match_task(items: list[dict], out_dir: Path, *, name: str, language: str, max_tokens: int = 64) -> Path:
    out_dir = Path(out_dir)
    data = write_data(items, out_dir / "data.jsonl")
    spec = _base(name, language, data, f"{name}: difficulty check without a judge (exact match; the build reads replies for a fuzzy match)")
    spec["generation"]["max_tokens"] = max_tokens
    spec.update({"scorer": "exact_match", "metrics": ["exact_match"]})
    return _dump(spec, out_dir / "task.yaml")


def _dump(spec: dict, path: Path) -> Path:
    path.write_text(yaml.safe_dump(spec, allow_unicode=True, sort_keys=False, width=100000), encoding="utf-8")
    return path
