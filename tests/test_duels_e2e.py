"""``compare --duels`` end to end: three recorded-answer runs on real data (hulu.cola, whose headline
MCC is a corpus metric, and mm_eval.syntax, 0/1 accuracy), one with an invalid hulu.cola score; the
duel table of a fresh subprocess equals the oracle recomputed from the runs' samples.jsonl with
statsmodels (McNemar exact, Holm), a plain bootstrap loop over sklearn's MCC and a plain count of
duels won (tests/value_oracles.py)."""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys
from pathlib import Path

import pytest

from glotbench.paths import find_data_root
from value_oracles import (METRIC_ORACLES, duel_pair_seed, items_from_samples, plain_bootstrap_p, plain_duel_shares,
                           statsmodels_holm, statsmodels_mcnemar_exact)

pytestmark = pytest.mark.slow
ROOT = find_data_root()
NEEDS_DATA = pytest.mark.skipif(ROOT is None or not (ROOT / "mm_eval").exists() or not (ROOT / "hulu").exists(),
                                reason="benchmark data not found: put the shared data folder at ../shared/data")
TASKS = ("hulu.cola", "mm_eval.syntax")
LIMIT = 40


def glotbench(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "glotbench", *args], capture_output=True, text=True, timeout=600)


def write_answers(path: Path, accuracy: float, seed: int, garbage: tuple[str, ...] = ()) -> None:
    """Each item answered right with probability ``accuracy`` (a seeded draw), else a wrong option letter;
    every item of a task in ``garbage`` answered with no option at all (unparseable: an invalid score)."""
    from glotbench.tasks.request_settings import RequestSettings
    from glotbench.tasks.registry import resolve

    rng = random.Random(seed)
    rows = []
    for task in resolve(list(TASKS)):
        for s in task.run_samples(RequestSettings(limit=LIMIT, seed=1)):
            letters = ["A", "B"] if task.name == "hulu.cola" else ["A", "B", "C", "D"]
            gold = {"1": "A", "0": "B"}.get(s.target, s.target) if task.name == "hulu.cola" else s.target
            ans = gold if rng.random() < accuracy else rng.choice([x for x in letters if x != gold])
            rows.append({"task": task.name, "id": s.id, "answer": "nem tudom" if task.name in garbage else ans})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def _samples(run: Path) -> list[dict]:
    return [json.loads(x) for x in (run / "samples.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]


def oracle(runs: list[Path], n: int, seed: int, alpha: float, label: dict | None = None,
           tasks: tuple[str, ...] = TASKS) -> tuple[list[dict], dict[str, float], list]:
    """The duel table restated from the runs' files alone (``label``: each run's model name; default
    its model id without the ``@...`` suffix)."""
    res = {r: json.loads((r / "results.json").read_text(encoding="utf-8")) for r in runs}
    label = label or {r: res[r]["model"]["model_id"].split("@")[0] for r in runs}
    duels, invalid = [], []
    for task in tasks:
        valid = []
        for r in runs:
            if res[r]["tasks"][task]["status"] in ("invalid", "failed"):
                invalid.append((label[r], task))
            else:
                valid.append(r)
        metric = res[runs[0]]["tasks"][task]["headline"]
        mine = []
        for i, ra in enumerate(valid):
            for rb in valid[i + 1:]:
                sa = {s["sample_id"]: s for s in _samples(ra) if s["task"] == task and s["status"] == "scored"}
                sb = {s["sample_id"]: s for s in _samples(rb) if s["task"] == task and s["status"] == "scored"}
                ids = [x for x in sa if x in sb]
                ia, ib = items_from_samples([sa[x] for x in ids]), items_from_samples([sb[x] for x in ids])
                fn = METRIC_ORACLES[metric].compute
                pseed = duel_pair_seed(seed, task, label[ra], label[rb])
                if metric == "accuracy":
                    ca = [int(x.gold == x.pred) for x in ia]
                    cb = [int(x.gold == x.pred) for x in ib]
                    p = statsmodels_mcnemar_exact(ca, cb)
                else:
                    p = plain_bootstrap_p(fn, ia, ib, min(n, 2000), pseed)
                mine.append({"task": task, "a": label[ra], "b": label[rb], "score_a": fn(ia), "score_b": fn(ib), "p": p})
        for d, adj in zip(mine, statsmodels_holm([d["p"] for d in mine])):
            d["p_holm"] = adj
        duels += mine
    return duels, plain_duel_shares(duels, alpha, {}), invalid


@NEEDS_DATA
def test_compare_duels_equals_the_oracle(tmp_path):
    runs = []
    for name, acc, seed, garbage in (("strong", 0.9, 1, ()), ("middle", 0.75, 2, ()), ("weak", 0.5, 3, ("hulu.cola",))):
        answers = tmp_path / f"{name}.jsonl"
        write_answers(answers, acc, seed, garbage)
        out = tmp_path / name
        done = glotbench("run", "--model", f"recorded:{answers}", "-M", "task=task", "--tasks", ",".join(TASKS),
                         "--limit", str(LIMIT), "--seed", "1", "--bootstrap", "50", "--no-progress", "--no-cache", "-o", str(out))
        assert done.returncode == 0, done.stderr[-2000:]
        runs.append(out)
    assert json.loads((runs[2] / "results.json").read_text())["tasks"]["hulu.cola"]["status"] == "invalid"
    js = tmp_path / "duels.json"
    done = glotbench("runs", "compare", "--duels", *map(str, runs), "--n-boot", "500", "--seed", "7", "--json", str(js))
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Duels" in done.stdout and "share of duels won" in done.stdout and "invalid" in done.stdout
    got = json.loads(js.read_text(encoding="utf-8"))
    want, shares, invalid = oracle(runs, 500, 7, 0.05)
    assert len(got["duels"]) == len(want) == 4  # hulu.cola: strong vs middle only; mm_eval.syntax: 3 pairs
    for g, w in zip(sorted(got["duels"], key=lambda d: (d["task"], d["a"], d["b"])),
                    sorted(want, key=lambda d: (d["task"], d["a"], d["b"]))):
        assert (g["task"], g["a"], g["b"]) == (w["task"], w["a"], w["b"])
        assert g["test"] == ("mcnemar-exact" if g["task"] == "mm_eval.syntax" else "bootstrap")
        for k in ("score_a", "score_b", "p_holm"):
            assert math.isclose(g[k], w[k], rel_tol=1e-9, abs_tol=1e-12), (g, w)
        assert math.isclose(g["p_value"], w["p"], rel_tol=1e-9, abs_tol=1e-12)
    models = {m["model"]: m for m in got["models"]}
    for m, share in shares.items():
        assert math.isclose(models[m]["average_share_won"], share)
    assert [(m, t) for m, mm in models.items() for t in mm["invalid_tasks"]] == invalid
    assert any(d["winner"] for d in got["duels"])  # the data separate at least the strong and the weak model
