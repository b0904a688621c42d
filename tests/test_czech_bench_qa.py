"""SQAD / SQuAD 2.0-cs scoring on 20 hand-made Czech pairs: EM and bag-of-words F1 at the raw,
lemma (MorphoDiTa + MorfFlex CZ 2.0) and root (MorphoDiTa's DeriNet 2.1 derivator) levels,
and SQuAD's no-answer handling, against a plain re-statement of the reference (the official
SQuAD normalisation and F1, the reference's ``morpho_analyze``)."""

from __future__ import annotations

import re
import string
from collections import Counter
from functools import lru_cache

import pytest

pytest.importorskip("ufal.morphodita")

from glotbench.benchmarks.czech_bench import qa_levels  # noqa: E402
from glotbench.languages.cs_morpho import find_dictionary, get_morpho  # noqa: E402

# (model answer, accepted gold answers); [] = the question has no answer (SQuAD 2.0)
PAIRS = [
    ("Vltava", ["Vltava"]),
    ("na řece Vltavě", ["Vltava"]),
    ("řeka Vltava", ["na řece Vltavě"]),
    ("v Praze", ["Praha"]),
    ("učitelů", ["učitel"]),
    ("učitelský", ["učitel"]),
    ("pražských mostů", ["pražské mosty"]),
    ("Karlův most.", ["Karlova mostu"]),
    ("hradní stráž", ["hrad"]),
    ("v roce 1348", ["1348"]),
    ("Karel IV.", ["Karel IV", "císař Karel IV."]),
    ("psali dopisy", ["psát dopis"]),
    ("nejvyšší hora", ["Sněžka"]),
    ("Sněžce", ["Sněžka"]),
    ("rychleji", ["rychlý"]),
    ("a pak", ["a"]),
    ("-", []),
    ("Praha", []),
    ("-", ["Praha"]),
    ("", []),
]


@pytest.fixture(scope="module")
def morpho():
    if find_dictionary() is None:
        pytest.skip("MorfFlex CZ 2.0 dictionary not found (czech_bench/morphology in the shared data)")
    m = get_morpho()
    assert m.available and m.has_roots
    return m


# ----------------------------------------------------------------------------- the re-statement


def ref_normalize(s: str) -> str:
    s = s.lower()
    s = "".join(ch for ch in s if ch not in set(string.punctuation))
    s = re.sub(r"\b(a|an|the)\b", " ", s)
    return " ".join(s.split())


def ref_f1(pred: str, gold: str) -> float:
    p, g = ref_normalize(pred).split(), ref_normalize(gold).split()
    if not p or not g:
        return float(p == g)
    same = sum((Counter(p) & Counter(g)).values())
    if same == 0:
        return 0.0
    pr, rc = same / len(p), same / len(g)
    return 2 * pr * rc / (pr + rc)


def ref_scores_v1(pred: str, golds: list[str]) -> tuple[float, float]:
    """HF ``squad`` (the v1.1 script, SQAD's metric): every gold kept, F1 0 when nothing is shared."""
    def f1(g):
        p, t = ref_normalize(pred).split(), ref_normalize(g).split()
        same = sum((Counter(p) & Counter(t)).values())
        return 0.0 if same == 0 else 2 * (same / len(p)) * (same / len(t)) / (same / len(p) + same / len(t))
    return max(float(ref_normalize(pred) == ref_normalize(g)) for g in golds), max(f1(g) for g in golds)


def ref_scores(pred: str, golds: list[str]) -> tuple[float, float]:
    """HF ``squad_v2`` (SQuAD 2.0-cs's metric)."""
    golds = [g for g in golds if ref_normalize(g)] or [""]
    return (max(float(ref_normalize(pred) == ref_normalize(g)) for g in golds), max(ref_f1(pred, g) for g in golds))


@lru_cache(maxsize=1)
def _ref_dict():
    from ufal.morphodita import Morpho

    return Morpho.load(str(find_dictionary()))


def ref_lemmas(text: str) -> str:
    from ufal.morphodita import TaggedLemmas

    m = _ref_dict()
    out = ""
    for tok in [t.rstrip(",.?!") for t in text.lower().rstrip("\r\n").split()]:
        lems = TaggedLemmas()
        m.analyze(tok, m.GUESSER, lems)
        out += lems[0].lemma + " "
    return out


