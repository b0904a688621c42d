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

import functools
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


def _one_hot(k: int | None, prefix: str = "strict_") -> dict:
    names = tuple(prefix + n for n in ("correct", "incorrect", "not_attempted"))
    if k is None:  # the strict parse (or a YAML judge) could not read the reply: a judge error
        return dict.fromkeys(names)
    trio = [0.0, 0.0, 0.0]
    trio[k] = 1.0
    return dict(zip(names, trio))


def strict_items(max_size: int = 40, prefix: str = "strict_"):
    return st.lists(st.one_of(st.none(), st.integers(0, 2)).map(
        lambda k: ScoredItem(gold="x", pred="x", values=_one_hot(k, prefix))), max_size=max_size)


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


LL_TEXTS = ["a", "ab", "abcd", "č", "řeka", "中文", "x y z", "Praha"]
LL_LOGPROBS = [-0.5, -1.0, -2.0, -3.0, -4.0, -6.0, -8.0]  # few values: ties after division happen


@functools.lru_cache(maxsize=2)
def _ll_task(continuation: str):
    from glotbench.tasks.spec import TaskSpec
    from glotbench.tasks.task import Task

    return Task(TaskSpec(name="oracle.ll", version="1", language="en", dataset={"splits": {"test": "x.json"}},
                         output_type="multiple_choice", prompt={"ll_continuation": continuation}))


@st.composite
def ll_item(draw):
    """One multiple-choice item scored by the task's ``--mode loglikelihood`` path (each option's
    log-probability and token count as a backend reports them); the metadata keeps what lm-eval's
    rule needs: the log-probabilities, ``doc_to_choice`` (the labels, or the option texts with
    ``ll_continuation: text``), the token counts and the gold's index."""
    from glotbench.models.base import LoglikelihoodResult
    from glotbench.tasks.task import Sample

    k = draw(st.integers(2, 4))
    labels = ["A", "B", "C", "D"][:k] if draw(st.booleans()) else draw(st.lists(st.sampled_from(LL_TEXTS), min_size=k,
                                                                                    max_size=k, unique=True))
    texts = draw(st.lists(st.sampled_from(LL_TEXTS), min_size=k, max_size=k))
    lps = draw(st.lists(st.sampled_from(LL_LOGPROBS), min_size=k, max_size=k))
    n_tokens = draw(st.lists(st.integers(1, 4), min_size=k, max_size=k))
    gold = draw(st.integers(0, k - 1))
    continuation = draw(st.sampled_from(["label", "text"]))
    sample = Sample(task="oracle.ll", id="0", index=0, vars={}, target=labels[gold], choices=texts, labels=labels)
    scored = _ll_task(continuation).score(
        sample, [LoglikelihoodResult(logprob=lp, is_greedy=False, n_tokens=n) for lp, n in zip(lps, n_tokens)],
        mode="loglikelihood")
    choices = texts if continuation == "text" else labels
    return ScoredItem(gold=sample.target, pred=scored.pred, values=scored.values,
                      metadata={"lls": lps, "choices": choices, "n_tokens": n_tokens, "gold_index": gold})


def ll_items(max_size: int = 30):
    return st.lists(ll_item(), max_size=max_size)


@st.composite
def snli_item(draw):
    """One Czech-Bench SNLI row (gold 0/1/2, or the -1 'no gold label') scored by the task itself
    from a model's text; the metadata keeps the text (as :func:`items_from_samples` does)."""
    from glotbench.models.base import GenResult
    from glotbench.tasks.task import Sample

    gold = draw(st.sampled_from([0, 1, 2, -1]))
    text = draw(st.sampled_from(["0", "1", "2", "1)", "2 protože", " 0\n", "-1", "x", "", "7", "Klasifikace: 2"]))
    task = _snli_task()
    sample = Sample(task=task.name, id="0", index=0, vars={}, target=gold, choices=["0", "1", "2"], labels=["0", "1", "2"])
    scored = task.score(sample, [GenResult(text=text)], mode="generate")
    return ScoredItem(gold=gold, pred=scored.pred, values=scored.values, metadata={"text": text})


@functools.lru_cache(maxsize=1)
def _snli_task():
    from glotbench.tasks.registry import resolve

    return resolve(["czech_bench.snli"])[0]


def snli_items(max_size: int = 30):
    return st.lists(snli_item(), max_size=max_size)


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


def simpleqa_strict_rate(key: str, prefix: str = "strict_"):
    def f(items):
        c = i_ = n = 0
        for it in items:
            v = it.values
            if v.get(prefix + "correct") is None:
                continue
            c += v[prefix + "correct"] == 1
            i_ += v.get(prefix + "incorrect") == 1
            n += v.get(prefix + "not_attempted") == 1
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


def lm_eval_acc_norm(length: Callable[[int, dict], float]):
    """lm-eval's ``ConfigurableTask.process_results`` (multiple_choice): ``completion_len =
    np.array([float(len(i)) for i in choices])`` over ``doc_to_choice`` (the delimiter is sent but
    not counted), ``acc_norm = 1.0 if np.argmax(lls / completion_len) == gold else 0.0``, the mean
    over items. ``length(k, item)`` is the divisor of option ``k``: characters (lm-eval's rule),
    UTF-8 bytes or the backend's token count (the same rule, another divisor)."""

    def f(items):
        import numpy as np

        if not items:
            return NAN
        hits = 0.0
        for i in items:
            m = i.metadata
            completion_len = np.array([length(k, m) for k in range(len(m["choices"]))])
            hits += 1.0 if int(np.argmax(np.array(m["lls"]) / completion_len)) == m["gold_index"] else 0.0
        return hits / len(items)

    return f



def by_chars(k, m):
    return float(len(m["choices"][k]))


def by_bytes(k, m):
    return float(len(m["choices"][k].encode("utf-8")))


def by_tokens(k, m):
    return float(m["n_tokens"][k])


def _snli_reference_pairs(items):
    """Czech-Bench's SNLI evaluator loop over the rows with a gold label (glotbench's variant: the
    -1 rows left out): first token, ``strip()``, ``strip(")")``, ``int()``; a ValueError skips the
    row (the reference's unparseable)."""
    golds, preds = [], []
    for i in items:
        label = int(i.gold)
        if label == -1:
            continue
        result = i.metadata["text"]
        parts = result.split()
        res = parts[0].strip().strip(")") if parts else result
        try:
            pred = int(res)
        except ValueError:
            continue
        golds.append(label)
        preds.append(pred)
    return golds, preds


def snli_labelled_accuracy(items):
    golds, preds = _snli_reference_pairs(items)
    if not golds:
        return NAN
    hits = 0
    for g, p in zip(golds, preds):
        hits += g == p
    return hits / len(golds)


