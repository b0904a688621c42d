"""HuProverbRea: proverb reasoning in context, as two-choice (2CQ) and open-ended (OE) tasks.

Reference: ``opencompass/datasets/OpenHuEval/HuProverbRea.py`` (see SOURCE.md).

* Context: the turns joined with ``"\\n"`` after stripping each (empty turns dropped) when there
  are several; a single turn is used as it is. ``hu_text`` is ``source_info.proverb``.
* **2CQ**: every item is asked twice, correct option first (gold ``"1"``) and flipped (gold
  ``"2"``). An output parses as ``"1"`` when it contains the character ``1`` and not ``2``, as
  ``"2"`` the other way round; anything else (both digits, neither) is a parse failure. An item
  is CORRECT only when both orders are right; otherwise it is FAIL_PARSE if either order failed
  to parse, else INCORRECT. The three ratios are reported.
* **OE**: the model explains the speaker's intention in one sentence; a judge compares it with
  a reference analysis and answers YES/NO. ``"yes"`` in the lower-cased reply without ``"no"``
  is correct, ``"no"`` without ``"yes"`` incorrect, anything else unclear (substring tests, as
  in the reference: a reply like "not sure" contains "no").
"""

from __future__ import annotations

from collections import defaultdict

from glotbench.errors import DataError
from glotbench.benchmarks.openhueval.common import (
    DATA_DIR,
    load_jsonl,
    load_own_prompts,
    load_prompts,
    pick_template,
    ratio,
    strip_think,
)
from glotbench.scoring.metrics import ScoredItem

DATA_FILE = f"{DATA_DIR}/HuProverbRea.jsonl"
PROMPT_FILE = "HuProverbRea_prompts.json"
REQUIRED = ("qid", "context", "options", "answer", "hu_specific_dim", "source_info")
CATEGORY_FIELDS = ("hu_specific_dim",)
ORDERS = ("correct_first", "flipped")  # gold "1" / gold "2"

CORRECT, INCORRECT, FAIL_PARSE, UNCLEAR = "correct", "incorrect", "fail_parse", "unclear"


def load(path: str = DATA_FILE) -> list[dict]:
    recs = load_jsonl(path, REQUIRED)
    for r in recs:
        if r["answer"] not in (0, 1) or len(r["options"]) != 2:
            raise DataError(f"{path}: record {r['qid']}: field 'answer' must be 0 or 1 with exactly 2 options")
        if "proverb" not in r["source_info"]:
            raise DataError(f"{path}: record {r['qid']} lacks field 'source_info.proverb'")
    return recs


def join_context(context: list[str] | str) -> str:
    if isinstance(context, str):
        return context
    if len(context) > 1:
        return "\n".join(x.strip() for x in context if x)
    return context[0]


def correct_option(record: dict) -> str:
    return record["options"][record["answer"]]


def wrong_option(record: dict) -> str:
    return record["options"][1 - record["answer"]]


def _outcome_item(record: dict, gold, pred, outcome: str, **extra_metadata) -> ScoredItem:
    """The scored item both variants build: correct when ``outcome`` is :data:`CORRECT`."""
    return ScoredItem(
        gold=gold,
        pred=pred,
        values={"correct": float(outcome == CORRECT)},
        metadata={
            "qid": record.get("qid"),
            "outcome": outcome,
            **extra_metadata,
            **{f: record.get(f) for f in CATEGORY_FIELDS},
            "proverb": record["source_info"].get("proverb"),
        },
    )


def _summarize_outcomes(items: list[ScoredItem], other: str) -> dict:
    """Accuracy, incorrect ratio and the ratio of the variant's third outcome ``other``
    (:data:`FAIL_PARSE` for 2CQ, :data:`UNCLEAR` for OE, reported as ``"<other>_ratio"``)."""
    counts = defaultdict(int)
    for i in items:
        counts[i.metadata["outcome"]] += 1
    n = len(items)
    return {
        "accuracy": ratio(counts[CORRECT], n),
        "incorrect_ratio": ratio(counts[INCORRECT], n),
        f"{other}_ratio": ratio(counts[other], n),
        "n_items": n,
    }


# ---------------------------------------------------------------- 2CQ