# ----------------------------------------------------------------------------- tests


def test_levels_match_the_restatement(morpho):
    for pred, golds in PAIRS[:16]:
        v = qa_levels.sqad_values(pred, golds, morpho)
        assert (v["cb_em_raw"], v["cb_f1_raw"]) == pytest.approx(ref_scores_v1(pred, golds)), pred
        lem = ref_scores_v1(ref_lemmas(pred), [ref_lemmas(g) for g in golds])
        assert (v["cb_em_lemma"], v["cb_f1_lemma"]) == pytest.approx(lem), pred
        assert {"cb_em_root", "cb_f1_root"} <= set(v)


def test_levels_show_what_each_step_buys(morpho):
    v = {pred: qa_levels.sqad_values(pred, golds, morpho) for pred, golds in PAIRS[:16]}
    # inflection: wrong raw, right on lemmas
    assert v["učitelů"]["cb_em_raw"] == 0.0 and v["učitelů"]["cb_em_lemma"] == 1.0
    assert v["pražských mostů"]["cb_em_raw"] == 0.0 and v["pražských mostů"]["cb_em_lemma"] == 1.0
    assert v["Sněžce"]["cb_em_lemma"] == 1.0
    # derivation: different lemmas, same DeriNet root
    assert v["učitelský"]["cb_em_lemma"] == 0.0 and v["učitelský"]["cb_em_root"] == 1.0
    assert v["hradní stráž"]["cb_f1_lemma"] == 0.0 and v["hradní stráž"]["cb_f1_root"] > 0.0
    # no level makes a wrong answer right
    assert v["nejvyšší hora"]["cb_f1_root"] == 0.0
    # SQuAD's English article rule removes the Czech conjunction "a" (kept, as the reference does)
    assert v["a pak"]["cb_f1_raw"] == pytest.approx(ref_scores_v1("a pak", ["a"])[1])
    assert morpho.analyze("Učitelů,") == ("učitel ", "učit ")


def test_no_answer_handling(morpho):
    rows = [qa_levels.squad_values(pred, golds, morpho) for pred, golds in PAIRS[16:]]
    dash_none, text_none, dash_answerable, empty_none = rows
    assert dash_none["cb_na_pred"] == 1.0 and dash_none["cb_na_gold"] == 1.0 and dash_none["cb_na_correct"] == 1.0
    assert dash_none["cb_em_raw"] == dash_none["cb_em_lemma"] == dash_none["cb_em_root"] == 1.0
    assert text_none["cb_na_correct"] == 0.0 and text_none["cb_em_raw"] == 0.0
    assert dash_answerable["cb_na_gold"] == 0.0 and dash_answerable["cb_na_correct"] == 0.0 and dash_answerable["cb_f1_raw"] == 0.0
    # an empty answer is not the "-" token: the reference counts it as an answer (na_pred 0) that matches ""
    assert empty_none["cb_na_pred"] == 0.0 and empty_none["cb_em_raw"] == 1.0
    # SQuAD keeps the first line only
    assert qa_levels.squad_values("Vltava\nprotože...", ["Vltava"], morpho)["cb_em_raw"] == 1.0
    assert qa_levels.sqad_values("Vltava\nprotože...", ["Vltava"], morpho)["cb_em_raw"] == 0.0


def test_no_answer_macro_f1_is_sklearns(morpho):
    from sklearn.metrics import f1_score

    import glotbench.benchmarks.czech_bench.metrics  # noqa: F401
    from glotbench.scoring.metrics import ScoredItem, get_metric

    rows = [qa_levels.squad_values(pred, golds, morpho) for pred, golds in PAIRS]
    items = [ScoredItem(gold=None, pred=None, values=v) for v in rows]
    gold = [0 if golds else 1 for _, golds in PAIRS]
    pred = [1 if p.strip() == "-" else 0 for p, _ in PAIRS]
    assert get_metric("cb_na_macro_f1")(items) == pytest.approx(f1_score(gold, pred, average="macro"))
    assert get_metric("cb_na_accuracy")(items) == pytest.approx(sum(g == p for g, p in zip(gold, pred)) / len(gold))
