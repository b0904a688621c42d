"""Text-generation metrics against their reference libraries and re-statements, and in a real run.

* BLEU / chrF / chrF++ equal sacrebleu on 50 generated corpora (Czech and Hungarian diacritics,
  Chinese, punctuation, line breaks); their bootstrap equals sacrebleu on each resample.
* ROUGE-1/2/L equal rouge-score on 50 generated pairs; on ASCII text glotbench's tokenizer gives
  rouge-score's default tokens, and the default tokenizer is shown to drop non-ASCII letters.
* ROUGE_RAW equals a plain re-statement of SumeCzech's rouge_raw.py (tests/value_oracles.py) on
  50 pairs, long ones included (the reference's 32-replacement tokenisation), and hand-worked cases.
* BERTScore equals bert_score.score on 50 pairs with a tiny random encoder saved offline in tmp.
* A run in a fresh process (stub server, a task YAML in tmp) writes sacrebleu's signature into
  results.json and metric values equal to the oracles on its own samples.jsonl.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from glotbench.scoring.metrics import bootstrap_ci, get_metric
from value_oracles import (METRIC_ORACLES, plain_rouge_raw, random_text, restated_unicode_tokens,
                           rouge_raw_reference_tokens, run_value_mismatches, text_item)

SRC = str(Path(__file__).resolve().parents[1] / "src")
N_CASES = 50


def pairs(seed: int, n: int = N_CASES, max_words: int = 30) -> list[tuple[str, str | None]]:
    """(gold, prediction) pairs: random texts, some identical, some unparseable (None)."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        gold = random_text(rng, max_words)
        r = rng.random()
        out.append((gold, None if r < 0.08 else gold if r < 0.16 else random_text(rng, max_words)))
    return out


def test_every_text_metric_resolves_and_builtins_list_them_all():
    import glotbench.builtins as b
    from glotbench.scoring import text_metrics as tm

    assert b.TEXT_METRICS == tm.METRIC_NAMES
    for name in ("bleu", "chrf", "chrfpp", "rouge1", "rouge2", "rougeL", "rouge_raw_1", "rouge_raw_2", "rouge_raw_l",
                 "bertscore_f1", "bertscore_precision", "bertscore_recall"):
        assert get_metric(name).name == name


def test_text_scorer_takes_one_reference_and_scores_an_empty_answer_as_empty_text():
    from glotbench.errors import DataError
    from glotbench.scoring.scorers import get_scorer

    text = get_scorer("text")
    pred, values = text(None, ["Kůň úpěl."])  # a one-element list is one reference
    assert pred is None and values["rouge1"] == 0.0 and values["rouge_raw_1"] == 0.0
    assert text("Kůň úpěl.", "kůň  úpěl.")[1]["rouge_raw_l"] == 1.0
    assert text("x", None) == ("x", {})  # an unlabelled item: no values
    # several references are taken since issue 55 (tests/test_text_multiref.py): the best one per ROUGE type
    assert text("a", ["a", "b"])[1]["rouge1"] == 1.0
    with pytest.raises(DataError, match="the gold reference must be a string, not int"):
        text("a", 3)


# ---------------------------------------------------------------- sacrebleu


@pytest.mark.parametrize("name", ["bleu", "chrf", "chrfpp"])
def test_sacrebleu_metrics_equal_sacrebleu_on_50_corpora(name):
    from sacrebleu.metrics import BLEU, CHRF

    lib = {"bleu": BLEU, "chrf": CHRF, "chrfpp": lambda: CHRF(word_order=2)}[name]
    metric = get_metric(name)
    for case in range(N_CASES):
        corpus = pairs(1000 + case, n=random.Random(case).randint(1, 12))
        items = [text_item(g, p) for g, p in corpus]
        want = lib().corpus_score(["" if p is None else p for _, p in corpus], [[g for g, _ in corpus]]).score
        assert metric(items) == pytest.approx(want, abs=1e-9), (name, case)


@pytest.mark.parametrize("name", ["bleu", "chrfpp"])
def test_sacrebleu_bootstrap_equals_sacrebleu_on_each_resample(name):
    """The vectorised form (summed per-item statistics) against corpus_score on each resample drawn."""
    metric = get_metric(name)
    items = [text_item(g, p) for g, p in pairs(7, n=25)]
    oracle = METRIC_ORACLES[name].compute
    rng = np.random.default_rng(3)
    stats = [oracle([items[j] for j in rng.integers(0, len(items), size=len(items))]) for _ in range(200)]
    want = (float(np.quantile(stats, 0.025)), float(np.quantile(stats, 0.975)))
    got = bootstrap_ci(items, metric, n_resamples=200, seed=3)
    assert got == pytest.approx(want, abs=1e-9)
    assert got[0] < metric(items) < got[1]