def snli_labelled_macro_f1(items):
    from sklearn.metrics import f1_score

    golds, preds = _snli_reference_pairs(items)
    if not golds:
        return NAN
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(f1_score(golds, preds, average="macro"))


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


def _ll_probs(item) -> dict:
    """The item's option probabilities as the run stored them (``values["ll_p:<label>"]``)."""
    return {k[5:]: v for k, v in item.values.items() if k.startswith("ll_p:")}


def plain_ece_top_option(items):
    """Guo et al.'s ECE, plainly: the top option's probability as confidence, 10 equal-width bins
    [b/10, (b+1)/10) (1.0 in the last), sum of count/N * |accuracy - mean confidence| over bins."""
    pairs = [(max(p.values()), i.values["correct"]) for i in items if (p := _ll_probs(i))]
    if not pairs:
        return NAN
    total = 0.0
    for b in range(10):
        lo, hi = b / 10, (b + 1) / 10
        inside = [(c, y) for c, y in pairs if lo <= c < hi or (b == 9 and c == 1.0)]
        if inside:
            conf = sum(c for c, _ in inside) / len(inside)
            acc = sum(y for _, y in inside) / len(inside)
            total += len(inside) / len(pairs) * abs(acc - conf)
    return total


def _ll_matrix(items):
    """(golds, class labels sorted, items x classes probability matrix; 0 for a class an item lacks)."""
    import numpy as np

    kept = [(str(i.gold), _ll_probs(i)) for i in items if _ll_probs(i)]
    classes = sorted({c for _, p in kept for c in p} | {g for g, _ in kept})
    mat = np.array([[p.get(c, 0.0) for c in classes] for _, p in kept], dtype=float).reshape(len(kept), len(classes))
    return [g for g, _ in kept], classes, mat


def sk_brier_multiclass(items):
    """scikit-learn's multi-class ``brier_score_loss`` (>= 1.7) unscaled: mean over items of the sum
    over classes of (p - y)^2."""
    from sklearn.metrics import brier_score_loss

    golds, classes, mat = _ll_matrix(items)
    if not golds:
        return NAN
    return float(brier_score_loss(golds, mat, labels=classes, scale_by_half=False))


def sk_auroc_class(items, label):
    from sklearn.metrics import roc_auc_score

    golds, classes, mat = _ll_matrix(items)
    if not any(label in _ll_probs(i) for i in items):  # no item offers the label
        return NAN
    y = [g == label for g in golds]
    if all(y) or not any(y):
        return NAN
    return float(roc_auc_score(y, mat[:, classes.index(label)]))


def sk_auroc_macro(items):
    golds, classes, _ = _ll_matrix(items)
    vals = [v for c in classes if not math.isnan(v := sk_auroc_class(items, c))]
    return sum(vals) / len(vals) if vals else NAN


def text_items(max_size: int = 30):
    """Scored texts: a negative log-likelihood and the token, byte and word counts it is divided by
    (a record may lack one: a run written before the metric existed)."""
    count = st.one_of(st.none(), st.integers(1, 400).map(float))
    one = st.tuples(st.floats(0, 600, allow_nan=False), count, count, count).map(
        lambda t: ScoredItem(gold=None, pred=-t[0], values={k: v for k, v in
                                                          zip(("nll", "n_tokens", "n_bytes", "n_words"), t) if v is not None}))
    return st.lists(one, max_size=max_size)


def lm_eval_pooled(den: str, kind: str):
    """lm-eval's corpus aggregations over (loglikelihood, count) pairs, restated with numpy:
    ``weighted_perplexity`` = exp(-sum(ll) / sum(count)) (tokens or words), ``bits_per_byte`` =
    -sum(ll) / sum(bytes) / ln 2; texts lacking the count are left out."""

    def f(items):
        import numpy as np

        pairs = [(-i.values["nll"], i.values[den]) for i in items if "nll" in i.values and den in i.values]
        if not pairs:
            return NAN
        ll = np.array([a for a, _ in pairs])
        n = np.array([b for _, b in pairs])
        if kind == "bpb":
            return float(-ll.sum() / n.sum() / np.log(2))
        return float(np.exp(-ll.sum() / n.sum()))

    return f


def continuation_items(max_size: int = 30):
    """One target continuation per item (lm-eval ``output_type: loglikelihood``): ``nll`` and
    ``n_items`` 1, or neither (an item not scored)."""
    one = st.one_of(st.floats(0, 600, allow_nan=False).map(
        lambda x: ScoredItem(gold="t", pred="t", values={"nll": x, "n_items": 1.0})),
        st.just(ScoredItem(gold="t", pred=None, values={})))
    return st.lists(one, max_size=max_size)


def lm_eval_item_perplexity(items):
    """lm-eval's ``perplexity`` aggregation (api/metrics.py): ``math.exp(-mean(items))`` over the
    per-item log-likelihoods, with ``mean`` = sum / len as lm-eval writes it."""
    lls = [-i.values["nll"] for i in items if "nll" in i.values]
    if not lls:
        return NAN
    try:
        return math.exp(-(sum(lls) / len(lls)))
    except OverflowError:
        return float("inf")


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
    "accuracy_norm": Oracle(lm_eval_acc_norm(by_chars), ll_items(),
                            "lm-eval's acc_norm: np.argmax(lls / [len(choice) for choice in doc_to_choice])"),
    "accuracy_norm_bytes": Oracle(lm_eval_acc_norm(by_bytes), ll_items(),
                                  "lm-eval's acc_norm rule, divided by each choice's UTF-8 bytes"),
    "accuracy_norm_tokens": Oracle(lm_eval_acc_norm(by_tokens), ll_items(),
                                   "lm-eval's acc_norm rule, divided by each continuation's token count"),
    "ll_ece": Oracle(plain_ece_top_option, ll_items(), "Guo et al. ECE over 10 equal-width bins, plain loop"),
    "ll_brier": Oracle(sk_brier_multiclass, ll_items(), "sklearn brier_score_loss, multi-class, scale_by_half=False"),
    "ll_auroc_macro": Oracle(sk_auroc_macro, ll_items(),
                             "sklearn roc_auc_score per class one-vs-rest, unweighted mean over defined classes"),
    "perplexity": Oracle(lm_eval_pooled("n_tokens", "ppl"), text_items(), "exp(-sum ll / sum tokens), numpy"),
    "word_perplexity": Oracle(lm_eval_pooled("n_words", "ppl"), text_items(),
                              "lm-eval's weighted_perplexity over words: exp(-sum ll / sum words), numpy"),
    "bits_per_byte": Oracle(lm_eval_pooled("n_bytes", "bpb"), text_items(), "lm-eval's bits_per_byte: -sum ll / sum bytes / ln 2"),
    "byte_perplexity": Oracle(lm_eval_pooled("n_bytes", "ppl"), text_items(),
                              "lm-eval's weighted_perplexity over bytes: exp(-sum ll / sum bytes), numpy"),
    "continuation_perplexity": Oracle(lm_eval_item_perplexity, continuation_items(),
                                      "lm-eval's perplexity aggregation: math.exp(-mean(ll)) over the items scored"),
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
    # judges declared in YAML (judge_metrics.py)
    "judge_score": _mean("judge_score"),
    "judge_unreadable_rate": _mean("judge_unreadable", whole=True),
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
    "cb_accuracy_labelled": Oracle(snli_labelled_accuracy, snli_items(),
                                   "Czech-Bench's SNLI loop over the rows with a gold label (not -1): hits / parsed"),
    "cb_macro_f1_labelled": Oracle(snli_labelled_macro_f1, snli_items(),
                                   "sklearn f1_score(average='macro') over the parsed rows with a gold label"),
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
    METRIC_ORACLES[f"judge_{_k.lower()}"] = Oracle(simpleqa_strict_rate(_k, "judge_"), strict_items(prefix="judge_"),
                                                   f"simple-evals SimpleQA aggregate, {_k}, a YAML judge's mapped grades")


