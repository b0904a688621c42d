"""HuWildBench: real Hungarian user questions, answered freely and scored 1-10 by a checklist judge.

Record format (WildBench; SOURCE.md): ``session_id``, ``turn`` (list of ``{"role", "content"}``,
the last user turn is the query), ``checklist`` (list of str), ``primary_tag`` (str),
``secondary_tag`` (list of str). Tags map to four groups via ``HuWildBench_task_groups.json``.

The model sees the conversation itself (OpenCompass template ``{dialogue}``). The judge gets
WildBench's ``score_prompt`` with ``{history}`` (every turn but the last, as
``"USER: ...\\n\\n"`` / ``"ASSISTANT: ...\\n\\n"``), ``{user_query}`` (the last turn),
``{checklist}`` (``"- item\\n"`` per item) and ``{prediction}``. The score is read with the
reference's pattern ``"score": "(.*?)"`` and ``float``. The prompt file, its placeholders and the
reply rule are declared in ``hu_wildbench.judge.yaml`` (next to the task file), which the generic
judge reader (:mod:`glotbench.tasks.judging.declared`) applies.

Task score (paper §2.2): "Different from Lin et al. (2024), our final scores are calculated as
the average of all test sample scores, with each score multiplied by 10." So there is no
WildBench ``(s - 5) * 2`` rescaling: task score = mean(judge score) × 10, range 10-100.
"""

from __future__ import annotations

import math
from collections import defaultdict
from functools import cache

from glotbench.errors import DataError
from glotbench.tasks.judging.declaration import JUDGE_SUFFIX, find_judge_file, load_judge_file
from glotbench.tasks.judging.declared import DeclaredJudge
from glotbench.benchmarks.openhueval.common import (
    DATA_DIR,
    first_json_object,
    load_jsonl,
    load_prompts,
    strip_think,
)
from glotbench.prompts import dialogue
from glotbench.scoring.metrics import ScoredItem

DATA_FILE = f"{DATA_DIR}/HuWildBench.jsonl"  # not in the shared snapshot: `glotbench data pull` (git blob pin)
JUDGE_FILE = "HuWildBench_judge_prompts.json"
GROUPS_FILE = "HuWildBench_task_groups.json"
REQUIRED = ("session_id", "turn", "checklist", "primary_tag", "secondary_tag")
JUDGE_NAME = "hu_wildbench"  # hu_wildbench.judge.yaml


def load(path: str = DATA_FILE) -> list[dict]:
    recs = load_jsonl(path, REQUIRED)
    for r in recs:
        sid = r["session_id"]
        turns = r["turn"]
        if not isinstance(turns, list) or not turns:
            raise DataError(f"{path}: record {sid}: field 'turn' must be a non-empty list")
        for k, t in enumerate(turns):
            if not isinstance(t, dict) or t.get("role") not in ("user", "assistant") or not isinstance(t.get("content"), str):
                raise DataError(f"{path}: record {sid}: field 'turn[{k}]' must be {{'role': 'user'|'assistant', 'content': str}}")
        if turns[-1]["role"] != "user":
            raise DataError(f"{path}: record {sid}: the last item of field 'turn' must be a user turn")
        if not isinstance(r["checklist"], list) or not all(isinstance(c, str) for c in r["checklist"]):
            raise DataError(f"{path}: record {sid}: field 'checklist' must be a list of strings")
        if not isinstance(r["secondary_tag"], list):
            raise DataError(f"{path}: record {sid}: field 'secondary_tag' must be a list")
    return recs


def build_messages(record: dict) -> list[dict]:
    """The chat the model answers: the conversation's turns as they are."""
    return [{"role": t["role"], "content": t["content"]} for t in record["turn"]]


def history_text(record: dict) -> str:
    """Every turn but the last as WildBench lays it out (:func:`glotbench.prompts.dialogue.transcript`,
    the layout a multi-turn task's judge reads too)."""
    return dialogue.transcript(record["turn"][:-1])