@pytest.mark.parametrize("name", ["bleu", "chrf"])
def test_sacrebleu_bootstrap_leaves_out_items_without_a_reference_as_the_metric_does(name):
    from test_metric_values import oracle_loop_interval

    metric = get_metric(name)
    items = [text_item(g, p) for g, p in pairs(9, n=12)]
    for k in (0, 3, 4, 9):
        items[k].gold = None  # an unlabelled item: the metric and each resample leave it out
    sacre = METRIC_ORACLES[name].compute

    def oracle(xs):
        xs = [x for x in xs if x.gold is not None]
        return sacre(xs) if xs else float("nan")

    assert metric(items) == pytest.approx(oracle(items), abs=1e-9)
    assert metric.resample_stats(items, 5, 0) is not None  # the vectorised form, not the per-resample fallback
    got = bootstrap_ci(items, metric, n_resamples=100, seed=1)
    assert got == pytest.approx(oracle_loop_interval(items, oracle, 100, 1), abs=1e-9)


def test_sacrebleu_signature_in_the_metric_definition():
    import sacrebleu

    sig = get_metric("bleu").to_dict()["signature"]
    assert sig == f"nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:{sacrebleu.__version__}"
    assert get_metric("chrfpp").to_dict()["signature"].startswith("nrefs:1|case:mixed|eff:yes|nc:6|nw:2|space:no|")
    assert get_metric("chrf").to_dict()["signature"].startswith("nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|")


# ---------------------------------------------------------------- rouge-score


def test_rouge_equals_rouge_score_on_50_pairs():
    from rouge_score import rouge_scorer

    class Restated:
        def tokenize(self, text):
            return restated_unicode_tokens(text)

    lib = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=False, tokenizer=Restated())
    for gold, pred in pairs(11):
        values = text_item(gold, pred).values
        want = lib.score(gold, pred or "")
        for t in ("rouge1", "rouge2", "rougeL"):
            assert values[t] == pytest.approx(want[t].fmeasure, abs=1e-12), (t, gold, pred)


def test_unicode_tokenizer_keeps_diacritics_and_splits_han_but_matches_the_default_on_ascii():
    from rouge_score import tokenizers

    from glotbench.scoring.text_metrics import unicode_tokens

    default = tokenizers.DefaultTokenizer(use_stemmer=False)
    assert default.tokenize("Žluťoučký kůň") == ["lu", "ou", "k", "k"]  # why glotbench does not use it
    assert unicode_tokens("Žluťoučký kůň, Árvíztűrő 2024!") == ["žluťoučký", "kůň", "árvíztűrő", "2024"]
    assert unicode_tokens("我们学习中文。Praha") == ["我", "们", "学", "习", "中", "文", "praha"]
    assert unicode_tokens("Z\u030cluto") == ["žluto"]  # NFD input is composed first
    rng = random.Random(5)
    ascii_words = ["The", "cat", "sat", "on", "mat", "don't", "e-mail", "3,5", "x_y", "A1", "..."]
    for _ in range(N_CASES):
        text = " ".join(rng.choice(ascii_words) for _ in range(rng.randint(0, 15)))
        assert unicode_tokens(text) == default.tokenize(text), text


# ---------------------------------------------------------------- ROUGE_RAW


def test_rouge_raw_equals_the_plain_restatement_on_50_pairs():
    cases = pairs(21) + pairs(22, max_words=60)  # long texts pass the reference's 32-replacement limit
    for gold, pred in cases:
        values = text_item(gold, pred).values
        for full in (False, True):
            g = rouge_raw_reference_tokens(gold, full)
            s = rouge_raw_reference_tokens(pred or "", full)
            for which in ("1", "2", "l"):
                p, r, f = plain_rouge_raw(g, s, which)
                if full:
                    assert values[f"rouge_raw_{which}_full"] == pytest.approx(f, abs=1e-12)
                    continue
                assert values[f"rouge_raw_{which}"] == pytest.approx(f, abs=1e-12), (which, gold, pred)
                assert values[f"rouge_raw_{which}_precision"] == pytest.approx(p, abs=1e-12)
                assert values[f"rouge_raw_{which}_recall"] == pytest.approx(r, abs=1e-12)


