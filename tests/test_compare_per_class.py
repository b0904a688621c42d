"""`runs compare --paired` of two runs of a label task: three rows per gold class, the precision, recall and
F1 of the class on each side (scikit-learn's precision_recall_fscore_support, zero_division=0) and A - B
with a paired bootstrap interval whose every resample is scored as scikit-learn scores it (the same draws,
an sklearn metric)."""

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


STATS = ("precision", "recall", "f1")  # precision_recall_fscore_support's order


def test_per_class_rows_equal_sklearn(runs):
    from sklearn.metrics import precision_recall_fscore_support

    out = runs / "cmp.json"
    p = subprocess.run([sys.executable, "-m", "glotbench", "runs", "compare", "--paired", str(runs / "ra"), str(runs / "rb"),
                        "--set", "n_boot=300", "--json", str(out)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    rows = {r["metric"]: r for r in json.loads(out.read_text(encoding="utf-8"))["paired"]}
    classes = sorted(set(GOLDS))
    assert [m for m in rows if "[" in m] == [f"{stat}[{c}]" for c in classes for stat in STATS]
    golds = list(GOLDS)
    pa, pb = _preds(runs / "ra"), _preds(runs / "rb")
    assert pa.count(None) == 1 and pb.count(None) == 1  # the unparseable answers: a miss for their gold class
    k = len(golds)

    def sk_stat(gold, pred, c, j):
        pred = ["<none>" if x is None else x for x in pred]
        return precision_recall_fscore_support(gold, pred, labels=[c], zero_division=0)[j][0]

    for c in classes:
        for j, stat in enumerate(STATS):
            row = rows[f"{stat}[{c}]"]
            assert row["n_items"] == k and row["n_left_out"] == 0
            assert row["score_a"] == pytest.approx(sk_stat(golds, pa, c, j)), (stat, c)
            assert row["score_b"] == pytest.approx(sk_stat(golds, pb, c, j)), (stat, c)
            assert row["difference"] == pytest.approx(row["score_a"] - row["score_b"])
            both_g, both_p = golds + golds, pa + pb

            def sk(idx, _c=c, _j=j):  # each resample scored by scikit-learn
                idx = [int(i) for i in idx]
                return sk_stat([both_g[i] for i in idx], [both_p[i] for i in idx], _c, _j)

            want = paired_bootstrap(np.arange(k), np.arange(k) + k, metric_fn=sk, n=300, seed=0)
            assert [row["low"], row["high"]] == pytest.approx([want.low, want.high]), (stat, c)
    for stat in STATS:
        assert any(rows[f"{stat}[{c}]"]["difference"] != 0 for c in classes), stat