# ------------------------------------------------------------------ text-generation metrics
# Items carry a gold reference text and a generated text; their per-item values come from
# glotbench's ``text`` scorer (the code under test), and the oracles recompute every metric from
# the two texts alone: sacrebleu's functional API, rouge-score with a restated tokenizer, and a
# plain re-statement of ÚFAL's rouge_raw.py.

TEXT_WORDS = ["the", "cat", "sat", "on", "mat", "Praha", "řeka", "žluťoučký", "kůň", "úpěl", "ďábelské", "ódy",
              "Ötvös", "győztes", "szőlő", "tűz", "árvíztűrő", "tükörfúrógép", "北京", "中文", "我们", "学习", "天气",
              "2024", "3,5", "don't", "e-mail", "Kůň", "ÁRVÍZTŰRŐ"]
TEXT_SEPARATORS = [" ", " ", " ", " ", ", ", ". ", "! ", "  ", "\n", " - ", "，", "。"]


def random_text(rng, max_words: int = 30) -> str:
    """Words of several scripts joined by spaces, punctuation, double spaces and line breaks."""
    n = rng.randrange(0, max_words + 1)
    out = []
    for k in range(n):
        out.append(rng.choice(TEXT_WORDS))
        if k < n - 1:
            out.append(rng.choice(TEXT_SEPARATORS))
    if n and rng.random() < 0.5:
        out.append(rng.choice([".", "!", "?", "。"]))
    return "".join(out)


def text_item(gold: str, pred: str | None) -> ScoredItem:
    import random

    from glotbench.scoring.text_metrics import _rouge_scorer, text

    state = random.getstate()
    _rouge_scorer()  # importing rouge-score (nltk) moves the global random state: hypothesis warns when a draw does
    random.setstate(state)

    pred_out, values = text(pred, gold)
    return ScoredItem(gold=gold, pred=pred_out, values=values)


@st.composite
def text_items(draw, min_size=0, max_size=12, max_refs=1):
    """Scored texts; ``max_refs`` > 1: each gold a list of 1..max_refs references (some items one
    plain string), so corpora mix numbers of references."""
    n = draw(st.integers(min_size, max_size))
    rng = draw(st.randoms(use_true_random=False))
    items = []
    for _ in range(n):
        if max_refs == 1:  # the single-reference draws as they always were
            gold = random_text(rng)
            r = rng.random()
            pred = None if r < 0.1 else (gold if r < 0.2 else random_text(rng))
            items.append(text_item(gold, pred))
            continue
        refs = [random_text(rng) for _ in range(rng.randint(1, max_refs))]
        gold = refs[0] if len(refs) == 1 and rng.random() < 0.5 else refs
        r = rng.random()
        pred = None if r < 0.1 else (rng.choice(refs) if r < 0.2 else random_text(rng))
        items.append(text_item(gold, pred))
    return items


def _refs_of(gold) -> list[str]:
    return [str(r) for r in gold] if isinstance(gold, (list, tuple)) else [str(gold)]


def _hyps_refs(items):
    """sacrebleu's input: the hypotheses and one reference stream per reference position, padded
    with None where an item has fewer references (sacrebleu's rule for a variable number)."""
    width = max((len(_refs_of(i.gold)) for i in items), default=1)
    streams = [[(_refs_of(i.gold) + [None] * width)[k] for i in items] for k in range(width)]
    return ["" if i.pred is None else str(i.pred) for i in items], streams


def sacrebleu_oracle(kind: str):
    def f(items):
        import sacrebleu

        if not items:
            return NAN
        hyps, refs = _hyps_refs(items)
        if kind == "bleu":
            return sacrebleu.corpus_bleu(hyps, refs).score
        return sacrebleu.corpus_chrf(hyps, refs, word_order=2 if kind == "chrfpp" else 0).score

    return f


SPACELESS_RANGES = [(0x3040, 0x30FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x20000, 0x3134F)]


def restated_unicode_tokens(text: str) -> list[str]:
    """Plain loop: NFC, lowercase; runs of str.isalnum() characters; Han/kana characters alone."""
    import unicodedata

    tokens, cur = [], ""
    for ch in unicodedata.normalize("NFC", text).lower():
        if any(lo <= ord(ch) <= hi for lo, hi in SPACELESS_RANGES):
            if cur:
                tokens.append(cur)
                cur = ""
            tokens.append(ch)
        elif ch.isalnum():
            cur += ch
        else:
            if cur:
                tokens.append(cur)
            cur = ""
    if cur:
        tokens.append(cur)
    return tokens


class _RestatedTokenizer:
    def tokenize(self, text):
        return restated_unicode_tokens(text)


@functools.lru_cache(maxsize=1)
def _rouge_lib():
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=False, tokenizer=_RestatedTokenizer())


def rouge_score_oracle(kind: str):
    """rouge-score's F-measure per item (its scorer, the restated tokenizer), plainly averaged."""

    def f(items):
        vals = []
        for i in items:  # several references: the maximum over them, a plain loop
            best = 0.0
            for k, ref in enumerate(_refs_of(i.gold)):
                f = _rouge_lib().score(ref, "" if i.pred is None else str(i.pred))[kind].fmeasure
                best = f if k == 0 or f > best else best
            vals.append(best)
        return sum(vals) / len(vals) if vals else NAN

    return f


