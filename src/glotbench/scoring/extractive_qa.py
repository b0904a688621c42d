"""Extractive QA scoring as Czech-Bench does it (SQAD, SQuAD 2.0 CS): exact match and
bag-of-words F1, the best over several gold answers, at several normalisation steps.

What the thesis does (Jirkovský 2024, §5.4.13-5.4.14): the Hugging Face ``squad`` /
``squad_v2`` metric "computes the maximal exact match and unigram retrieval F1 scores for each
example, and then averages them over the whole dataset"; then "two steps of morphological
analysis are performed on both the generated and ground truth answers [...] First, all words
are lemmatized using the Morphodita morphological dictionary, and then the lemmas are replaced
with roots of their respective word-formation relation trees using the Derinet word formation
network. After each step, a new set of evaluation metrics is computed", giving "one pair of
EM accuracy and unigram retrieval F1 score [...] per each normalization step". For SQuAD 2.0
"the model is also allowed to signal its inability to answer [...] by outputting a single '-'
token [...] An empty answer is then represented with an empty string"; the report adds the
accuracy and macro-F1 of the binary "is it unanswerable" decision.

Steps reported here (each an (EM, F1) pair, fractions in [0, 1]):

``raw``
    strip + whitespace tokens, case and punctuation kept.
``normalized``
    the SQuAD ``normalize_answer``: lowercase, drop punctuation, drop articles, squeeze spaces.
    The default ``profile="squad"`` is byte-for-byte the official/HF function (ASCII punctuation
    *deleted*, so "U.S." -> "us" and "don't" -> "dont"; English articles ``a|an|the`` whatever the
    language), which is what Czech-Bench's published numbers use. It removes the Czech
    conjunction "a" ("and") and keeps „“ – …, so glotbench's variant, ``profile="lenient"``
    (old name ``"glotbench"``, still accepted), is reported beside it when asked for: it turns
    Unicode punctuation (categories P* and S*) into spaces and removes only the articles of the
    answer's language: en ``a an the``; hu ``a az`` (not ``egy``, which is also the numeral
    "one"); cs and the rest none.
``lemmatized``
    the normalised tokens lemmatised, lowercased: Czech with MorphoDiTa + MorfFlex CZ 2.0
    (:mod:`glotbench.languages.cs_morpho`, when installed and the dictionary is found), other languages
    with ``simplemma`` (a dictionary lemmatiser that works offline). Only for languages simplemma supports
    (cs, hu, en, ru, ...; not zh or mn): otherwise the step is left out and a note says so.

The thesis' third step (DeriNet word-formation roots) has no offline equivalent here and is not
computed.

No-answer convention (SQuAD 2.0): an empty gold list means the question has no answer; golds
that normalise to nothing are dropped and, if none remain, the gold is ``""``. A prediction in
``no_answer_strings`` (default ``"-"`` and ``""``) is the empty answer. When either side has no
tokens, EM = F1 = 1 if both are empty, else 0. Chinese/Japanese answers are tokenised per
character (other runs by whitespace), as CMRC-style evaluations do.
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Iterable, Literal, Sequence

from glotbench.errors import DataError
from glotbench.scoring.metrics import accuracy, macro_f1

Profile = Literal["squad", "lenient", "glotbench"]
DEFAULT_PROFILE: Profile = "squad"
STEPS = ("raw", "normalized", "lemmatized")
NO_ANSWER_STRINGS: tuple[str, ...] = ("-", "")

ARTICLES: dict[str, tuple[str, ...]] = {
    "en": ("a", "an", "the"),
    "hu": ("a", "az"),
}

_SQUAD_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_SQUAD_PUNCT = set(string.punctuation)
_CJK = re.compile(r"([\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ffff])")


def squad_normalize(text: str) -> str:
    """The official SQuAD ``normalize_answer`` (also in HF ``evaluate``), unchanged."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in _SQUAD_PUNCT)
    text = _SQUAD_ARTICLES.sub(" ", text)
    return " ".join(text.split())


def _is_punct_or_symbol(ch: str) -> bool:
    return unicodedata.category(ch)[0] in "PS"