def test_rouge_raw_tokens_and_values_worked_by_hand():
    from glotbench.scoring import rouge_raw

    assert rouge_raw.tokens("Ahoj, světe.") == ["ahoj", ",", "světe", "."]
    assert rouge_raw.tokens("Győztes   Tűz\nszőlő") == ["győztes", "tűz", "szőlő"]
    # 20 words: the reference stops splitting at word boundaries after the 16th word's end
    words = [f"w{k}" for k in range(20)]
    text = " ".join(words[:18]) + ", " + " ".join(words[18:])
    ref = rouge_raw.tokens(text)
    assert ref[:16] == words[:16] and "w17," in ref and "," not in ref
    assert rouge_raw.tokens(text, full=True) == words[:18] + [","] + words[18:]
    # gold "a b c d", system "a b x": 1-grams 2 of 3 / 4; 2-grams 1 of 2 / 3; LCS 2
    d = rouge_raw.document("a b c d", "a b x")
    assert d["1"] == pytest.approx((2 / 3, 2 / 4, 4 / 7))
    assert d["2"] == pytest.approx((1 / 2, 1 / 3, 2 / 5))
    assert d["L"] == pytest.approx((2 / 3, 2 / 4, 4 / 7))
    # the corpus value is the plain mean of per-document F (SumeCzech's RougeRaw.corpus)
    items = [text_item("a b c d", "a b x"), text_item("Kůň úpěl.", "kůň úpěl.")]
    assert get_metric("rouge_raw_1")(items) == pytest.approx((4 / 7 + 1.0) / 2)


# ---------------------------------------------------------------- BERTScore


@pytest.fixture(scope="module")
def tiny_encoder(tmp_path_factory):
    """A 2-layer BERT with random weights and a word-level vocabulary, built and saved offline."""
    pytest.importorskip("bert_score")
    torch = pytest.importorskip("torch")
    from transformers import BertConfig, BertModel, BertTokenizer

    from value_oracles import TEXT_WORDS

    folder = tmp_path_factory.mktemp("tiny_bert")
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    for w in TEXT_WORDS + list(",.!?-'，。") + list("我们学习中文北京天气"):
        for piece in restated_unicode_tokens(w) + [w.lower()]:
            if piece not in vocab:
                vocab.append(piece)
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    BertTokenizer(str(folder / "vocab.txt"), model_max_length=128).save_pretrained(folder)
    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=128)
    BertModel(config).save_pretrained(folder)
    return folder


def test_bertscore_equals_bert_score_on_50_pairs(tiny_encoder):
    import bert_score

    from glotbench.scoring.scorers import get_scorer

    scorer = get_scorer("text_bertscore")
    cases = pairs(31, max_words=20)
    got = [scorer(p, g, bertscore_model=str(tiny_encoder))[1] for g, p in cases]
    # bert-score sets an empty candidate's or reference's scores to 0 (its encoder call fails on an
    # empty text under transformers 5, so glotbench applies that rule before calling it)
    empty = [not (p or "").strip() or not g.strip() for g, p in cases]
    assert 3 <= sum(empty) < 20
    for values in (v for v, e in zip(got, empty) if e):
        assert (values["bertscore_precision"], values["bertscore_recall"], values["bertscore_f1"]) == (0.0, 0.0, 0.0)
    got = [v for v, e in zip(got, empty) if not e]
    cases = [c for c, e in zip(cases, empty) if not e]
    p, r, f = bert_score.score([p for _, p in cases], [g for g, _ in cases], model_type=str(tiny_encoder), num_layers=2)
    for k, values in enumerate(got):
        assert values["bertscore_precision"] == pytest.approx(float(p[k]), abs=1e-5), cases[k]
        assert values["bertscore_recall"] == pytest.approx(float(r[k]), abs=1e-5)
        assert values["bertscore_f1"] == pytest.approx(float(f[k]), abs=1e-5)
        assert values["rouge_raw_1"] == text_item(*cases[k]).values["rouge_raw_1"]
    assert len({round(v["bertscore_f1"], 6) for v in got}) > 10  # the encoder tells the texts apart


def test_bertscore_encoder_from_the_environment_and_missing_encoder_is_one_line(tiny_encoder, monkeypatch):
    from glotbench.errors import TaskSpecError
    from glotbench.scoring.bertscore import bertscore_values

    monkeypatch.setenv("GLOTBENCH_BERTSCORE_MODEL", str(tiny_encoder))
    assert bertscore_values("kůň úpěl", "kůň úpěl")["bertscore_f1"] == pytest.approx(1.0, abs=1e-5)
    monkeypatch.delenv("GLOTBENCH_BERTSCORE_MODEL")
    with pytest.raises(TaskSpecError, match="name a local encoder with scorer_options.bertscore_model"):
        bertscore_values("a", "b")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(TaskSpecError, match="neither a local directory nor in the local Hugging Face cache"):
        bertscore_values("a", "b", model="no-such-org/no-such-encoder")