def rouge_raw_reference_tokens(text: str, full: bool = False) -> list[str]:
    """rouge_raw.py's ``_tokenize`` and lowercasing; the reference passes ``re.UNICODE`` (32) in
    ``re.sub``'s ``count`` place, so it splits only at the first 32 places; ``full``: everywhere."""
    import re

    limit = 0 if full else 32
    return [w.lower() for w in re.sub(r"\s+", " ", re.sub(r"\b", " ", text, count=limit), count=limit).strip().split(" ")]


def plain_rouge_raw(gold_words: list[str], system_words: list[str], which: str) -> tuple[float, float, float]:
    """(P, R, F) with plain loops: clipped n-gram matches, or the LCS by dynamic programming."""
    if which == "l":
        table = [[0] * (len(system_words) + 1) for _ in range(len(gold_words) + 1)]
        for a in range(1, len(gold_words) + 1):
            for b in range(1, len(system_words) + 1):
                if gold_words[a - 1] == system_words[b - 1]:
                    table[a][b] = table[a - 1][b - 1] + 1
                else:
                    table[a][b] = max(table[a - 1][b], table[a][b - 1])
        hit, n_gold, n_sys = table[-1][-1], len(gold_words), len(system_words)
    else:
        n = int(which)
        g = [tuple(gold_words[k:k + n]) for k in range(len(gold_words) - n + 1)]
        s = [tuple(system_words[k:k + n]) for k in range(len(system_words) - n + 1)]
        remaining = list(g)
        hit = 0
        for gram in s:
            if gram in remaining:
                remaining.remove(gram)
                hit += 1
        n_gold, n_sys = len(g), len(s)
    p = hit / n_sys if n_sys else 0.0
    r = hit / n_gold if n_gold else 0.0
    f = 2 * hit / (n_sys + n_gold) if n_sys + n_gold else 0.0
    return p, r, f


def rouge_raw_oracle(which: str, part: str = "f", full: bool = False):
    """ROUGE_RAW as SumeCzech's rouge_raw.py computes it: per document, then the plain mean."""
    k = {"p": 0, "r": 1, "f": 2}[part]

    def f(items):
        if not items:
            return NAN
        total = 0.0
        for i in items:  # several references: the one with the highest F (the first of equal ones) gives P, R, F
            system = rouge_raw_reference_tokens("" if i.pred is None else str(i.pred), full)
            best = None
            for ref in _refs_of(i.gold):
                prf = plain_rouge_raw(rouge_raw_reference_tokens(ref, full), system, which)
                if best is None or prf[2] > best[2]:
                    best = prf
            total += best[k]
        return total / len(items)

    return f


TEXT = text_items()
TEXT_MULTI = text_items(max_refs=4)  # several references per item (tests/test_text_multiref.py)
TEXT_ORACLES: dict[str, Oracle] = {
    "bleu": Oracle(sacrebleu_oracle("bleu"), TEXT, "sacrebleu.corpus_bleu (unparseable = empty hypothesis)"),
    "chrf": Oracle(sacrebleu_oracle("chrf"), TEXT, "sacrebleu.corpus_chrf"),
    "chrfpp": Oracle(sacrebleu_oracle("chrfpp"), TEXT, "sacrebleu.corpus_chrf(word_order=2)"),
    **{t: Oracle(rouge_score_oracle(t), TEXT, f"rouge-score {t} F, restated Unicode tokenizer, plain mean")
       for t in ("rouge1", "rouge2", "rougeL")},
    "rouge_l": Oracle(rouge_score_oracle("rougeL"), TEXT, "rouge-score rougeL F (the alias rouge_l)"),
    **{f"rouge_raw_{w}": Oracle(rouge_raw_oracle(w), TEXT, "plain re-statement of rouge_raw.py, F") for w in ("1", "2", "l")},
    **{f"rouge_raw_{w}_precision": Oracle(rouge_raw_oracle(w, "p"), TEXT, "plain re-statement of rouge_raw.py, P")
       for w in ("1", "2", "l")},
    **{f"rouge_raw_{w}_recall": Oracle(rouge_raw_oracle(w, "r"), TEXT, "plain re-statement of rouge_raw.py, R")
       for w in ("1", "2", "l")},
    **{f"rouge_raw_{w}_full": Oracle(rouge_raw_oracle(w, full=True), TEXT, "rouge_raw.py re-stated, whole-text tokenisation")
       for w in ("1", "2", "l")},
    # per-item BERTScore values are checked against bert_score.score in tests/test_text_metrics.py
    "bertscore_f1": _mean("bertscore_f1"),
    "bertscore": _mean("bertscore_f1"),
    "bertscore_precision": _mean("bertscore_precision"),
    "bertscore_recall": _mean("bertscore_recall"),
    "comet": _mean("comet"),  # COMET's system_score: the mean of the segment scores
}
METRIC_ORACLES.update(TEXT_ORACLES)
# the same oracles over items with several references (a gold list): sacrebleu's own multi-reference
# corpus scores (reference streams padded with None), ROUGE / ROUGE_RAW the plain max loop per item
MULTIREF_METRICS = ("bleu", "chrf", "chrfpp", "rouge1", "rouge2", "rougeL", "rouge_l",
                    *(f"rouge_raw_{w}{p}" for w in ("1", "2", "l") for p in ("", "_precision", "_recall", "_full")))
MULTIREF_ORACLES: dict[str, Oracle] = {m: Oracle(TEXT_ORACLES[m].compute, TEXT_MULTI, TEXT_ORACLES[m].source + "; "
                                                 "several references: sacrebleu streams padded with None / max over references")
                                       for m in MULTIREF_METRICS}


def same(a: float, b: float, rel: float = 1e-9, abs_: float = 1e-12) -> bool:
    """Equal numbers, or both undefined (NaN)."""
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return math.isclose(a, b, rel_tol=rel, abs_tol=abs_)


# ------------------------------------------------------------------ a finished run, recomputed


def items_from_samples(recs: list[dict]) -> list[ScoredItem]:
    """samples.jsonl records (scored ones) as oracle input: gold, pred, values, metadata, and the
    model's first text as ``metadata["text"]`` (the reference-rule oracles re-parse it)."""
    out = []
    for r in recs:
        if r.get("status") != "scored":
            continue
        text = next((o.get("text") for o in r.get("outputs") or [] if isinstance(o, dict) and "text" in o), None)
        out.append(ScoredItem(gold=r.get("gold"), pred=r.get("pred"), values=r.get("values") or {},
                              metadata={**(r.get("metadata") or {}), "text": text}))
    return out