def checklist_markdown(record: dict) -> str:
    return "".join(f"- {c}\n" for c in record["checklist"])


@cache
def judge_declaration() -> DeclaredJudge:
    """The checklist judge as declared in ``hu_wildbench.judge.yaml`` (among the task folders)."""
    path = find_judge_file(JUDGE_NAME)
    if path is None:
        raise DataError(f"judge declaration {JUDGE_NAME}{JUDGE_SUFFIX} not found among the task folders")
    return DeclaredJudge(load_judge_file(path))


def judge_variables(record: dict, prediction: str) -> dict:
    return {"history": history_text(record), "user_query": record["turn"][-1]["content"],
            "checklist": checklist_markdown(record), "answer": strip_think(prediction)}


def build_judge_prompt(record: dict, prediction: str, judge: DeclaredJudge | None = None) -> str:
    """WildBench's single-answer ``score_prompt``, filled in the reference's order.

    An inline ``<think>`` trace of the answering model is dropped from the prediction.
    """
    judge = judge or judge_declaration()
    return judge.messages(judge_variables(record, prediction), None, task="openhueval.hu_wildbench")[-1]["content"]


def parse_judgement(text: str, lenient: bool = False, judge: DeclaredJudge | None = None) -> dict:
    """``{"strengths", "weaknesses", "score"}``; ``score`` is a float or ``None``.

    The score follows the reference exactly (``"score": "(.*?)"``, first match, ``float``);
    ``lenient=True`` also accepts an unquoted number (``"score": 8``) when that fails.
    Strengths and weaknesses come from the judge's JSON object when it parses, else ``None``.
    """
    verdict = (judge or judge_declaration()).read(text or "", fallback=lenient)
    obj = first_json_object(strip_think(text or "")) or {}
    return {
        "strengths": obj.get("strengths") if isinstance(obj.get("strengths"), str) else None,
        "weaknesses": obj.get("weaknesses") if isinstance(obj.get("weaknesses"), str) else None,
        "score": verdict["score"],
    }


def task_groups(record: dict, mapping: dict | None = None) -> list[str]:
    """The distinct groups of ``[primary_tag] + secondary_tag``; unknown tags are left out."""
    mapping = mapping if mapping is not None else load_prompts(GROUPS_FILE)["TASK_GROUP_NEW"]
    tags = [record["primary_tag"], *record["secondary_tag"]]
    return list(dict.fromkeys(mapping[t] for t in tags if t in mapping))


def score(record: dict, judge_output: str, lenient: bool = False, mapping: dict | None = None) -> ScoredItem:
    j = parse_judgement(judge_output, lenient)
    return ScoredItem(
        gold=None,
        pred=j["score"],
        values={"score": j["score"]},
        metadata={
            "session_id": record.get("session_id"),
            "primary_tag": record.get("primary_tag"),
            "secondary_tag": record.get("secondary_tag"),
            "task_group": task_groups(record, mapping),
            "strengths": j["strengths"],
            "weaknesses": j["weaknesses"],
        },
    )


def summarize(items: list[ScoredItem]) -> dict:
    """``wb_score`` = mean judge score × 10 over items with a parsed score; the rest are counted."""
    scores = [i.values["score"] for i in items if i.values.get("score") is not None]
    return {
        "wb_score": 10 * sum(scores) / len(scores) if scores else math.nan,
        "n_items": len(items),
        "n_unparsed": len(items) - len(scores),
    }


def summarize_by_group(items: list[ScoredItem]) -> dict[str, dict]:
    """:func:`summarize` per task group (an item counts once in each of its groups)."""
    groups: dict[str, list] = defaultdict(list)
    for i in items:
        for g in i.metadata.get("task_group") or []:
            groups[g].append(i)
    return {g: summarize(v) for g, v in sorted(groups.items())}