def normalize_answer(text: str, lang: str = "en", profile: Profile = DEFAULT_PROFILE) -> str:
    """SQuAD's ``normalize_answer`` (default), or the ``lenient`` profile: Unicode punctuation to
    spaces, the language's own articles dropped."""
    if profile == "squad":
        return squad_normalize(text)
    if profile not in ("lenient", "glotbench"):
        raise ValueError(f"unknown normalisation profile {profile!r}; use 'squad' (default) or 'lenient'")
    text = unicodedata.normalize("NFC", text).lower()
    text = "".join(" " if _is_punct_or_symbol(ch) else ch for ch in text)
    arts = ARTICLES.get(lang.split("-")[0].lower(), ())
    tokens = [t for t in text.split() if t not in arts]
    return " ".join(tokens)


def tokens_of(text: str, lang: str = "en") -> list[str]:
    """Whitespace tokens; for zh/ja each CJK character is its own token."""
    if lang.split("-")[0].lower() in ("zh", "ja"):
        text = _CJK.sub(r" \1 ", text)
    return text.split()


def _own_lemmatizer(lang: str):
    """A dedicated lemmatiser for ``lang`` when one is installed: Czech uses MorphoDiTa with the
    MorfFlex CZ 2.0 dictionary (glotbench.languages.cs_morpho), as Czech-Bench does; None otherwise."""
    if lang.split("-")[0].lower() == "cs":
        from glotbench.languages.cs_morpho import lemmatizer_cs

        return lemmatizer_cs()
    return None


def lemmatizer_supports(lang: str) -> bool:
    if _own_lemmatizer(lang) is not None:
        return True
    try:
        from simplemma.strategies.dictionaries.dictionary_factory import SUPPORTED_LANGUAGES
    except ImportError:  # simplemma missing, or its layout changed
        return False
    return lang in SUPPORTED_LANGUAGES


@lru_cache(maxsize=200_000)
def _lemma(token: str, lang: str) -> str:
    own = _own_lemmatizer(lang)
    if own is not None:
        return own(token)
    import simplemma

    return simplemma.lemmatize(token, lang=lang).lower()


def _step_tokens(text: str, lang: str, step: str, profile: Profile) -> list[str]:
    if step == "raw":
        return tokens_of(text.strip(), lang)
    toks = tokens_of(normalize_answer(text, lang, profile), lang)
    if step == "normalized":
        return toks
    if step == "lemmatized":
        return [_lemma(t, lang) for t in toks]
    raise ValueError(f"unknown step {step!r}; known: {', '.join(STEPS)}")


def _f1(pred: list[str], gold: list[str]) -> float:
    if not pred or not gold:
        return float(pred == gold)
    common = Counter(pred) & Counter(gold)
    same = sum(common.values())
    if same == 0:
        return 0.0
    p, r = same / len(pred), same / len(gold)
    return 2 * p * r / (p + r)


def is_no_answer(prediction: str | None, no_answer_strings: Sequence[str] = NO_ANSWER_STRINGS) -> bool:
    return prediction is None or prediction.strip() in no_answer_strings


def score_answer(
    prediction: str | None,
    golds: Sequence[str],
    lang: str = "en",
    step: str = "normalized",
    profile: Profile = DEFAULT_PROFILE,
    no_answer_strings: Sequence[str] = NO_ANSWER_STRINGS,
) -> tuple[float, float]:
    """(EM, F1) of one prediction against its gold answers: the max over golds."""
    pred = "" if is_no_answer(prediction, no_answer_strings) else prediction
    pred_toks = _step_tokens(pred, lang, step, profile)
    gold_toks = [t for t in (_step_tokens(g, lang, step, profile) for g in golds) if t]
    if not gold_toks:  # unanswerable (or only empty golds): SQuAD v2 uses gold ""
        gold_toks = [[]]
    em = max(float(pred_toks == g) for g in gold_toks)
    f1 = max(_f1(pred_toks, g) for g in gold_toks)
    return em, f1


def score_answer_v1(prediction: str, golds: Sequence[str]) -> tuple[float, float]:
    """(EM, F1) exactly as the official SQuAD v1.1 script (HF ``evaluate``'s ``squad`` metric):
    ``metric_max_over_ground_truths`` over *every* gold, each compared after ``normalize_answer``
    with whitespace tokens. Unlike v2 no gold is dropped: a gold that normalises to nothing
    ("a", "the", ".") matches a prediction that does too (EM 1), and F1 is 0 whenever no token is
    shared, two empty answers included. The v1 script has no unanswerable questions (its ``max``
    over no golds fails); an empty gold list scores (0, 0) here.
    """
    if not golds:
        return 0.0, 0.0
    pred_norm = squad_normalize(prediction)
    pred_toks = pred_norm.split()
    em = f1 = 0.0
    for gold in golds:
        gold_norm = squad_normalize(gold)
        em = max(em, float(pred_norm == gold_norm))
        gold_toks = gold_norm.split()
        same = sum((Counter(pred_toks) & Counter(gold_toks)).values())
        if same:
            p, r = same / len(pred_toks), same / len(gold_toks)
            f1 = max(f1, 2 * p * r / (p + r))
    return em, f1