def run_value_mismatches(run_dir, skip: tuple[str, ...] = ()) -> list[tuple]:
    """Every metric value a run's results.json states, against its oracle on the run's own
    samples.jsonl; ``(task, metric, stated, recomputed)`` for each that differs (results.json
    rounds to 6 decimals and writes an undefined value as null). ``skip``: metrics whose oracle
    needs what samples.jsonl does not keep (the loglikelihood ones: the option strings)."""
    import json
    from pathlib import Path

    run_dir = Path(run_dir)
    res = json.loads((run_dir / "results.json").read_text(encoding="utf-8"))
    recs = [json.loads(x) for x in (run_dir / "samples.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]
    bad = []
    for task, t in res["tasks"].items():
        items = items_from_samples([r for r in recs if r["task"] == task])
        for m, block in t["metrics"].items():
            if m in skip:
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                want = METRIC_ORACLES[m].compute(items)
            got = block["value"]
            ok = got is None if math.isnan(want) else (got is not None and abs(got - want) <= 1e-6)
            if not ok:
                bad.append((task, m, got, want))
    return bad


# ------------------------------------------------------------------ comparison statistics (not metrics)


def plain_percentile(values: list[float], q: float) -> float:
    """The q-quantile by linear interpolation between order statistics (numpy's default method), plainly."""
    xs = sorted(values)
    h = (len(xs) - 1) * q
    lo = math.floor(h)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (h - lo) * (xs[hi] - xs[lo])


def item_paired_gap_bootstrap(native: list[list[float]], english: list[list[float]], groups: list[str], *,
                              n_resamples: int, seed: int, alpha: float = 0.05) -> dict:
    """``compare --crosslingual``'s gap intervals, restated with plain loops: for each task pair j
    (its items' per-item values on both sides, joined on item id), every resample draws item indices
    once and takes both sides' means on them (the same items on both sides: item-paired); the
    difference english - native, the relative gap (english - native) / max(english, native) (0 when
    both are 0), and per resample the mean over the pairs of |gap| (the model's average gap). The draws
    of pair j: numpy's ``default_rng([seed, crc32(group_j)])`` ``integers(0, k, size=(n_resamples, k))``.
    Percentile intervals at ``alpha``."""
    import zlib

    import numpy as np

    per_pair, gaps_by_pair = [], []
    for a, b, group in zip(native, english, groups):
        k = len(a)
        rows = np.random.default_rng([seed, zlib.crc32(group.encode("utf-8"))]).integers(0, k, size=(n_resamples, k))
        diffs, gaps = [], []
        for row in rows.tolist():
            ma = sum(a[j] for j in row) / k
            mb = sum(b[j] for j in row) / k
            top = max(ma, mb)
            diffs.append(mb - ma)
            gaps.append(0.0 if top == 0 else (mb - ma) / top)
        per_pair.append({"difference_ci95": [plain_percentile(diffs, alpha / 2), plain_percentile(diffs, 1 - alpha / 2)],
                         "relative_gap_ci95": [plain_percentile(gaps, alpha / 2), plain_percentile(gaps, 1 - alpha / 2)]})
        gaps_by_pair.append(gaps)
    average = [sum(abs(g[r]) for g in gaps_by_pair) / len(gaps_by_pair) for r in range(n_resamples)]
    return {"pairs": per_pair,
            "average_ci95": [plain_percentile(average, alpha / 2), plain_percentile(average, 1 - alpha / 2)]}


# ------------------------------------------------------------------ duels (compare --duels) and signal (analyze signal)


def statsmodels_mcnemar_exact(correct_a: list, correct_b: list) -> float:
    """McNemar's exact p-value as statsmodels computes it, from the 2x2 table of paired outcomes."""
    from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar

    table = [[0, 0], [0, 0]]
    for x, y in zip(correct_a, correct_b):
        table[0 if x else 1][0 if y else 1] += 1
    return float(sm_mcnemar(table, exact=True).pvalue)


def statsmodels_holm(p_values: list[float]) -> list[float]:
    """Holm's adjusted p-values as statsmodels computes them. Its holm branch ends with a full
    ``gc.collect()`` (0.2 s a call in a test process that has loaded scipy and statsmodels: 200
    hypothesis examples were 40-90 s); the collection computes nothing, so it is skipped here."""
    import gc
    from unittest import mock

    from statsmodels.stats.multitest import multipletests

    with mock.patch.object(gc, "collect", lambda *a, **k: 0):
        adjusted = multipletests(p_values, method="holm")[1]
    return [float(x) for x in adjusted]


def plain_sign_flip_p(a: list[float], b: list[float], n: int, seed: int) -> float:
    """The paired permutation test restated with loops: permutation r flips item j's difference when
    numpy's ``default_rng(seed).integers(0, 2, size=(n, k))[r, j]`` is 1 (the documented draws);
    p = (1 + #{|permuted mean| >= |observed mean|}) / (n + 1)."""
    import numpy as np

    k = len(a)
    d = [x - y for x, y in zip(a, b)]
    observed = abs(sum(d) / k)
    flips = np.random.default_rng(seed).integers(0, 2, size=(n, k)).tolist()
    hits = 0
    for row in flips:
        s = sum(-dj if f else dj for dj, f in zip(d, row)) / k
        hits += abs(s) >= observed - 1e-12
    return (1 + hits) / (n + 1)


def plain_bootstrap_p(metric: Callable[[list[ScoredItem]], float], items_a: list[ScoredItem], items_b: list[ScoredItem],
                      n: int, seed: int) -> float:
    """A corpus metric's paired bootstrap p-value, with loops: resample r draws item indices
    ``default_rng(seed).integers(0, k, size=k)`` (one call per resample), both sides on the same
    items; undefined differences dropped; p = min(1, 2 * min(share <= 0, share >= 0))."""
    import numpy as np

    rng = np.random.default_rng(seed)
    k = len(items_a)
    diffs = []
    for _ in range(n):
        idx = rng.integers(0, k, size=k).tolist()
        d = metric([items_a[j] for j in idx]) - metric([items_b[j] for j in idx])
        if not math.isnan(d):
            diffs.append(d)
    if not diffs:
        return NAN
    low = sum(d <= 0 for d in diffs) / len(diffs)
    high = sum(d >= 0 for d in diffs) / len(diffs)
    return min(1.0, 2 * min(low, high))


def plain_duel_shares(duels: list[dict], alpha: float, higher_is_better: dict[str, bool]) -> dict[str, float]:
    """Share of duels won per model, averaged over tasks, with plain loops over duel dicts
    (task, a, b, score_a, score_b, p_holm): a won duel is p_holm < alpha and a better score."""
    per_task: dict[str, dict[str, list[int]]] = {}
    for d in duels:
        up = higher_is_better.get(d["task"], True)
        won = None
        if d["p_holm"] < alpha and d["score_a"] != d["score_b"]:
            won = d["a"] if (d["score_a"] > d["score_b"]) == up else d["b"]
        for m in (d["a"], d["b"]):
            wins_total = per_task.setdefault(d["task"], {}).setdefault(m, [0, 0])
            wins_total[0] += won == m
            wins_total[1] += 1
    shares: dict[str, list[float]] = {}
    for task, models in per_task.items():
        for m, (w, t) in models.items():
            shares.setdefault(m, []).append(w / t)
    return {m: sum(v) / len(v) for m, v in shares.items()}


def duel_pair_seed(seed: int, task: str, a: str, b: str) -> int:
    """The documented per-pair seed of ``compare --duels``: (seed * 1000003 + crc32(task NUL a NUL b)) mod 2**32."""
    import zlib

    return (seed * 1_000_003 + zlib.crc32(f"{task}\0{a}\0{b}".encode("utf-8"))) % (2**32)


def scipy_spearman(x: list[float], y: list[float]) -> float:
    from scipy.stats import spearmanr

    return float(spearmanr(x, y).statistic)


def scipy_kendall(x: list[float], y: list[float]) -> float:
    from scipy.stats import kendalltau

    return float(kendalltau(x, y).statistic)


def plain_sample_std(xs: list[float]) -> float:
    m = sum(xs) / len(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))


def plain_majority_share(golds: list) -> float:
    counts: dict = {}
    for g in golds:
        counts[str(g)] = counts.get(str(g), 0) + 1
    return max(counts.values()) / len(golds)


# ------------------------------------------------------------------ annotation agreement (build review import --kind)


def statsmodels_fleiss_kappa(ratings: list[list]) -> float:
    """statsmodels' ``fleiss_kappa`` on ``aggregate_raters`` of the items x raters matrix of category
    codes (labels coded by their sorted order); NaN where statsmodels divides 0 by 0."""
    import numpy as np
    from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

    cats = sorted({str(c) for r in ratings for c in r})
    table, _ = aggregate_raters(np.array([[cats.index(str(c)) for c in r] for r in ratings]))
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(fleiss_kappa(table, method="fleiss"))


def krippendorff_package_alpha(matrix: list[list], level: str) -> float:
    """The ``krippendorff`` package's alpha on the annotators x items matrix (None: no rating);
    nominal labels coded by their sorted order. NaN where the package finds it undefined."""
    import krippendorff
    import numpy as np

    codes = sorted({str(v) for row in matrix for v in row if v is not None})
    data = np.array([[np.nan if v is None else (codes.index(str(v)) if level == "nominal" else float(v)) for v in row]
                     for row in matrix], dtype=float)
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return float(krippendorff.alpha(reliability_data=data, level_of_measurement=level))
    except (ValueError, ZeroDivisionError):
        return NAN


def plain_majority(labels: list[str], strict: bool = False) -> str | None:
    """The label with the most votes, counted in a loop; None for a tie at the top (or, ``strict``,
    when the top label has no more than half the votes)."""
    counts: dict[str, int] = {}
    for x in labels:
        counts[x] = counts.get(x, 0) + 1
    best = max(counts.values())
    top = [k for k, c in counts.items() if c == best]
    if len(top) != 1 or (strict and best * 2 <= len(labels)):
        return None
    return top[0]


def plain_sd(xs: list[float], sample: bool = True) -> float:
    """Standard deviation in a loop (n - 1 in the denominator for ``sample``; 0 for one rating)."""
    if len(xs) < 2 and sample:
        return 0.0
    m = sum(xs) / len(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - (1 if sample else 0)))


