"""Calibration of ``--mode loglikelihood`` option probabilities (glotbench.scoring.ll_calibration):
ECE, multi-class Brier and one-vs-rest AUROC, checked against scikit-learn / plain numpy on the
probabilities read back from a finished run's samples.jsonl (the softmax of the options'
journaled log-likelihoods), for runs against the stub server's echo log-probabilities and (slow)
the embedded model."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from value_oracles import ll_items, plain_ece_top_option, same, sk_auroc_class, sk_auroc_macro, sk_brier_multiclass

SRC = str(Path(__file__).resolve().parents[1] / "src")


def cli(*args: str, cwd) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "250", "PYTHONPATH": SRC}
    return subprocess.run([sys.executable, "-m", "glotbench", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)


@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(ll_items())
def test_per_class_auroc_equals_sklearn_roc_auc_score(items):
    from glotbench.scoring.ll_calibration import class_metric, classes

    for c in classes(items):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert same(class_metric(c)(items), sk_auroc_class(items, c)), c


def test_score_loglikelihood_stores_the_softmax_of_the_options():
    from glotbench.models.base import LoglikelihoodResult
    from glotbench.tasks.task import Sample, score_loglikelihood

    lps = [-1.0, -2.5, -0.3]
    s = Sample(task="t", id="0", index=0, vars={}, target="B", choices=["x", "y", "z"], labels=["A", "B", "C"])
    scored = score_loglikelihood(s, [LoglikelihoodResult(lp, False, 1) for lp in lps], ["A", "B", "C"])
    e = np.exp(lps)
    want = e / e.sum()
    assert [scored.values[f"ll_p:{x}"] for x in "ABC"] == pytest.approx(list(want), abs=1e-12)


# ------------------------------------------------------------------ finished runs, recomputed


def _softmax(lps):
    a = np.asarray(lps, dtype=float)
    e = np.exp(a - a.max())
    return e / e.sum()


def check_run_against_sklearn(run_dir: Path, task: str, labels: list[str]) -> dict:
    """results.json's ll_ece / ll_brier / ll_auroc_macro and per-class AUROC against scikit-learn and
    plain numpy on the softmax of each record's journaled option log-likelihoods."""
    from sklearn.metrics import brier_score_loss, roc_auc_score

    res = json.loads((run_dir / "results.json").read_text(encoding="utf-8"))
    t = res["tasks"][task]
    recs = [json.loads(x) for x in (run_dir / "samples.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]
    recs = [r for r in recs if r["task"] == task and r["status"] == "scored"]
    assert recs
    probs = np.array([_softmax([o["logprob"] for o in r["outputs"]]) for r in recs])
    golds = [str(r["gold"]) for r in recs]
    y = np.array([[g == c for c in labels] for g in golds], dtype=float)
    hit = (probs.argmax(axis=1) == y.argmax(axis=1)).astype(float)
    conf = probs.max(axis=1)
    # ECE, 10 equal-width bins [b/10, (b+1)/10), 1.0 in the last
    ece = 0.0
    for b in range(10):
        m = (conf >= b / 10) & ((conf < (b + 1) / 10) | ((b == 9) & (conf == 1.0)))
        if m.any():
            ece += m.sum() / len(conf) * abs(hit[m].mean() - conf[m].mean())
    brier = brier_score_loss(golds, probs, labels=labels, scale_by_half=False)
    assert brier == pytest.approx(float(np.mean(((probs - y) ** 2).sum(axis=1))), abs=1e-12)  # the definition, plainly
    per = {}
    for k, c in enumerate(labels):
        if 0 < y[:, k].sum() < len(y):
            per[c] = float(roc_auc_score(y[:, k], probs[:, k]))
    macro = float(np.mean(list(per.values())))
    got = {m: t["metrics"][m]["value"] for m in ("ll_ece", "ll_brier", "ll_auroc_macro")}
    assert got["ll_ece"] == pytest.approx(ece, abs=2e-6)
    assert got["ll_brier"] == pytest.approx(brier, abs=2e-6)
    assert got["ll_auroc_macro"] == pytest.approx(macro, abs=2e-6)
    cal = t["ll_calibration"]
    assert {c: v["value"] for c, v in cal["auroc_per_class"].items() if v["value"] is not None} == pytest.approx(per, abs=2e-6)
    assert sum(r["count"] for r in cal["table"]) == len(recs) and cal["n_bins"] == 10
    assert accuracy_equals(t, hit)
    return {"ece": ece, "brier": brier, "auroc": per, "macro": macro, "t": t, "results": res}


def accuracy_equals(t: dict, hit: np.ndarray) -> bool:
    return math.isclose(t["metrics"]["accuracy"]["value"], float(hit.mean()), abs_tol=1e-6)


def _stub_ll_run(tmp_path: Path, task: str, n: int) -> subprocess.CompletedProcess:
    from glotbench.testing.servers import start_stub, stop

    base, proc = start_stub("--answer", "A")  # echoes per-character log-probabilities (stub_openai.echo_logprobs)
    try:
        return cli("run", "-m", "openai:stub", "--base-url", base, "-M", "logprobs_trusted=true", "--mode", "loglikelihood",
                   "-t", task, "-n", str(n), "-o", "run", "--no-progress", "--bootstrap", "50", "--max-retries", "0",
                   cwd=tmp_path)
    finally:
        stop(proc)


def test_stub_loglikelihood_run_of_mm_eval_knowledge_prints_ece_and_auroc(data_root, tmp_path):
    r = _stub_ll_run(tmp_path, "mm_eval.knowledge", 30)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "ll_ece" in out and "ll_auroc_macro" in out and "ll_brier" in out
    assert "mm_eval.knowledge: calibration of option probabilities" in out and "ECE " in out and "AUROC macro" in out
    got = check_run_against_sklearn(tmp_path / "run", "mm_eval.knowledge", list("ABCD"))
    # the echo stub gives every item the same option log-probabilities (the labels follow one
    # context suffix): each label's probability is constant, so each one-vs-rest AUROC is 1/2
    assert got["macro"] == pytest.approx(0.5)
    defs = got["t"]["metric_definitions"]
    assert defs["ll_ece"]["role"] == "secondary" and defs["ll_ece"]["direction"] == "lower"
    assert got["t"]["headline"] == "accuracy"


FIXTURE = [
    {"q": "Which is a fruit?", "options": ["apple", "stone", "cloud"], "gold": "A"},
    {"q": "Which is a colour?", "options": ["tree", "blue", "rock"], "gold": "B"},
    {"q": "Which is a number?", "options": ["seven", "sky", "pen"], "gold": "A"},
    {"q": "Which is an animal?", "options": ["iron", "glass", "zebra"], "gold": "C"},
    {"q": "Which flies?", "options": ["bird", "table", "lamp"], "gold": "A"},
    {"q": "Which is cold?", "options": ["fire", "ice", "sun"], "gold": "B"},
    {"q": "Which is a tool?", "options": ["milk", "song", "hammer"], "gold": "C"},
    {"q": "Which is a drink?", "options": ["tea", "wall", "shoe"], "gold": "A"},
]


def write_text_option_task(tmp_path: Path) -> Path:
    """A multiple-choice task whose options are scored by their texts (``ll_continuation: text``),
    so the stub's per-character log-probabilities differ from item to item."""
    data = tmp_path / "mc.json"
    data.write_text(json.dumps([{"question": x["q"], "choices": [{"label": "ABC"[k], "text": t} for k, t in enumerate(x["options"])],
                                 "answerKey": x["gold"]} for x in FIXTURE]), encoding="utf-8")
    yaml = tmp_path / "mc_text.yaml"
    yaml.write_text(f"""name: test.mc_text
version: "1"
language: en
dataset:
  format: json
  splits:
    test: {data}
fields:
  question: question
  choices: "choices[*].text"
  labels: "choices[*].label"
  target: answerKey
output_type: multiple_choice
prompt:
  user: "{{{{ question }}}}"
  answer_cue: "Answer:"
  ll_continuation: text
""", encoding="utf-8")
    return yaml


def test_stub_loglikelihood_run_with_text_options_matches_sklearn(tmp_path):
    task_file = write_text_option_task(tmp_path)
    r = _stub_ll_run(tmp_path, str(task_file), len(FIXTURE))
    assert r.returncode == 0, r.stderr
    got = check_run_against_sklearn(tmp_path / "run", "test.mc_text", list("ABC"))
    assert got["macro"] != pytest.approx(0.5)  # varying probabilities: a non-trivial AUROC
    assert (tmp_path / "run" / got["t"]["ll_calibration"]["plot"]).is_file() or "plot_note" in got["t"]["ll_calibration"]


@pytest.mark.slow
def test_embedded_loglikelihood_run_of_mm_eval_knowledge_matches_sklearn(data_root, smollm2_path, tmp_path):
    r = cli("run", "--model", "embedded", "--mode", "loglikelihood", "--tasks", "mm_eval.knowledge", "--limit", "20",
            "-o", "run", "--no-progress", "--bootstrap", "50", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "ECE " in r.stdout and "AUROC macro" in r.stdout
    check_run_against_sklearn(tmp_path / "run", "mm_eval.knowledge", list("ABCD"))


def test_oracles_agree_with_the_metric_functions_on_one_fixed_case():
    """A hand case: two items, the plain definitions by hand."""
    from glotbench.scoring.ll_calibration import ll_auroc_macro, ll_brier, ll_ece
    from glotbench.scoring.metrics import ScoredItem

    items = [ScoredItem(gold="A", pred="A", values={"correct": 1.0, "ll_p:A": 0.7, "ll_p:B": 0.3}),
             ScoredItem(gold="B", pred="A", values={"correct": 0.0, "ll_p:A": 0.6, "ll_p:B": 0.4})]
    # bins: 0.7 -> [0.7, 0.8) acc 1; 0.6 -> [0.6, 0.7) acc 0: ECE = .5 * .3 + .5 * .6
    assert ll_ece(items) == pytest.approx(0.45) == pytest.approx(plain_ece_top_option(items))
    # Brier: (0.3^2 + 0.3^2) and (0.6^2 + 0.6^2), mean
    assert ll_brier(items) == pytest.approx((0.18 + 0.72) / 2) == pytest.approx(sk_brier_multiclass(items))
    # AUROC for A: positive item scores 0.7 > negative 0.6 -> 1; for B: 0.4 > 0.3 -> 1
    assert ll_auroc_macro(items) == pytest.approx(1.0) == pytest.approx(sk_auroc_macro(items))
