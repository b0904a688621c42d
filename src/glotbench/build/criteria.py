"""The papers' criteria for a QA item, each checked by a judge model (one call per criterion).

Criteria (Chinese SimpleQA §3.1 and Fig. 19; HuSimpleQA App. C.4, criteria 2-4):

* ``unique_answer``: exactly one clear, undisputed answer (one entity, not a list);
* ``time_stable``: the answer does not change over time;
* ``grounded``: the passage states the answer (and the answer is not inferable from the question);
* ``not_from_title``: the question cannot be answered from the passage's title alone (a passage
  without a title passes, with the verdict ``no_title``);
* ``unambiguous``: the question is precise enough to be answered on its own (scope of time/place
  stated, no nested sub-questions);
* ``csqa_fig19``: Chinese SimpleQA's own criteria check, its Fig. 19 prompt verbatim (one call for
  its three criteria; in the defaults for Chinese items, beside the five).

The judge explains, then ends with ``VERDICT: PASS`` or ``VERDICT: FAIL`` (the last such line
counts; Chinese SimpleQA's 【是】/【否】 and YES/NO/ANO/NE are read too). A reply with no verdict is
``unparsed``: with ``on_unparsed="drop"`` (default) the item is dropped for it, with ``"keep"`` it
passes, recorded as such.
"""

from __future__ import annotations

import re

from glotbench.build.calls import Call, chat

CRITERIA = {
    "unique_answer": "The question has exactly one clear and undisputed answer: a single entity, not several, "
                     "and not a matter of opinion.",
    "time_stable": "The answer to the question does not change over time (it does not depend on when the question is asked).",
    "grounded": "The passage states the given answer to the question, and the answer cannot be inferred from the "
                "wording of the question itself.",
    "not_from_title": "The question cannot be answered from the passage's title alone (without the passage's text).",
    "unambiguous": "The question is precise and specific enough to be answered on its own, without the passage: "
                   "no vague wording, no nested sub-questions, and the expected scope of the answer (e.g. year, city) is clear.",
    # Chinese SimpleQA's own check, Fig. 19 verbatim (objective, one undisputed entity, stable over time;
    # the judge sees the question only and answers 【是】/【否】): in the defaults for Chinese items
    "csqa_fig19": "Chinese SimpleQA Fig. 19 (verbatim Chinese prompt)",
}
DEFAULT = ["unique_answer", "time_stable", "grounded", "not_from_title", "unambiguous"]


def default_criteria(items: list[dict]) -> list[str]:
    """The five; for Chinese items the paper's own Fig. 19 check as well."""
    zh = any(it.get("language") == "zh" for it in items)
    return DEFAULT + (["csqa_fig19"] if zh else [])

TEMPLATE = """You are a data quality checker. Check whether the question-answer pair below meets this requirement:

{criterion}

{context}Question: {question}
Answer: {answer}

Explain briefly, then end with one line: "VERDICT: PASS" if the requirement is met, or "VERDICT: FAIL" if it is not."""

_VERDICT = re.compile(r"(?:verdict|verdikt|评价|结论)\s*[:：]?\s*\**\s*(pass|fail|yes|no|ano|ne)\b|【(是|否|合格|不合格)】", re.I)
_PASS = {"pass", "yes", "ano", "是", "合格"}


def context_for(name: str, item: dict) -> str:
    if name == "grounded":
        return f"Passage: {item.get('passage', '')}\n\n"
    if name == "not_from_title":
        return f"Title of the passage: {item.get('title', '')}\n\n"
    return ""


def prompt_for(name: str, item: dict) -> str:
    if name == "csqa_fig19":
        from glotbench.build.prompts_zh import CSQA_FIG19, FIG19_INPUT

        return CSQA_FIG19 + FIG19_INPUT.replace("{question}", item["question"])
    return (TEMPLATE.replace("{criterion}", CRITERIA[name]).replace("{context}", context_for(name, item))
            .replace("{question}", item["question"]).replace("{answer}", str(item["answer"])))


def applies(name: str, item: dict) -> bool:
    return not (name == "not_from_title" and not (item.get("title") or "").strip())


def criteria_calls(items: list[dict], names: list[str], max_tokens: int = 160) -> list[Call]:
    return [Call(f"{it['id']}#{name}", chat(prompt_for(name, it), max_tokens=max_tokens))
            for it in items for name in names if applies(name, it)]


def parse_verdict(reply: str) -> str:
    """``pass``, ``fail`` or ``unparsed`` (the last verdict in the reply counts)."""
    found = _VERDICT.findall(reply or "")
    if not found:
        return "unparsed"
    word = (found[-1][0] or found[-1][1]).lower()
    return "pass" if word in _PASS else "fail"