AGREEMENT_ORACLES = {
    "fleiss_kappa": "statsmodels.stats.inter_rater.fleiss_kappa(aggregate_raters(...))",
    "krippendorff_alpha": "krippendorff.alpha(reliability_data, level_of_measurement=nominal|ordinal|interval)",
    "majority": "plain loop: unique top vote count (ties: none)",
    "unanimous": "plain loop: all of an item's labels equal",
    "sd_filter": "plain loop: mean and SD (n-1), kept when SD < max",
}


# ------------------------------------------------------------------ contamination (analyze contamination)

def ascii_norm(s: str) -> list[str]:
    """lm-eval's Janitor.normalize_string spelt out: ASCII letters lowercased, ASCII punctuation
    deleted, then split on whitespace."""
    import string

    return "".join(ch.lower() if ch in string.ascii_letters else ch for ch in s if ch not in string.punctuation).split()


def unicode_norm(s: str) -> list[str]:
    """The length-aware variant's normalisation: every letter lowercased, Unicode punctuation (P*) deleted."""
    import unicodedata

    return "".join(ch.lower() for ch in s if not unicodedata.category(ch).startswith("P")).split()


def plain_ngram_overlap(texts: list[str], corpus_text: str, n_of, norm) -> list[int]:
    """Per item, how many of its distinct n-grams (n = ``n_of(its token count)``; None: unchecked, 0)
    occur in the corpus: every corpus window as a tuple in a set, the whole corpus in memory."""
    corpus = norm(corpus_text)
    counts = []
    for text in texts:
        toks = norm(text)
        n = n_of(len(toks))
        if n is None or len(toks) < n:
            counts.append(0)
            continue
        windows = {tuple(corpus[i:i + n]) for i in range(len(corpus) - n + 1)}
        counts.append(len({tuple(toks[i:i + n]) for i in range(len(toks) - n + 1)} & windows))
    return counts


# ------------------------------------------------------------------ robustness (#54: --perturb, prompt variants)

def plain_resample_indices(k: int, n: int, seed: int) -> list[list[int]]:
    """The item resamples of glotbench's bootstraps, drawn one row at a time from the same numpy generator
    (``default_rng(seed).integers(0, k, size=(n, k))`` row by row: the draw is the documented one; the
    arithmetic below is in plain loops)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    return [[int(j) for j in row] for row in rng.integers(0, k, size=(n, k))]


def plain_quantile(xs: list[float], q: float) -> float:
    """numpy's default (linear) quantile, spelt out: position q * (n - 1) between the sorted values."""
    s = sorted(xs)
    pos = q * (len(s) - 1)
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def plain_drop_rate(clean: list[float], perturbed: list[float], n: int, seed: int) -> tuple[float, float, float]:
    """PDR = 1 - mean(perturbed) / mean(clean) (PromptBench), and its 95% percentile interval over item
    resamples, in loops."""
    def mean(xs):
        return sum(xs) / len(xs)

    pdr = 1 - mean(perturbed) / mean(clean) if mean(clean) else NAN
    stats = []
    for row in plain_resample_indices(len(clean), n, seed):
        c = mean([clean[j] for j in row])
        if c:
            stats.append(1 - mean([perturbed[j] for j in row]) / c)
    return pdr, plain_quantile(stats, 0.025), plain_quantile(stats, 0.975)


