"""Independent re-statements of every registered metric: one oracle per metric name.

Each oracle computes the metric from scratch over :class:`ScoredItem` s (used only as a
container of gold, pred, values and metadata) with a plain loop or the reference library
(scikit-learn, the SimpleQA reference rule, Czech-Bench's ``evaluate`` call), never with
glotbench's own arithmetic. ``items`` is a hypothesis strategy of item lists the metric is
defined over. tests/test_metric_values.py compares every registered metric, its vectorised
bootstrap and the leaderboard's scoring against these oracles, and fails for any registered
metric that has no entry here.

To add a metric: register it in ``src/``, then add its oracle here (the coverage test names it
until you do). See docs/value-tests.md.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass

from hypothesis import strategies as st

from glotbench.scoring.metrics import ScoredItem

NAN = float("nan")


@dataclass(frozen=True)
class Oracle:
    compute: Callable[[list[ScoredItem]], float]
    items: st.SearchStrategy
    source: str  # what the oracle restates


# ------------------------------------------------------------------ item strategies

LABELS = ["a", "b", "c", "d"]


@st.composite
def label_items(draw, labels=LABELS, min_size=0, max_size=40):
    """Gold labels and predictions (None: unparseable; a stray label no gold has)."""
    n = draw(st.integers(min_size, max_size))
    golds = draw(st.lists(st.sampled_from(labels), min_size=n, max_size=n))
    preds = draw(st.lists(st.one_of(st.none(), st.sampled_from(labels + ["zz"])), min_size=n, max_size=n))
    return [ScoredItem(gold=g, pred=p) for g, p in zip(golds, preds)]


def value_items(keys: tuple[str, ...], whole: bool = False, max_size: int = 40):
    """Items carrying some of ``keys`` as numbers (or None, or absent)."""
    num = st.integers(0, 6).map(float) if whole else st.floats(0, 1000, allow_nan=False, allow_infinity=False)
    value = st.one_of(st.none(), num)
    vals = st.dictionaries(st.sampled_from(keys), value, max_size=len(keys))
    return st.lists(vals.map(lambda v: ScoredItem(gold="g", pred="p", values=v)), max_size=max_size)


GRADES = ["CORRECT", "INCORRECT", "NOT_ATTEMPTED", "JUDGE_ERROR", "correct", "Not Attempted", "incorrect"]


def grade_items(max_size: int = 40):
    return st.lists(st.one_of(st.none(), st.sampled_from(GRADES)).map(lambda g: ScoredItem(gold="x", pred=g)),
                    max_size=max_size)


def _one_hot(k: int | None) -> dict:
    if k is None:  # the strict parse could not read the reply: a judge error
        return {"strict_correct": None, "strict_incorrect": None, "strict_not_attempted": None}
    trio = [0.0, 0.0, 0.0]
    trio[k] = 1.0
    return dict(zip(("strict_correct", "strict_incorrect", "strict_not_attempted"), trio))


def strict_items(max_size: int = 40):
    return st.lists(st.one_of(st.none(), st.integers(0, 2)).map(lambda k: ScoredItem(gold="x", pred="x", values=_one_hot(k))),
                    max_size=max_size)


def cb_label_items(gold_key: str, pred_key: str, max_size: int = 40):
    """Parsed items carry a gold and a pred label (numbers as the reference rule writes them); unparsed ones neither."""
    parsed = st.tuples(st.integers(0, 3).map(float), st.integers(0, 5).map(float)).map(
        lambda gp: ScoredItem(gold=None, pred=None, values={gold_key: gp[0], pred_key: gp[1]}))
    unparsed = st.just(None).map(lambda _: ScoredItem(gold=None, pred=None, values={}))
    return st.lists(st.one_of(parsed, unparsed), max_size=max_size)


def topic_items(max_size: int = 40):
    parsed = st.tuples(st.sampled_from(["law", "math", "art"]), st.integers(0, 1).map(float)).map(
        lambda tc: ScoredItem(gold=None, pred=None, values={"cb_correct": tc[1]}, metadata={"subject": tc[0]}))
    unparsed = st.sampled_from(["law", "math"]).map(lambda t: ScoredItem(gold=None, pred=None, metadata={"subject": t}))
    return st.lists(st.one_of(parsed, unparsed), max_size=max_size)


def no_answer_items(max_size: int = 40):
    one = st.one_of(
        st.tuples(st.booleans(), st.booleans()).map(
            lambda gp: ScoredItem(gold=None, pred=None, values={"no_answer_gold": float(gp[0]), "no_answer_pred": float(gp[1])})),
        st.just(None).map(lambda _: ScoredItem(gold=None, pred=None, values={})))
    return st.lists(one, max_size=max_size)


# ------------------------------------------------------------------ oracles


def _golds_preds(items):
    golds = [str(i.gold) for i in items]
    preds = ["\x00unparseable" if i.pred is None else str(i.pred) for i in items]  # never equal to a gold
    return golds, preds


def sk_accuracy(items):
    from sklearn.metrics import accuracy_score

    return float(accuracy_score(*_golds_preds(items))) if items else NAN


def sk_f1(average: str):
    def f(items):
        from sklearn.metrics import f1_score

        if not items:
            return NAN
        g, p = _golds_preds(items)
        # glotbench declares macro/weighted F1 "over the gold labels"
        return float(f1_score(g, p, labels=sorted(set(g)), average=average, zero_division=0))

    return f


def sk_mcc(items):
    from sklearn.metrics import matthews_corrcoef

    if not items:
        return NAN
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(matthews_corrcoef(*_golds_preds(items)))


def plain_answered(items):
    if not items:
        return NAN
    k = 0
    for i in items:
        if i.pred is not None:
            k += 1
    return k / len(items)


def plain_mean(key: str):
    def f(items):
        total, n = 0.0, 0
        for i in items:
            v = i.values.get(key)
            if v is not None:
                total += v
                n += 1
        return total / n if n else NAN

    return f


def plain_ratio(num: str, den: str):
    def f(items):
        a = b = 0.0
        for i in items:
            a += i.values.get(num) or 0.0
            b += i.values.get(den) or 0.0
        return a / b if b else NAN

    return f


def simpleqa_rates(correct: float, incorrect: float, not_attempted: float) -> dict[str, float]:
    """OpenAI simple-evals' ``simpleqa_eval.py`` aggregate, restated (Chinese SimpleQA uses the same):
    is_correct / is_not_attempted / is_incorrect are means over graded items, accuracy_given_attempted
    = correct / (correct + incorrect) (0 when nothing was attempted), F = the harmonic mean of the
    two (0 when both are 0)."""
    total = correct + incorrect + not_attempted
    if total == 0:
        return {k: NAN for k in ("CO", "NA", "IN", "CGA", "F")}
    co, na, in_ = correct / total, not_attempted / total, incorrect / total
    attempted = correct + incorrect
    cga = correct / attempted if attempted > 0 else 0.0
    f = 2 * cga * co / (cga + co) if (cga + co) > 0 else 0.0
    return {"CO": co, "NA": na, "IN": in_, "CGA": cga, "F": f}


def _grade_name(pred) -> str:
    if pred is None:
        return "JUDGE_ERROR"
    return str(pred).strip().upper().replace(" ", "_").replace("-", "_")


def simpleqa_grade_rate(key: str):
    def f(items):
        counts = {"CORRECT": 0, "INCORRECT": 0, "NOT_ATTEMPTED": 0}
        for i in items:
            g = _grade_name(i.pred)
            if g in counts:  # judge errors are out of every denominator
                counts[g] += 1
        return simpleqa_rates(counts["CORRECT"], counts["INCORRECT"], counts["NOT_ATTEMPTED"])[key]

    return f


def simpleqa_strict_rate(key: str):
    def f(items):
        c = i_ = n = 0
        for it in items:
            v = it.values
            if v.get("strict_correct") is None:
                continue
            c += v["strict_correct"] == 1
            i_ += v.get("strict_incorrect") == 1
            n += v.get("strict_not_attempted") == 1
        return simpleqa_rates(c, i_, n)[key]

    return f


def evaluate_f1_macro(gold_key: str, pred_key: str):
    """Czech-Bench's ``evaluate.load("f1").compute(average="macro")``: scikit-learn's f1_score with
    its default labels (those in gold or predictions), over the items the reference rule parsed."""

    def f(items):
        from sklearn.metrics import f1_score

        kept = [(i.values[gold_key], i.values[pred_key]) for i in items if gold_key in i.values and pred_key in i.values]
        if not kept:
            return NAN
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return float(f1_score([g for g, _ in kept], [p for _, p in kept], average="macro"))

    return f


def per_topic_mean(items):
    """Czech-Bench MMLU: accuracy per subject over parsed items, then the plain mean over subjects."""
    hits: dict[str, list[float]] = {}
    for i in items:
        if "cb_correct" in i.values:
            hits.setdefault(str(i.metadata.get("subject")), []).append(i.values["cb_correct"])
    if not hits:
        return NAN
    return sum(sum(v) / len(v) for v in hits.values()) / len(hits)


def _na_pairs(items):
    kept = [i for i in items if "no_answer_gold" in i.values]
    return ([bool(i.values["no_answer_gold"]) for i in kept], [bool(i.values.get("no_answer_pred")) for i in kept])


def no_answer_accuracy(items):
    g, p = _na_pairs(items)
    return sum(a == b for a, b in zip(g, p)) / len(g) if g else NAN


def no_answer_macro_f1(items):
    from sklearn.metrics import f1_score

    g, p = _na_pairs(items)
    if not g:
        return NAN
    return float(f1_score(g, p, labels=sorted(set(g)), average="macro", zero_division=0))


# ------------------------------------------------------------------ the table

LABEL = label_items()


def _mean(key: str, whole: bool = False) -> Oracle:
    return Oracle(plain_mean(key), value_items((key, "other"), whole=whole), f"plain mean of values[{key!r}] over items having it")


METRIC_ORACLES: dict[str, Oracle] = {
    "accuracy": Oracle(sk_accuracy, LABEL, "sklearn.metrics.accuracy_score (unparseable = wrong)"),
    "macro_f1": Oracle(sk_f1("macro"), LABEL, "sklearn f1_score(average='macro', labels=gold labels, zero_division=0)"),
    "weighted_f1": Oracle(sk_f1("weighted"), LABEL, "sklearn f1_score(average='weighted', labels=gold labels)"),
    "mcc": Oracle(sk_mcc, LABEL, "sklearn.metrics.matthews_corrcoef"),
    "answered": Oracle(plain_answered, LABEL, "plain loop: parseable / all"),
    "exact_match": _mean("exact_match", whole=True),
    "numeric_match": _mean("numeric_match", whole=True),
    "abs_error": _mean("abs_error"),
    "rel_error": _mean("rel_error"),
    "accuracy_norm": _mean("correct_norm", whole=True),
    # OpenHuEval (task_metrics.py)
    "blank_accuracy": Oracle(plain_ratio("blank_correct", "blank_total"), value_items(("blank_correct", "blank_total"), whole=True),
                             "plain loop: sum of right blanks / sum of blanks"),
    "blank_accuracy_reference": Oracle(plain_ratio("variant_hits", "blank_total"),
                                       value_items(("variant_hits", "blank_total"), whole=True), "plain loop: variant hits / blanks"),
    "blank_accuracy_repaired": Oracle(plain_ratio("blank_correct_repaired", "blank_total"),
                                      value_items(("blank_correct_repaired", "blank_total"), whole=True), "plain loop"),
    "question_accuracy": _mean("question_correct", whole=True),
    "question_accuracy_repaired": _mean("question_correct_repaired", whole=True),
    "accuracy_2cq": _mean("correct", whole=True),
    "fail_parse_rate": _mean("fail_parse", whole=True),
    "accuracy_oe": _mean("correct", whole=True),
    "unclear_rate": _mean("unclear", whole=True),
    "wb_score": _mean("wb_score"),
    # extractive QA (extractive_qa_scorer.py)
    "bow_f1": _mean("bow_f1"),
    "exact_match_raw": _mean("exact_match_raw", whole=True),
    "bow_f1_raw": _mean("bow_f1_raw"),
    "exact_match_lemma": _mean("exact_match_lemma", whole=True),
    "bow_f1_lemma": _mean("bow_f1_lemma"),
    "no_answer_accuracy": Oracle(no_answer_accuracy, no_answer_items(), "plain loop over items with no_answer_gold"),
    "no_answer_macro_f1": Oracle(no_answer_macro_f1, no_answer_items(),
                                 "sklearn f1_score(macro, gold labels) over items with no_answer_gold"),
    # Czech-Bench reference rules (czech_bench_rules.py)
    "cb_accuracy": _mean("cb_correct", whole=True),
    "cb_macro_f1": Oracle(evaluate_f1_macro("cb_gold", "cb_pred"), cb_label_items("cb_gold", "cb_pred"),
                          "evaluate's f1 (sklearn f1_score average='macro') over parsed items"),
    "cb_topic_accuracy": Oracle(per_topic_mean, topic_items(), "plain loop: mean over subjects of per-subject accuracy"),
    "cb_mae": _mean("cb_abs_error"),
    "cb_mre": _mean("cb_rel_error"),
    "cb_parsed": _mean("cb_parsed", whole=True),
    "cb_na_accuracy": _mean("cb_na_correct", whole=True),
    "cb_na_macro_f1": Oracle(evaluate_f1_macro("cb_na_gold", "cb_na_pred"), cb_label_items("cb_na_gold", "cb_na_pred"),
                             "evaluate's f1 (sklearn f1_score average='macro') over items with a no-answer decision"),
    "cb_em_raw": _mean("cb_em_raw", whole=True),
    "cb_f1_raw": _mean("cb_f1_raw"),
    "cb_em_lemma": _mean("cb_em_lemma", whole=True),
    "cb_f1_lemma": _mean("cb_f1_lemma"),
    "cb_em_root": _mean("cb_em_root", whole=True),
    "cb_f1_root": _mean("cb_f1_root"),
}
for _k in ("CO", "NA", "IN", "CGA", "F"):
    METRIC_ORACLES[f"factuality_{_k.lower()}"] = Oracle(simpleqa_grade_rate(_k), grade_items(),
                                                         f"simple-evals SimpleQA aggregate, {_k}")
    METRIC_ORACLES[f"factuality_{_k.lower()}_strict"] = Oracle(simpleqa_strict_rate(_k), strict_items(),
                                                                f"simple-evals SimpleQA aggregate, {_k}, strict grades")


def same(a: float, b: float, rel: float = 1e-9, abs_: float = 1e-12) -> bool:
    """Equal numbers, or both undefined (NaN)."""
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return math.isclose(a, b, rel_tol=rel, abs_tol=abs_)