# ---------------------------------------------------------------- a real run


ROWS = [
    ("s1", "Praha je hlavní město České republiky a leží na řece Vltavě.", "Praha je hlavní město Česka, leží na Vltavě."),
    ("s2", "A Balaton Közép-Európa legnagyobb tava.", "A Balaton a legnagyobb tó Közép-Európában."),
    ("s3", "北京是中国的首都。", "北京是中国首都。"),
    ("s4", "The cat sat on the mat.", "The cat sat on the mat."),
    ("s5", "Žluťoučký kůň úpěl ďábelské ódy.", "Kůň zpíval."),
]

TEXT_TASK_METRICS = ["rouge_raw_1", "rouge_raw_2", "rouge_raw_l", "rouge_raw_1_full", "rouge1", "rouge2", "rougeL", "rouge_l",
                     "bleu", "chrf", "chrfpp"]


def _text_task(folder: Path, metrics: list[str], scorer: str = "text") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sum.jsonl").write_text("".join(json.dumps({"id": i, "text": f"Q{i}: {src}", "summary": gold},
                                                          ensure_ascii=False) + "\n" for i, gold, src in ROWS),
                                      encoding="utf-8")
    (folder / "sum.yaml").write_text(textwrap.dedent(f"""\
        name: my.summaries
        version: "1.0"
        language: cs
        dataset: {{format: jsonl, splits: {{test: {folder / 'sum.jsonl'}}}}}
        fields: {{id: id, question: text, target: summary}}
        output_type: generate
        prompt: {{user: "Shrň: {{{{ question }}}}"}}
        extractor: {{name: text}}
        scorer: {scorer}
        metrics: [{", ".join(metrics)}]
        """), encoding="utf-8")
    return folder / "sum.yaml"


def _glotbench(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "OPENAI_API_KEY": "x", "PYTHONPATH": os.pathsep.join(p for p in (SRC, os.environ.get("PYTHONPATH", "")) if p)}
    return subprocess.run([sys.executable, "-m", "glotbench", *args], env=env, capture_output=True, text=True, timeout=300)


def test_run_writes_sacrebleu_signature_and_values_equal_the_oracles(stub_server, tmp_path):
    import sacrebleu

    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps({"match": f"Q{i}:", "response": src}, ensure_ascii=False) + "\n"
                               for i, _gold, src in ROWS), encoding="utf-8")
    base = stub_server("--responses", str(answers))
    path = _text_task(tmp_path / "user", TEXT_TASK_METRICS)
    done = _glotbench("run", "-m", "openai:stub", "--base-url", base, "-t", str(path), "-o", str(tmp_path / "run"),
                      "--no-progress")
    assert done.returncode == 0, done.stderr
    res = json.loads((tmp_path / "run" / "results.json").read_text(encoding="utf-8"))
    t = res["tasks"]["my.summaries"]
    defs = t["metric_definitions"]
    assert defs["bleu"]["signature"] == f"nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:{sacrebleu.__version__}"
    assert defs["chrfpp"]["signature"].startswith("nrefs:1|case:mixed|eff:yes|nc:6|nw:2|")
    assert t["headline"] == "rouge_raw_1"
    # every value against its oracle on the run's own samples, and against sacrebleu directly
    assert run_value_mismatches(tmp_path / "run") == []
    want_bleu = sacrebleu.corpus_bleu([src for *_, src in ROWS], [[gold for _, gold, _ in ROWS]]).score
    assert t["metrics"]["bleu"]["value"] == pytest.approx(want_bleu, abs=1e-6)
    for name in TEXT_TASK_METRICS:
        lo, hi = t["metrics"][name]["ci95"]
        assert lo is not None and hi is not None and lo <= t["metrics"][name]["value"] <= hi, name


