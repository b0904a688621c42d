"""HuStandardFIB: open fill-in-the-blank scored by fuzzy matching; blank- and question-level accuracy.

The reference rule (OpenCompass ``HuStandardFIBEvaluator``, quoted from its ``score``)::

    std_ans = [re.sub(r'#\\d+#', '', ans).split(';') for ans in refer['answers']]
    ...
    model_ans = [re.sub(r'#\\d+#', '', ans).split(';') for ans in data.get('answers', [])]
    for ans_idx, ans_list in enumerate(std_ans):
        if ans_idx >= len(model_ans):
            is_question_correct = False
            blank_wise_correctness.append(False)
            continue
        model_list = model_ans[ans_idx]
        is_blank_correct = True
        for ans in ans_list:
            best_match = max(model_list, key=lambda model: fuzz.ratio(ans, model))
            if fuzz.ratio(ans, best_match) > 70:  # check threshold
                blank_correct += 1
            else:
                is_blank_correct = False
                is_question_correct = False

So: the ``#k#`` prefix is removed and both gold and predicted entries are split on ``;``; there is
NO other normalisation (no case folding, no whitespace stripping). Blanks are matched by
position. For every gold variant the best predicted variant is found; the blank is right when
``fuzz.ratio > 70`` for EVERY gold variant. ``fuzzywuzzy.fuzz.ratio`` is an integer
(``int(round(100 * ratio))``); we compute it with rapidfuzz (the same Indel ratio as
python-Levenshtein, which fuzzywuzzy uses when installed) and round the same way, so a raw
70.4 is 70 and does not pass.

One quirk is kept visible rather than copied silently: the reference's reported blank-level
number adds 1 per gold VARIANT that passes (``blank_correct += 1`` inside the variant loop) while
its denominator counts blanks, so blanks with several accepted variants can count more than
once. :func:`summarize` reports the per-blank accuracy (``blank_accuracy``, what the paper
defines) and the reference's number (``blank_accuracy_reference``) side by side.
"""

from __future__ import annotations

import re

from rapidfuzz import fuzz

from glotbench.benchmarks.openhueval.common import (
    DATA_DIR,
    extract_json,
    fib_scored_item,
    load_jsonl,
    load_own_prompts,
    load_prompts,
    pick_template,
    strip_think,
    summarize_fib,
)
from glotbench.scoring.metrics import ScoredItem

DATA_FILE = f"{DATA_DIR}/HuStandardFIB.jsonl"
PROMPT_FILE = "HuStandardFIB_prompts.json"
REQUIRED = ("qid", "instruction", "questions", "answers", "hu_specific_dim")
CATEGORY_FIELDS = ("hu_specific_dim",)
THRESHOLD = 70
_BLANK_TAG = re.compile(r"#\d+#")


def load(path: str = DATA_FILE) -> list[dict]:
    return load_jsonl(path, REQUIRED)


def build_prompt(record: dict, prompt_lang: str = "en") -> str:
    """The benchmark's 1-shot prompt. OpenHuEval ships only ``en``; ``hu`` is glotbench's own
    translation (``prompts_hu_glotbench.json``, version ``glotbench-hu-v1``)."""
    tpl = pick_template(
        load_prompts(PROMPT_FILE)["INSTRUCTIONS"], "HuStandardFIB", prompt_lang, PROMPT_FILE,
        own=load_own_prompts()["HuStandardFIB"],
    )
    out = tpl.replace("{hu_specific_dim}", str(record["hu_specific_dim"]))
    out = out.replace("{questions}", str(list(record["questions"])))
    return out.replace("{instruction}", str(record["instruction"]))


def split_variants(entry) -> list[str]:
    """``"#3#menlevéllel;menlevél"`` -> ``["menlevéllel", "menlevél"]`` (reference preprocessing)."""
    return _BLANK_TAG.sub("", str(entry)).split(";")


def fuzzy_ratio(a: str, b: str) -> int:
    """``fuzzywuzzy.fuzz.ratio``: integer percentage (Python ``round``)."""
    return round(fuzz.ratio(a, b))


def parse_answer(output: str, reference_regex: bool = False) -> list[list[str]] | None:
    """Per blank, the predicted variants; ``None`` when there is no usable JSON object."""
    obj = extract_json(strip_think(output), reference_regex)
    if obj is None:
        return None
    ans = obj.get("answers", [])
    if not isinstance(ans, (list, tuple)):
        return []
    return [split_variants(a) for a in ans]


def judge_blank(gold_variants: list[str], pred_variants: list[str], threshold: int = THRESHOLD) -> tuple[bool, int]:
    """(blank right?, number of gold variants that passed) under the reference rule."""
    hits = 0
    for g in gold_variants:
        best = max(pred_variants, key=lambda p: fuzzy_ratio(g, p))
        if fuzzy_ratio(g, best) > threshold:
            hits += 1
    return hits == len(gold_variants), hits


def score(record: dict, output: str, reference_regex: bool = False, threshold: int = THRESHOLD) -> ScoredItem:
    gold = [split_variants(a) for a in record["answers"]]
    pred = parse_answer(output, reference_regex)
    got = pred or []
    blanks: list[bool] = []
    variant_hits = 0
    for i, g in enumerate(gold):
        if i >= len(got):
            blanks.append(False)
            continue
        ok, hits = judge_blank(g, got[i], threshold)
        blanks.append(ok)
        variant_hits += hits
    return fib_scored_item(record, gold, pred, blanks, CATEGORY_FIELDS, {"variant_hits": float(variant_hits)})


def summarize(items: list[ScoredItem]) -> dict:
    return summarize_fib(items, {"blank_accuracy_reference": "variant_hits"})