def item_values(
    prediction: str | None,
    golds: Sequence[str],
    lang: str = "en",
    profile: Profile = DEFAULT_PROFILE,
    no_answer_strings: Sequence[str] = NO_ANSWER_STRINGS,
) -> dict[str, float]:
    """Per-item values for a :class:`~glotbench.scoring.metrics.ScoredItem`.

    Keys: ``exact_match`` / ``bow_f1`` (the normalised step, the usual SQuAD numbers),
    ``exact_match_raw`` / ``bow_f1_raw``, ``exact_match_lemma`` / ``bow_f1_lemma`` (when the
    language has a lemmatiser), ``no_answer_gold`` / ``no_answer_pred`` (1.0/0.0).
    """
    out: dict[str, float] = {}
    steps = ["raw", "normalized"] + (["lemmatized"] if lemmatizer_supports(lang) else [])
    for step in steps:
        em, f1 = score_answer(prediction, golds, lang, step, profile, no_answer_strings)
        suffix = {"raw": "_raw", "normalized": "", "lemmatized": "_lemma"}[step]
        out[f"exact_match{suffix}"] = em
        out[f"bow_f1{suffix}"] = f1
    out["no_answer_gold"] = float(not any(normalize_answer(g, lang, profile) for g in golds))
    out["no_answer_pred"] = float(is_no_answer(prediction, no_answer_strings))
    return out


@dataclass
class ExtractiveQAReport:
    n_items: int
    steps: dict[str, tuple[float, float]]  # step -> (EM, F1), fractions
    no_answer: dict[str, float] = field(default_factory=dict)  # accuracy, macro_f1 of "unanswerable?"
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "n_items": self.n_items,
            "steps": {k: {"exact_match": em, "bow_f1": f1} for k, (em, f1) in self.steps.items()},
            "no_answer": self.no_answer,
            "notes": self.notes,
        }


def score_extractive_qa(
    predictions: Sequence[str | None],
    golds: Sequence[Sequence[str]],
    lang: str,
    profile: Profile = DEFAULT_PROFILE,
    no_answer_strings: Sequence[str] = NO_ANSWER_STRINGS,
    steps: Iterable[str] = STEPS,
) -> ExtractiveQAReport:
    """Corpus EM and F1 (means over items) per normalisation step.

    ``golds[i]`` is the list of accepted answers of item i (empty list: unanswerable). When
    some gold lists are empty the report also has the no-answer detection accuracy and
    macro-F1 (labels "answerable"/"unanswerable"), as Czech-Bench's SQuAD 2.0 benchmark does.
    """
    if len(predictions) != len(golds):
        raise DataError(f"extractive QA: {len(predictions)} predictions but {len(golds)} gold lists")
    for i, g in enumerate(golds):
        if isinstance(g, str) or not isinstance(g, (list, tuple)):
            raise DataError(f"extractive QA: item {i}: field 'golds' must be a list of strings, got {type(g).__name__}")
    report = ExtractiveQAReport(n_items=len(predictions), steps={})
    for step in steps:
        if step == "lemmatized" and not lemmatizer_supports(lang):
            report.notes.append(f"lemmatized step skipped: simplemma has no lemmatiser for {lang!r}")
            continue
        if step not in STEPS:
            raise ValueError(f"unknown step {step!r}; known: {', '.join(STEPS)}")
        pairs = [score_answer(p, g, lang, step, profile, no_answer_strings) for p, g in zip(predictions, golds)]
        n = len(pairs) or 1
        report.steps[step] = (sum(e for e, _ in pairs) / n, sum(f for _, f in pairs) / n)
    gold_na = ["unanswerable" if not any(normalize_answer(x, lang, profile) for x in g) else "answerable" for g in golds]
    if "unanswerable" in gold_na:
        pred_na = ["unanswerable" if is_no_answer(p, no_answer_strings) else "answerable" for p in predictions]
        report.no_answer = {"accuracy": accuracy(gold_na, pred_na), "macro_f1": macro_f1(gold_na, pred_na)}
    return report
