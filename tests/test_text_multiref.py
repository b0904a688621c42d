"""Several references per item for the text metrics (issue 55): BLEU / chrF / chrF++ equal
sacrebleu's own multi-reference corpus scores (reference streams padded with None), ROUGE and
ROUGE_RAW the maximum over an item's references (Czech-Bench §4.3.2); every metric's fast
(resample) form equals the plain per-resample loop on such items; bad golds are one line."""

from __future__ import annotations

import random
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from glotbench.errors import DataError
from glotbench.scoring.metrics import ScoredItem, loop_stats
from glotbench.scoring.text_metrics import TM, multi_text_values, text, text_values
from value_oracles import MULTIREF_ORACLES, random_text, same, text_item

SETTINGS = settings(max_examples=25, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.mark.parametrize("name", sorted(MULTIREF_ORACLES))
def test_multi_reference_value_equals_its_oracle(name):
    oracle = MULTIREF_ORACLES[name]
    metric = getattr(TM, name)

    @SETTINGS
    @given(oracle.items)
    def check(items):
        got, want = metric(items), oracle.compute(items)
        assert same(got, want, rel=1e-9), (name, got, want)

    check()


@pytest.mark.parametrize("name", ["bleu", "chrf", "chrfpp", "rouge1", "rouge_raw_l", "rouge_raw_2_recall"])
def test_multi_reference_fast_form_is_the_plain_loop(name):
    metric = getattr(TM, name)

    @settings(max_examples=8, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
    @given(MULTIREF_ORACLES[name].items.filter(lambda xs: len(xs) >= 2), st.integers(0, 3))
    def check(items, seed):
        got = metric.resample_stats(items, 25, seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = loop_stats(items, metric, 25, seed)
        if metric.key is None:  # sacrebleu: integer sums, exact
            assert np.array_equal(got, want, equal_nan=True)
        else:  # a mean of fractional values: numpy's pairwise sum may differ in the last bit
            assert np.allclose(got, want, rtol=1e-12, atol=0, equal_nan=True)

    check()


def test_sacrebleu_multi_reference_by_hand():
    """Two items, the second with one reference: sacrebleu's CLI-equivalent API with a second
    stream padded by None."""
    import sacrebleu

    hyps = ["the cat sat on a mat", "hello there world"]
    golds = [["a cat sat on the mat", "the cat is sitting on the mat"], "hello world"]
    items = [text_item(g, h) for g, h in zip(golds, hyps)]
    streams = [["a cat sat on the mat", "hello world"], ["the cat is sitting on the mat", None]]
    assert TM.bleu(items) == pytest.approx(sacrebleu.corpus_bleu(hyps, streams).score, rel=1e-12)
    assert TM.chrf(items) == pytest.approx(sacrebleu.corpus_chrf(hyps, streams).score, rel=1e-12)
    # the second reference raises BLEU above the first reference alone
    assert TM.bleu(items) > sacrebleu.corpus_bleu(hyps, [streams[0]]).score


def test_one_reference_in_a_list_is_the_string():
    rng = random.Random(5)
    for _ in range(30):
        gold, pred = random_text(rng), random_text(rng)
        assert text(pred, [gold]) == text(pred, gold)
        assert multi_text_values([gold], pred) == text_values(gold, pred)


def test_rouge_takes_the_best_reference_per_type():
    refs = ["a b c d", "a b x y z"]
    vals = multi_text_values(refs, "a b x y z")
    assert vals["rouge1"] == 1.0 and vals["rouge_raw_2"] == 1.0
    each = [text_values(r, "a b x y z") for r in refs]
    assert vals["rouge_raw_1_precision"] == each[1]["rouge_raw_1_precision"]


@pytest.mark.parametrize("gold, msg", [([], "empty list"), (["ok", 3], "reference 2 of the gold must be a string")])
def test_bad_gold_is_one_line(gold, msg):
    class S:
        id = "it-7"

    with pytest.raises(DataError, match=msg) as err:
        text("x", gold, sample=S())
    assert "it-7" in str(err.value) and "\n" not in str(err.value)


def test_sacrebleu_stats_for_list_gold_without_text_scorer():
    items = [ScoredItem(gold=["a b c", "a b d"], pred="a b d"), ScoredItem(gold=["x y"], pred=None)]
    import sacrebleu

    assert TM.bleu(items) == pytest.approx(sacrebleu.corpus_bleu(["a b d", ""], [["a b c", "x y"], ["a b d", None]]).score)


# ---------------------------------------------------------------- a run in a fresh process

def test_run_with_several_references_equals_sacrebleu_and_the_oracles(stub_server, tmp_path):
    """A generate task whose target is a list of references (some items one string): results.json's
    BLEU and chrF equal sacrebleu's multi-reference corpus scores, every metric equals its oracle on
    the run's own samples, the signature says nrefs:var."""
    import json
    import os
    import subprocess
    import sys
    import textwrap
    from pathlib import Path

    import sacrebleu

    from value_oracles import run_value_mismatches

    rows = [("s1", ["Kůň úpěl.", "Žluťoučký kůň úpěl ódy."], "Kůň úpěl ódy."),
            ("s2", "Praha je hlavní město.", "Praha je město."),
            ("s3", ["A győztes szőlő.", "Győztes a szőlő.", "Szőlő."], "A szőlő győztes."),
            ("s4", ["北京 天气", "我们 学习 中文"], "我们 学习")]
    (tmp_path / "sum.jsonl").write_text("".join(json.dumps({"id": i, "text": f"Q{i}: {src}", "summary": gold},
                                                           ensure_ascii=False) + "\n" for i, gold, src in rows),
                                        encoding="utf-8")
    task = tmp_path / "sum.yaml"
    task.write_text(textwrap.dedent(f"""\
        name: my.multiref
        version: "1.0"
        language: cs
        dataset: {{format: jsonl, splits: {{test: {tmp_path / 'sum.jsonl'}}}}}
        fields: {{id: id, question: text, target: summary}}
        output_type: generate
        prompt: {{user: "Shrň: {{{{ question }}}}"}}
        extractor: {{name: text}}
        scorer: text
        metrics: [rouge_raw_1, rouge_raw_l, rouge1, rougeL, bleu, chrf, chrfpp]
        """), encoding="utf-8")
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps({"match": f"Q{i}:", "response": src}, ensure_ascii=False) + "\n"
                               for i, _g, src in rows), encoding="utf-8")
    base = stub_server("--responses", str(answers))
    src = str(Path(__file__).resolve().parents[1] / "src")
    env = {**os.environ, "OPENAI_API_KEY": "x", "PYTHONPATH": os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH", "")) if p)}
    done = subprocess.run([sys.executable, "-m", "glotbench", "run", "-m", "openai:stub", "--base-url", base, "-t", str(task),
                           "-o", str(tmp_path / "run"), "--no-progress"], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    t = json.loads((tmp_path / "run" / "results.json").read_text(encoding="utf-8"))["tasks"]["my.multiref"]
    assert run_value_mismatches(tmp_path / "run") == []
    hyps = [s for *_, s in rows]
    refs = [g if isinstance(g, list) else [g] for _, g, _ in rows]
    streams = [[(r + [None] * 3)[k] for r in refs] for k in range(3)]
    assert t["metrics"]["bleu"]["value"] == pytest.approx(sacrebleu.corpus_bleu(hyps, streams).score, abs=1e-6)
    assert t["metrics"]["chrf"]["value"] == pytest.approx(sacrebleu.corpus_chrf(hyps, streams).score, abs=1e-6)
    assert t["metric_definitions"]["bleu"]["signature"].startswith("nrefs:var|")


def test_signature_names_the_number_of_references():
    from glotbench.scoring.text_metrics import sacrebleu_signature, sacrebleu_signature_of

    one = [ScoredItem(gold="a b", pred="a"), ScoredItem(gold=["c d"], pred="c")]
    two = [ScoredItem(gold=["a b", "a c"], pred="a"), ScoredItem(gold=["c d", "d"], pred=None)]
    for kind in ("bleu", "chrf", "chrfpp"):
        assert sacrebleu_signature_of(kind)(one) == sacrebleu_signature(kind)  # byte-identical to the registered one
        assert sacrebleu_signature_of(kind)(two).startswith("nrefs:2|")
        assert sacrebleu_signature_of(kind)(one + two).startswith("nrefs:var|")
