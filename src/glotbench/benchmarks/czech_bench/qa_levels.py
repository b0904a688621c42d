"""SQAD / SQuAD 2.0-cs scoring as Czech-Bench does it: the SQuAD metric (official
normalisation: lowercase, ASCII punctuation and English articles removed; EM and bag-of-words
F1, the best over the gold answers) at three levels of the same texts. SQAD uses HF
``evaluate``'s ``squad`` (the v1.1 script: every gold kept, so a gold that normalises to nothing,
such as the Czech "a", matches an answer that does too); SQuAD 2.0 uses ``squad_v2`` (golds that
normalise to nothing dropped, none left means the no-answer gold ""):

``raw``   the model's answer and the golds as they are;
``lemma`` each side rewritten as the reference's ``morpho_analyze`` does: lowercase, split on
          whitespace, ``rstrip(",.?!")`` per token, each token replaced by MorphoDiTa's first
          lemma (MorfFlex CZ 2.0, guesser on), joined with single spaces;
``root``  the lemmas replaced by the root of their word-formation tree (DeriNet): only when a
          root lexicon is available (see :mod:`glotbench.languages.cs_morpho`).

SQAD scores the whole output; SQuAD keeps its first line, and ``-`` (after strip) means "no
answer" (empty string); its no-answer gold is "the row has no answer_start". The no-answer
decision gets accuracy and macro-F1.
"""

from __future__ import annotations

from typing import Callable

from glotbench.scoring.extractive_qa import score_answer, score_answer_v1


def _squad_v2(pred: str, golds: list[str]) -> tuple[float, float]:
    return score_answer(pred, golds, lang="cs", step="normalized", profile="squad", no_answer_strings=())


def level_values(pred: str, golds: list[str], morpho=None,
                 rule: Callable[[str, list[str]], tuple[float, float]] = _squad_v2) -> dict[str, float]:
    """cb_em_*/cb_f1_* at each level, ``rule`` (SQuAD v1 or v2) giving each (EM, F1)."""
    out: dict[str, float] = {}
    em, f1 = rule(pred, golds)
    out["cb_em_raw"], out["cb_f1_raw"] = em, f1
    if morpho is not None and morpho.available:
        p_lem, p_root = morpho.analyze(pred)
        g = [morpho.analyze(x) for x in golds]
        em, f1 = rule(p_lem, [x[0] for x in g])
        out["cb_em_lemma"], out["cb_f1_lemma"] = em, f1
        if morpho.has_roots:
            em, f1 = rule(p_root, [x[1] for x in g])
            out["cb_em_root"], out["cb_f1_root"] = em, f1
    return out


def sqad_values(text: str, golds: list[str], morpho=None) -> dict[str, float]:
    return level_values(text, list(golds), morpho, rule=score_answer_v1)


def squad_values(text: str, golds: list[str], morpho=None) -> dict[str, float]:
    first = text.split("\n")[0]
    no_answer = first.strip() == "-"
    pred = "" if no_answer else first
    out = level_values(pred, list(golds), morpho)
    gold_na = 0.0 if golds else 1.0
    out.update({"cb_na_gold": gold_na, "cb_na_pred": float(no_answer), "cb_na_correct": float(gold_na == float(no_answer))})
    return out
