"""HuMatchingFIB: pick an option letter for each ``#k#`` blank; blank- and question-level accuracy.

Reference (OpenCompass ``HuMatchingFIBEvaluator``, see shared/data/openhueval/SOURCE.md): the
first ``{...}`` JSON object of the output is read, its ``"answer"`` list is compared with the
gold list **position by position, by exact string equality** (``"#0#C" == "#0#C"``). A question
is right only when every blank is right. Blanks the model did not return (a shorter list, no
JSON, JSON without ``"answer"``) are wrong and still count in the denominator.
"""

from __future__ import annotations

from glotbench.benchmarks.openhueval.common import (
    DATA_DIR,
    extract_json,
    fib_scored_item,
    load_jsonl,
    load_prompts,
    pick_template,
    strip_think,
    summarize_fib,
)
from glotbench.scoring.metrics import ScoredItem

DATA_FILE = f"{DATA_DIR}/HuMatchingFIB.jsonl"
PROMPT_FILE = "HuMatchingFIB_prompts.json"
REQUIRED = ("qid", "question", "options", "answer", "hu_specific_dim")
CATEGORY_FIELDS = ("hu_specific_dim",)


def load(path: str = DATA_FILE) -> list[dict]:
    return load_jsonl(path, REQUIRED)


def build_prompt(record: dict, prompt_lang: str = "en") -> str:
    """The benchmark's 1-shot prompt (``en`` or ``hu``), filled as OpenCompass fills it:
    ``{question}`` verbatim, ``{options}`` as ``str(list)``, ``{hu_specific_dim}`` verbatim."""
    tpl = pick_template(load_prompts(PROMPT_FILE)["INSTRUCTIONS"], "HuMatchingFIB", prompt_lang, PROMPT_FILE)
    # One pass per placeholder in template order, like OpenCompass; the record's own text is
    # inserted last so braces inside it are never re-substituted.
    out = tpl.replace("{hu_specific_dim}", str(record["hu_specific_dim"]))
    out = out.replace("{options}", str(list(record["options"])))
    return out.replace("{question}", str(record["question"]))


def parse_answer(output: str, reference_regex: bool = False) -> list | None:
    """The model's ``"answer"`` list, or ``None`` when the output has no usable JSON object.

    Inline ``<think>`` traces are dropped first. ``reference_regex=True`` reproduces the
    reference's ``\\{.*?\\}`` extraction exactly; the default takes the first balanced JSON object
    (same result on well-formed answers; also survives braces in the surrounding text).
    A JSON object without ``"answer"`` gives ``[]`` (reference: ``data.get('answer', [])``).
    """
    obj = extract_json(strip_think(output), reference_regex)
    if obj is None:
        return None
    ans = obj.get("answer", [])
    return list(ans) if isinstance(ans, (list, tuple)) else []


def score(record: dict, output: str, reference_regex: bool = False) -> ScoredItem:
    gold = list(record["answer"])
    pred = parse_answer(output, reference_regex)
    got = pred or []
    blanks = [i < len(got) and got[i] == g for i, g in enumerate(gold)]
    return fib_scored_item(record, gold, pred, blanks, CATEGORY_FIELDS)


def summarize(items: list[ScoredItem]) -> dict:
    """Blank-level and question-level accuracy (fractions in [0, 1]) plus counts."""
    return summarize_fib(items)