def plain_variant_spread(values: list[list[float]], n: int, seed: int) -> dict:
    """Per-variant means, their mean / min / max / sample std (n - 1), the best variant, and 95% percentile
    intervals of each over item resamples (every variant on the same resample), in loops."""
    k, v = len(values), len(values[0])

    def stats(rows: list[list[float]]) -> dict:
        scores = [sum(r[c] for r in rows) / len(rows) for c in range(v)]
        mu = sum(scores) / v
        sd = math.sqrt(sum((x - mu) ** 2 for x in scores) / (v - 1)) if v > 1 else 0.0
        return {"scores": scores, "mean": mu, "min": min(scores), "max": max(scores), "std": sd}

    full = stats(values)
    boots = [stats([values[j] for j in row]) for row in plain_resample_indices(k, n, seed)]
    out = dict(full)
    for key in ("mean", "min", "max", "std"):
        xs = [b[key] for b in boots]
        out[f"{key}_ci"] = [plain_quantile(xs, 0.025), plain_quantile(xs, 0.975)]
    out["score_ci"] = [[plain_quantile([b["scores"][c] for b in boots], q) for q in (0.025, 0.975)] for c in range(v)]
    out["best"] = max(range(v), key=lambda c: (full["scores"][c], -c))
    return out


ROBUSTNESS_ORACLES = {
    "drop_rate": "plain loop: 1 - mean(perturbed)/mean(clean), percentile interval over item resamples",
    "variant_spread": "plain loop: per-variant means, mean/min/max/std (n-1), best; percentile intervals",
}


# ------------------------------------------------------------------ #54: CircularEval, per-class P/R/F1

def plain_circular_accuracy(samples: list[dict]) -> tuple[float, float, int]:
    """From samples.jsonl lines of a ``--circular`` run: (plain accuracy over the rotation-0 records,
    CircularEval accuracy: items whose every rotation has gold == pred, number of items), with plain
    loops over the records' metadata (``circular_of``, ``rotation``)."""
    by_item: dict[str, list[dict]] = {}
    plain_right = plain_n = 0
    for s in samples:
        if s.get("status") != "scored":
            continue
        md = s.get("metadata") or {}
        by_item.setdefault(md["circular_of"], []).append(s)
        if md["rotation"] == 0:
            plain_n += 1
            plain_right += str(s["gold"]) == str(s["pred"])
    all_right = 0
    for rows in by_item.values():
        ok = True
        for s in rows:
            if str(s["gold"]) != str(s["pred"]):
                ok = False
        all_right += ok
    return plain_right / plain_n, all_right / len(by_item), len(by_item)


def plain_group_means(scores: dict[str, float], group_of: dict[str, str], n_boot: int, seed: int) -> dict:
    """``compare --by``: per group, the mean of its models' scores with a plain loop, and the 95%
    percentile interval of the bootstrap means, each mean and the percentile (linear interpolation
    between order statistics, numpy's default) restated by hand over the same resample indices
    (``default_rng(seed).integers(0, n, (n_boot, n))``). None for a group of one model."""
    import numpy as np

    out = {}
    for g in sorted(set(group_of.values())):
        vals = [scores[m] for m in scores if group_of[m] == g]
        mean = sum(vals) / len(vals)
        ci = None
        if len(vals) > 1:
            idx = np.random.default_rng(seed).integers(0, len(vals), size=(n_boot, len(vals))).tolist()
            means = sorted(sum(vals[i] for i in row) / len(vals) for row in idx)

            def q(p: float) -> float:
                pos = p * (len(means) - 1)
                lo = int(pos)
                hi = min(lo + 1, len(means) - 1)
                return means[lo] + (means[hi] - means[lo]) * (pos - lo)

            ci = [q(0.025), q(0.975)]
        out[g] = (mean, ci)
    return out


NO_CLASS = "\x00no class"  # a prediction that is no gold class (unparseable: None)


def sklearn_per_class(items, n_boot: int = 0, seed: int = 0) -> dict:
    """Per-class precision, recall, F1 and support by scikit-learn's ``precision_recall_fscore_support``
    (labels = the sorted gold classes, zero_division=0); with ``n_boot``, the 95% percentile interval
    of each over resamples whose items are rebuilt from the same multinomial draws of the gold x
    prediction table the code draws (``default_rng(seed).multinomial(n, cells / n, size=n_boot)``),
    each resample scored by scikit-learn."""
    import numpy as np
    from sklearn.metrics import precision_recall_fscore_support

    golds = [str(i.gold) for i in items]
    preds = [NO_CLASS if i.pred is None else str(i.pred) for i in items]
    classes = sorted(set(golds))
    cols = classes + [NO_CLASS]
    p, r, f, s = precision_recall_fscore_support(golds, preds, labels=classes, zero_division=0)
    out = {c: {"support": int(s[k]), "precision": float(p[k]), "recall": float(r[k]), "f1": float(f[k])}
           for k, c in enumerate(classes)}
    if n_boot:
        cells = [(g, c) for g in classes for c in cols]
        counts = [sum(1 for a, b in zip(golds, preds) if a == g and (b == c or (c == NO_CLASS and b not in classes)))
                  for g, c in cells]
        n = len(golds)
        draws = np.random.default_rng(seed).multinomial(n, np.array(counts) / n, size=n_boot)
        per = {c: {"precision": [], "recall": [], "f1": []} for c in classes}
        for row in draws:
            g_b = [g for (g, _), m in zip(cells, row) for _ in range(m)]
            p_b = [c for (_, c), m in zip(cells, row) for _ in range(m)]
            pb, rb, fb, _ = precision_recall_fscore_support(g_b, p_b, labels=classes, zero_division=0)
            for k, c in enumerate(classes):
                per[c]["precision"].append(pb[k])
                per[c]["recall"].append(rb[k])
                per[c]["f1"].append(fb[k])
        for c in classes:
            for stat, vals in per[c].items():
                out[c][stat + "_ci95"] = [float(x) for x in np.percentile(vals, [2.5, 97.5])]
    return out


