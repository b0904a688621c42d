"""Czech-Bench's answer parsing and denominators, restated (not copied) from its evaluators.

Every rule takes the raw model output and the gold answer and returns per-item values whose
names start with ``cb_``. An item the reference would call unparseable gets ``cb_parsed = 0``
and *no* ``cb_correct``: the ``cb_*`` metrics (means over items that have the value) then
leave it out of the denominator, as the reference does. glotbench's own numbers (``accuracy``,
``macro_f1``: unparseable counted wrong) are reported beside them.

Rules (``options.parse`` in the task YAML):

``int``
    first whitespace token, ``strip()``, ``strip(")")``; ``int()`` of it (empty output: the
    whole output, which fails). Parsed items keep ``cb_gold``/``cb_pred`` for macro-F1.
``letter_abcd``
    ARC: the token equal to the gold letter is correct; else a token longer than one
    character or not a substring of ``"ABCD"`` is unparseable; else wrong.
``letter_abcde``
    Klokánek: correct if equal to the gold; else unparseable if not a substring of
    ``"ABCDE"`` (so an empty output, or ``"AB"``, counts as a wrong answer); else wrong.
``gsm8k``
    the first ``#### ([\\d,-]+)`` in the output, commas removed, ``int()``; absolute error on
    every parsed item, relative error only where the gold is not 0.
``sqad`` / ``squad``
    every item counts; see :mod:`glotbench.benchmarks.czech_bench.qa_levels`.
"""

from __future__ import annotations

import re

from glotbench.scoring.metrics import Metric


def first_token(text: str) -> str:
    parts = text.split()
    return parts[0].strip().strip(")") if parts else text


def parse_int(text: str, gold) -> dict:
    try:
        pred = int(first_token(text))
    except ValueError:
        return {"cb_parsed": 0.0}
    return {"cb_parsed": 1.0, "cb_correct": float(pred == int(gold)), "cb_gold": float(int(gold)), "cb_pred": float(pred)}


def parse_letter(text: str, gold, letters: str, single_char: bool) -> dict:
    res = first_token(text)
    if res == str(gold):
        return {"cb_parsed": 1.0, "cb_correct": 1.0}
    if (single_char and len(res) > 1) or res not in letters:
        return {"cb_parsed": 0.0}
    return {"cb_parsed": 1.0, "cb_correct": 0.0}


_GSM = re.compile(r"#### ([\d,-]+)")


def parse_gsm8k(text: str, gold) -> dict:
    m = _GSM.search(text)
    try:
        pred = int(m.group(1).replace(",", ""))  # type: ignore[union-attr]
    except (AttributeError, ValueError):
        return {"cb_parsed": 0.0}
    gold = int(gold)
    err = abs(gold - pred)
    out = {"cb_parsed": 1.0, "cb_correct": float(pred == gold), "cb_abs_error": float(err)}
    if gold != 0:
        out["cb_rel_error"] = abs(err / gold)
    return out


def reference_values(rule: str, text: str, gold) -> dict:
    if rule == "int":
        return parse_int(text, gold)
    if rule == "letter_abcd":
        return parse_letter(text, gold, "ABCD", single_char=True)
    if rule == "letter_abcde":
        return parse_letter(text, gold, "ABCDE", single_char=False)
    if rule == "gsm8k":
        return parse_gsm8k(text, gold)
    raise KeyError(f"unknown Czech-Bench parse rule {rule!r}")


# ----------------------------------------------------------------------------- metrics


_REF = "Czech-Bench reference rule: unparseable answers left out"