def build_2cq_prompts(record: dict, prompt_lang: str = "en") -> list[dict]:
    """Two requests per item: ``{"order", "gold", "prompt"}`` for each of :data:`ORDERS`.

    OpenHuEval ships only the English 2CQ prompt; ``hu`` is glotbench's own translation.
    """
    tpl = pick_template(
        load_prompts(PROMPT_FILE)["INSTRUCTIONS_DIRECT_QA"], "HuProverbRea 2CQ", prompt_lang, PROMPT_FILE,
        own=load_own_prompts()["HuProverbRea_2CQ"],
    )
    base = tpl.replace("{hu_text}", record["source_info"]["proverb"])
    cor, wrong = correct_option(record), wrong_option(record)
    out = []
    for order, (o1, o2), gold in ((ORDERS[0], (cor, wrong), "1"), (ORDERS[1], (wrong, cor), "2")):
        p = base.replace("{option1}", o1).replace("{option2}", o2)
        out.append({"order": order, "gold": gold, "prompt": p.replace("{context}", join_context(record["context"]))})
    return out


def parse_2cq(output: str) -> str:
    """``"1"``, ``"2"`` or ``""`` (parse failure), by the reference's digit test.

    An inline ``<think>`` trace is dropped first (its digits would make every answer a failure).
    """
    text = strip_think(output)
    if "1" in text and "2" not in text:
        return "1"
    if "2" in text and "1" not in text:
        return "2"
    return ""


def score_2cq(record: dict, outputs: dict[str, str]) -> ScoredItem:
    """One item from its two outputs, keyed by order (``"correct_first"``, ``"flipped"``)."""
    missing = [o for o in ORDERS if o not in outputs]
    if missing:
        raise DataError(f"HuProverbRea 2CQ record {record.get('qid')}: no output for order {missing[0]!r}")
    preds = {o: parse_2cq(outputs[o]) for o in ORDERS}
    golds = {ORDERS[0]: "1", ORDERS[1]: "2"}
    right = {o: preds[o] == golds[o] for o in ORDERS}
    if all(right.values()):
        outcome = CORRECT
    elif any(preds[o] == "" for o in ORDERS):
        outcome = FAIL_PARSE
    else:
        outcome = INCORRECT
    return _outcome_item(record, golds, preds, outcome, order_correct=right)


def summarize_2cq(items: list[ScoredItem]) -> dict:
    return _summarize_outcomes(items, FAIL_PARSE)


# ---------------------------------------------------------------- OE

def build_oe_prompt(record: dict, prompt_lang: str = "en") -> str:
    """The open-ended prompt (``en`` or ``hu``, both shipped by the benchmark)."""
    tpl = pick_template(load_prompts(PROMPT_FILE)["INSTRUCTIONS_OE_DIR_QA"], "HuProverbRea OE", prompt_lang, PROMPT_FILE)
    return tpl.replace("{hu_text}", record["source_info"]["proverb"]).replace("{context}", join_context(record["context"]))


def build_oe_judge_messages(record: dict, prediction: str, reference: str = "correct_option") -> list[dict]:
    """The benchmark's judge request as chat messages (system + user).

    ``reference`` picks the "first analysis" the judge compares with: ``"correct_option"``
    (the Hungarian correct option, what the reference code passes) or ``"en_expl"`` (the
    proverb's English explanation, which the paper's §2.4 names as a reference).
    The trace of a reasoning model is not shown to the judge.
    """
    tpls = load_prompts(PROMPT_FILE)["judge_prompt_template"]
    if reference == "correct_option":
        ref = correct_option(record)
    elif reference == "en_expl":
        ref = record["source_info"].get("en_expl")
        if not ref:
            raise DataError(f"HuProverbRea record {record.get('qid')} lacks field 'source_info.en_expl'")
    else:
        raise ValueError(f"reference must be 'correct_option' or 'en_expl', not {reference!r}")
    user = tpls["en_user"]
    # The reference fills the template with str.format; plain substitution gives the same text
    # and cannot trip over braces in the model's answer. The prediction goes in last.
    for name, value in (
        ("proverb", record["source_info"]["proverb"]),
        ("conversation", join_context(record["context"])),
        ("answer", ref),
        ("raw_pred", strip_think(prediction)),
    ):
        user = user.replace("{" + name + "}", value)
    return [{"role": "system", "content": tpls["en_system"]}, {"role": "user", "content": user}]


def parse_oe_verdict(judge_output: str) -> str:
    """``"correct"``, ``"incorrect"`` or ``"unclear"`` by the reference's yes/no substring test."""
    low = strip_think(judge_output).lower()
    if "yes" in low and "no" not in low:
        return CORRECT
    if "no" in low and "yes" not in low:
        return INCORRECT
    return UNCLEAR


def score_oe(record: dict, judge_output: str) -> ScoredItem:
    verdict = parse_oe_verdict(judge_output)
    return _outcome_item(record, correct_option(record), verdict, verdict)


def summarize_oe(items: list[ScoredItem]) -> dict:
    return _summarize_outcomes(items, UNCLEAR)
