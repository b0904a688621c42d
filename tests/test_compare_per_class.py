"""`runs compare --paired` of two runs of a label task: a row per gold class, F1 of the class on each side
(scikit-learn's precision_recall_fscore_support, zero_division=0) and A - B with a paired bootstrap
interval whose every resample is scored as scikit-learn scores it (the same draws, an sklearn metric)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from glotbench.report.analysis.paired import paired_bootstrap
from mc_task import mc_task_yaml

GOLDS = "AABBBCCCCDABDDCA"
ANSWERS = {"ra": "AABCBCCXCDABDACA", "rb": "ABBBBCAACDXBDDBA"}  # X: unparseable ("hmm")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    from glotbench.testing.servers import start_stub, stop

    tmp = tmp_path_factory.mktemp("compare_per_class")
    data = tmp / "items.jsonl"
    data.write_text("".join(json.dumps({"id": f"i{k}", "q": f"q{k:02d}", "opts": ["w", "x", "y", "z"], "gold": g}) + "\n"
                            for k, g in enumerate(GOLDS)), encoding="utf-8")
    (tmp / "cls.yaml").write_text(mc_task_yaml("demo.cls", data, metrics=("accuracy", "macro_f1")), encoding="utf-8")
    env = {**os.environ, "OPENAI_API_KEY": "stub"}
    for name, answers in ANSWERS.items():
        canned = tmp / f"{name}.jsonl"
        canned.write_text("".join(json.dumps({"match": f"q{k:02d}\n", "response": "hmm" if a == "X" else a}) + "\n"
                                  for k, a in enumerate(answers)), encoding="utf-8")
        base, proc = start_stub("--responses", str(canned))
        try:
            p = subprocess.run([sys.executable, "-m", "glotbench", "run", "-m", f"openai:{name}", "--base-url", base,
                                "-t", str(tmp / "cls.yaml"), "-o", str(tmp / name), "--no-progress"],
                               env=env, capture_output=True, text=True, timeout=300)
            assert p.returncode == 0, p.stderr[-2000:]
        finally:
            stop(proc)
    return tmp


def _preds(run):
    return [json.loads(x)["pred"] for x in (run / "samples.jsonl").read_text(encoding="utf-8").splitlines()]


def test_per_class_f1_rows_equal_sklearn(runs):
    from sklearn.metrics import precision_recall_fscore_support

    out = runs / "cmp.json"
    p = subprocess.run([sys.executable, "-m", "glotbench", "runs", "compare", "--paired", str(runs / "ra"), str(runs / "rb"),
                        "--set", "n_boot=300", "--json", str(out)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    rows = {r["metric"]: r for r in json.loads(out.read_text(encoding="utf-8"))["paired"]}
    classes = sorted(set(GOLDS))
    assert [m for m in rows if m.startswith("f1[")] == [f"f1[{c}]" for c in classes]
    golds = list(GOLDS)
    pa, pb = _preds(runs / "ra"), _preds(runs / "rb")
    assert pa.count(None) == 1 and pb.count(None) == 1  # the unparseable answers: a miss for their gold class
    k = len(golds)

    def sk_f1(gold, pred, c):
        pred = ["<none>" if x is None else x for x in pred]
        return precision_recall_fscore_support(gold, pred, labels=[c], zero_division=0)[2][0]

    for c in classes:
        row = rows[f"f1[{c}]"]
        assert row["n_items"] == k and row["n_left_out"] == 0
        assert row["score_a"] == pytest.approx(sk_f1(golds, pa, c)) and row["score_b"] == pytest.approx(sk_f1(golds, pb, c))
        assert row["difference"] == pytest.approx(row["score_a"] - row["score_b"])
        both_g, both_p = golds + golds, pa + pb

        def sk(idx, _c=c):  # each resample scored by scikit-learn
            idx = [int(j) for j in idx]
            return sk_f1([both_g[j] for j in idx], [both_p[j] for j in idx], _c)

        want = paired_bootstrap(np.arange(k), np.arange(k) + k, metric_fn=sk, n=300, seed=0)
        assert [row["low"], row["high"]] == pytest.approx([want.low, want.high]), c
    assert any(rows[f"f1[{c}]"]["difference"] != 0 for c in classes)