class CB:
    """The cb_* metrics as attributes, so the package registers them lazily by reference
    (``glotbench.benchmarks.czech_bench.metrics:CB.cb_accuracy``, see glotbench.builtins): looking a
    metric up imports this module, listing metrics does not."""

    # measure: the thesis' "Acc" / "F1" rows; glotbench's accuracy / macro_f1 / numeric_match measure
    # the same, so a task listing cb_* first has them as its headline and glotbench's as secondary.
    # parsed_key: the * / invalid flags of a task headed by these count the reference's unparseable.
    cb_accuracy = Metric("cb_accuracy", key="cb_correct", measure="accuracy", parsed_key="cb_parsed",
                         description=f"accuracy; {_REF}")
    cb_macro_f1 = Metric("cb_macro_f1", kind="label", params={"stat": "macro_f1", "gold_key": "cb_gold", "pred_key": "cb_pred"},
                         measure="macro_f1", parsed_key="cb_parsed",
                         description=f"macro-F1 over the labels seen (evaluate's f1); {_REF}")
    cb_accuracy_labelled = Metric("cb_accuracy_labelled", key="cb_correct_labelled", measure="accuracy",
                                  role="secondary", parsed_key="cb_parsed",
                                  description=f"accuracy over the rows with a gold label (glotbench's variant: SNLI's -1 rows left out); {_REF}")
    cb_macro_f1_labelled = Metric("cb_macro_f1_labelled", kind="label",
                                  params={"stat": "macro_f1", "gold_key": "cb_gold_labelled", "pred_key": "cb_pred_labelled"},
                                  measure="macro_f1", role="secondary", parsed_key="cb_parsed",
                                  description=f"macro-F1 over the rows with a gold label (glotbench's variant); {_REF}")
    # MMLU's score: the mean of per-topic accuracies (topics with no parsed item left out)
    cb_topic_accuracy = Metric("cb_topic_accuracy", kind="group_mean", params={"key": "cb_correct", "group": "subject"},
                               measure="accuracy", parsed_key="cb_parsed",
                               description=f"MMLU: mean of per-topic accuracies; {_REF}")
    cb_mae = Metric("cb_mae", key="cb_abs_error", direction="lower", format=".2f", role="secondary", parsed_key="cb_parsed",
                    description=f"GSM8K mean absolute error; {_REF}")
    cb_mre = Metric("cb_mre", key="cb_rel_error", direction="lower", format=".3f", role="secondary", parsed_key="cb_parsed",
                    description=f"GSM8K mean relative error (gold != 0); {_REF}")
    cb_parsed = Metric("cb_parsed", key="cb_parsed", role="diagnostic", description="share of answers the reference rule can parse")
    cb_na_accuracy = Metric("cb_na_accuracy", key="cb_na_correct", measure="no_answer_accuracy",
                            description="SQuAD 2.0: no-answer ('-') decision accuracy")
    cb_na_macro_f1 = Metric("cb_na_macro_f1", kind="label",
                            params={"stat": "macro_f1", "gold_key": "cb_na_gold", "pred_key": "cb_na_pred"}, measure="no_answer_macro_f1",
                            description="SQuAD 2.0: no-answer decision macro-F1")
    cb_em_raw = Metric("cb_em_raw", key="cb_em_raw", measure="exact_match", description="SQuAD exact match on the texts as they are")
    cb_f1_raw = Metric("cb_f1_raw", key="cb_f1_raw", measure="bow_f1", description="SQuAD bag-of-words F1 on the texts as they are")
    cb_em_lemma = Metric("cb_em_lemma", key="cb_em_lemma", measure="exact_match", description="SQuAD exact match on MorphoDiTa lemmas")
    cb_f1_lemma = Metric("cb_f1_lemma", key="cb_f1_lemma", measure="bow_f1", description="SQuAD bag-of-words F1 on MorphoDiTa lemmas")
    cb_em_root = Metric("cb_em_root", key="cb_em_root", measure="exact_match", description="SQuAD exact match on DeriNet 2.1 roots")
    cb_f1_root = Metric("cb_f1_root", key="cb_f1_root", measure="bow_f1", description="SQuAD bag-of-words F1 on DeriNet 2.1 roots")


METRIC_NAMES = tuple(n for n in vars(CB) if n.startswith("cb_"))

