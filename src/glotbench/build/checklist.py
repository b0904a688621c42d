"""A per-question checklist written by a judge model, in the HuWildBench record format.

OpenHuEval App. B.4: two models (GPT-4o, Claude-3.5) each write 3-5 checklist items per question,
merged into one list of 6-10; questions with fewer than 8 are dropped (after human review). Here
each ``--judge`` writes ``n`` items in the task's language, the lists are merged in judge order
(exact repeats, ignoring case, once), cut at ``max_items``; questions with fewer than
``min_items`` readable items are dropped with the count as the reason.

The output record is what a checklist-judged task (HuWildBench's) reads: ``session_id``, ``turn``
(``[{"role": "user", "content": question}]`` unless the item already has a conversation),
``checklist`` (list of str), ``primary_tag`` (str), ``secondary_tag`` (list of str).
"""

from __future__ import annotations

import re

from glotbench.build.calls import Call, chat
from glotbench.build.qa import LANG_NAMES

PROMPT = """Write a checklist for judging answers to the user's question below. Each checklist item asks about one specific aspect of a good answer (correctness, completeness, relevance, clarity, what the answer must contain). Write {n} items in {language}, one per line, each starting with "- ".

Question: {question}

Checklist:"""

_ITEM = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+(.+?)\s*$", re.M)


def question_of(item: dict) -> str:
    if isinstance(item.get("turn"), list) and item["turn"]:
        return str(item["turn"][-1].get("content", ""))
    return str(item.get("question", ""))


def checklist_calls(items: list[dict], language: str, n: int = 5, max_tokens: int = 300) -> list[Call]:
    return [Call(str(it["id"]), chat(PROMPT.replace("{n}", str(n)).replace("{language}", LANG_NAMES.get(language, language))
                                     .replace("{question}", question_of(it)), max_tokens=max_tokens)) for it in items]


def parse_checklist(reply: str, max_items: int) -> list[str]:
    seen, out = set(), []
    for m in _ITEM.finditer(reply or ""):
        text = m.group(1).strip()
        if text and text.casefold() not in seen:
            seen.add(text.casefold())
            out.append(text)
    return out[:max_items]


def wildbench_record(item: dict, checklist: list[str], primary_tag: str) -> dict:
    rec = dict(item)
    rec["session_id"] = str(item.get("session_id") or item["id"])
    if not isinstance(item.get("turn"), list):
        rec["turn"] = [{"role": "user", "content": question_of(item)}]
    rec["checklist"] = checklist
    rec["primary_tag"] = str(item.get("primary_tag") or primary_tag)
    sec = item.get("secondary_tag")
    rec["secondary_tag"] = sec if isinstance(sec, list) else ([sec] if sec else [])
    return rec