def test_bertscore_metric_with_the_text_scorer_fails_at_load_in_one_line(stub_server, tmp_path):
    base = stub_server("--answer", "x")
    path = _text_task(tmp_path / "user", ["rouge_raw_1", "bertscore_f1"])
    done = _glotbench("run", "-m", "openai:stub", "--base-url", base, "-t", str(path), "-o", str(tmp_path / "run"))
    assert done.returncode == 2
    lines = [x for x in done.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and "metric 'bertscore_f1' averages per-item value 'bertscore_f1', which scorer 'text' does not write" in lines[0]


def test_unknown_text_metric_is_still_one_line(stub_server, tmp_path):
    base = stub_server("--answer", "x")
    path = _text_task(tmp_path / "user", ["rouge_raw_1", "rouge_lsum"])
    done = _glotbench("run", "-m", "openai:stub", "--base-url", base, "-t", str(path), "-o", str(tmp_path / "run"))
    assert done.returncode == 2
    lines = [x for x in done.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and "rouge_lsum" in lines[0], done.stderr


def test_text_bertscore_without_an_encoder_stops_before_any_request(stub_server, tmp_path, monkeypatch):
    monkeypatch.delenv("GLOTBENCH_BERTSCORE_MODEL", raising=False)
    base = stub_server("--answer", "x")
    path = _text_task(tmp_path / "user", ["rouge_raw_1", "bertscore_f1"], scorer="text_bertscore")
    done = _glotbench("run", "-m", "openai:stub", "--base-url", base, "-t", str(path), "-o", str(tmp_path / "run"))
    assert done.returncode == 2
    lines = [x for x in done.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and str(path) in lines[0] and "name a local encoder" in lines[0], done.stderr
    import httpx

    assert httpx.get(base.replace("/v1", "/_log")).json()["log"] == []


def test_run_with_text_bertscore_and_a_local_encoder_equals_bert_score(stub_server, tmp_path, tiny_encoder, monkeypatch):
    import bert_score

    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps({"match": f"Q{i}:", "response": src}, ensure_ascii=False) + "\n"
                               for i, _gold, src in ROWS), encoding="utf-8")
    base = stub_server("--responses", str(answers))
    path = _text_task(tmp_path / "user", ["bertscore_f1", "bertscore_precision", "bertscore_recall", "rouge_raw_1"],
                      scorer="text_bertscore")
    monkeypatch.setenv("GLOTBENCH_BERTSCORE_MODEL", str(tiny_encoder))  # the encoder named by the environment
    done = _glotbench("run", "-m", "openai:stub", "--base-url", base, "-t", str(path), "-o", str(tmp_path / "run"),
                      "--no-progress")
    assert done.returncode == 0, done.stderr
    t = json.loads((tmp_path / "run" / "results.json").read_text(encoding="utf-8"))["tasks"]["my.summaries"]
    p, r, f = bert_score.score([src for *_, src in ROWS], [gold for _, gold, _ in ROWS], model_type=str(tiny_encoder),
                               num_layers=2)  # the tiny encoder's last layer, glotbench's default for an unknown model
    for name, want in (("bertscore_f1", f), ("bertscore_precision", p), ("bertscore_recall", r)):
        assert t["metrics"][name]["value"] == pytest.approx(float(want.mean()), abs=1e-5), name
    assert run_value_mismatches(tmp_path / "run") == []
    # the encoder the run used, with bert-score's own settings string
    assert t["bertscore"] == {"encoder": str(tiny_encoder), "path": str(tiny_encoder), "num_layers": 2,
                              "signature": f"{tiny_encoder}_L2_no-idf_version={bert_score.__version__}"
                                           f"(hug_trans={__import__('transformers').__version__})"}


def test_docs_claims_on_rouge_tokens_and_nfd_rouge_raw():
    """docs/text-metrics.md: English ROUGE equals rouge-score's defaults on ASCII only (the listed
    non-ASCII words differ as stated); ROUGE_RAW of an NFD text against its NFC form is near zero
    (F 0.14 on the sentence in the doc), 1.0 once both are NFC."""
    import unicodedata

    tokenizers = pytest.importorskip("rouge_score.tokenizers")
    from glotbench.scoring import rouge_raw
    from glotbench.scoring.text_metrics import UnicodeTokenizer

    default, ours = tokenizers.DefaultTokenizer(use_stemmer=False), UnicodeTokenizer()
    ascii_text = "The cat's 3 hats -- don't stop, (quoted) text_here!"
    assert ours.tokenize(ascii_text) == default.tokenize(ascii_text)
    assert default.tokenize("naïve café in Zürich") == ["na", "ve", "caf", "in", "z", "rich"]
    assert ours.tokenize("naïve café in Zürich") == ["naïve", "café", "in", "zürich"]
    assert default.tokenize("x²") == ["x"] and ours.tokenize("x²") == ["x²"]
    curly = "don’t stop — “quoted” text…"
    assert ours.tokenize(curly) == default.tokenize(curly)
    gold = "Žluťoučký kůň úpěl ďábelské ódy a pes štěkal na louce."
    nfd = unicodedata.normalize("NFD", gold)
    assert rouge_raw.tokens(nfd)[:4] == ["z", "\u030c", "lut", "\u030c"]
    f = rouge_raw.document(gold, nfd)["1"][2]
    assert round(f, 2) == 0.14
    assert rouge_raw.document(gold, unicodedata.normalize("NFC", nfd))["1"][2] == 1.0