def plain_latency(samples: list[dict], journal_path) -> dict:
    """A task's latency block restated from its samples.jsonl lines and the journal file itself:
    every scored item's request keys looked up in ``responses`` (role 'model') with sqlite3, the mean
    and median by the statistics module, the 90th percentile by hand (linear between order
    statistics), output tokens/s = the timed requests' output tokens / their summed seconds."""
    import sqlite3
    import statistics

    con = sqlite3.connect(journal_path)
    try:
        lat = dict(con.execute("SELECT key, latency_s FROM responses WHERE role='model' AND latency_s IS NOT NULL"))
    finally:
        con.close()
    secs, toks, n = [], 0, 0
    for s in samples:
        if s.get("status") != "scored":
            continue
        outs = s.get("outputs") or []
        for i, k in enumerate(s.get("request_keys") or []):
            n += 1
            if k in lat:
                secs.append(lat[k])
                toks += outs[i].get("output_tokens") or 0
    out = {"n_requests": n, "n_timed": len(secs), "n_untimed": n - len(secs)}
    if secs:
        ordered = sorted(secs)
        pos = 0.9 * (len(ordered) - 1)
        lo = int(pos)
        hi = min(lo + 1, len(ordered) - 1)
        out.update(mean_s=statistics.fmean(secs), median_s=statistics.median(secs),
                   p90_s=ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo), output_tokens_per_s=toks / sum(secs))
    return out


# ------------------------------------------------------------------ human ratings vs automatic scores (build review import-ratings)


def plain_ranks(xs: list[float]) -> list[float]:
    """1-based ranks, ties given the mean of the ranks they span, with loops."""
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    ranks = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def plain_spearman(x: list[float], y: list[float]) -> float:
    """Spearman's rho: Pearson's r of the tie-averaged ranks, spelt out (NaN when a side is constant)."""
    rx, ry = plain_ranks(x), plain_ranks(y)
    n = len(x)
    mx, my = sum(rx) / n, sum(ry) / n
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    return NAN if sxx == 0 or syy == 0 else sxy / math.sqrt(sxx * syy)


def plain_cohen_kappa(a: list, b: list) -> float:
    """Cohen's kappa: (p_o - p_e) / (1 - p_e) with p_e from the two raters' marginals, spelt out."""
    n = len(a)
    labels = sorted(set(a) | set(b))
    po = sum(x == y for x, y in zip(a, b)) / n
    pe = sum((sum(x == lab for x in a) / n) * (sum(y == lab for y in b) / n) for lab in labels)
    return NAN if pe == 1 else (po - pe) / (1 - pe)


def plain_rating_bootstrap(kind: str, human: list, auto: list, n_boot: int, seed: int, alpha: float = 0.05):
    """The import-ratings interval with loops: resample r draws ``default_rng(seed).integers(0, n, n)``
    (one call per resample), the statistic (the plain ones above) on the drawn items, NaN resamples
    left out and counted; percentile interval (linear interpolation)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    stat = plain_spearman if kind == "rating" else plain_cohen_kappa
    vals, undefined = [], 0
    for _ in range(n_boot):
        idx = rng.integers(0, len(human), len(human)).tolist()
        h, a = [human[i] for i in idx], [auto[i] for i in idx]
        s = NAN if (kind == "label" and len(set(h) | set(a)) < 2) else stat(h, a)
        if math.isnan(s):
            undefined += 1
        else:
            vals.append(s)
    if not vals:
        return None, None, undefined
    return plain_percentile(vals, alpha / 2), plain_percentile(vals, 1 - alpha / 2), undefined


# ------------------------------------------------------------------ thinking analysis (analyze thinking --judge, OpenHuEval)

def plain_ratio_histogram(score_lists: list[list], n_bins: int = 10) -> list[int]:
    """Fig. 6 per response, restated with exact fractions: each response's correct (2/2) thoughts over its
    assessed thoughts (None left out; a response with none assessed is not counted), counted in bin 0 when
    0, else in (k/n_bins, (k+1)/n_bins]."""
    from fractions import Fraction

    counts = [0] * (n_bins + 1)
    for scores in score_lists:
        assessed = [x for x in scores if x is not None]
        if not assessed:
            continue
        r = Fraction(sum(1 for x in assessed if x == 2), len(assessed))
        k = 0
        if r > 0:
            k = 1
            while r > Fraction(k, n_bins):
                k += 1
        counts[k] += 1
    return counts


def plain_crosstab(pairs: list[tuple[str, str]]) -> dict[tuple[str, str], int]:
    """Fig. 9 restated: (complexity, correctness) -> count, with a plain loop."""
    out: dict[tuple[str, str], int] = {}
    for p in pairs:
        out[p] = out.get(p, 0) + 1
    return out


# ------------------------------------------------------------------ multi-turn judging (docs/multi-turn.md)

def plain_mt_bench_scores(ratings: list[list[float | None]]) -> dict[str, float | None]:
    """MT-Bench's single-answer scores restated: each turn's mean over the items with a score for that
    turn, and the overall mean over every (item, turn) score; None where there is none. glotbench's item
    value is the mean of its turns (None when a turn has none), so the overall equals this when every turn of
    every item has a score."""
    out: dict[str, float | None] = {}
    n_turns = max((len(r) for r in ratings), default=0)
    for k in range(n_turns):
        got = [r[k] for r in ratings if k < len(r) and r[k] is not None]
        out[f"turn{k + 1}"] = sum(got) / len(got) if got else None
    every = [x for r in ratings for x in r if x is not None]
    out["overall"] = sum(every) / len(every) if every else None
    return out


def plain_corpus_variant_spread(items: list[list], metric: Callable[[list], float], n: int, seed: int) -> dict:
    """A corpus metric's spread over prompt variants: ``items[v]`` the variant's scored items (the same
    items, in one order, in every variant), ``metric`` an independent restatement of the metric (e.g.
    sklearn's MCC); each resample recomputes it per variant, in loops."""
    k, v = len(items[0]), len(items)

    def stats(rows: list[int]) -> dict:
        scores = [metric([items[c][j] for j in rows]) for c in range(v)]
        mu = sum(scores) / v
        sd = math.sqrt(sum((x - mu) ** 2 for x in scores) / (v - 1)) if v > 1 else 0.0
        return {"scores": scores, "mean": mu, "min": min(scores), "max": max(scores), "std": sd}

    full = stats(list(range(k)))
    boots = [stats(row) for row in plain_resample_indices(k, n, seed)]
    out = dict(full)
    for key in ("mean", "min", "max", "std"):
        xs = [b[key] for b in boots]
        out[f"{key}_ci"] = [plain_quantile(xs, 0.025), plain_quantile(xs, 0.975)]
    return out


ROBUSTNESS_ORACLES["corpus_variant_spread"] = "plain loop over resamples, the metric restated (sklearn MCC)"
