"""``glotbench analyze signal`` on the committed fixture runs (tests/make_signal_runs.py: 4 checkpoints
x 2 seeds, mm_eval.syntax rising with the step, hulu.cola noise), in a fresh subprocess; every number
equals an independent re-statement from the runs' files (tests/value_oracles.py: scipy's spearmanr and
kendalltau, a plain sample std, sklearn/plain-loop metric oracles on the item halves)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from glotbench.report.analysis.signal import RunPoint, task_signal
from value_oracles import (METRIC_ORACLES, items_from_samples, plain_majority_share, plain_sample_std, scipy_kendall,
                           scipy_spearman)

RUNS = Path(__file__).resolve().parent / "fixtures" / "signal_runs"


def glotbench(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "glotbench", *args], capture_output=True, text=True, timeout=300)


def oracle(task: str, chance: float | None) -> dict:
    """The signal of ``task`` restated from the fixture files alone."""
    by_step: dict[int, list[float]] = {}
    halves: dict[int, list[tuple[float, float]]] = {}
    samples = {}
    for run in sorted(RUNS.iterdir()):
        recs = [json.loads(x) for x in (run / "samples.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]
        samples[run.name] = [r for r in recs if r["task"] == task and r["status"] == "scored"]
    common = [r["sample_id"] for r in samples[sorted(samples)[0]]]
    for name in samples:
        common = [x for x in common if x in {r["sample_id"] for r in samples[name]}]
    metric = None
    for run in sorted(RUNS.iterdir()):
        res = json.loads((run / "results.json").read_text(encoding="utf-8"))["tasks"][task]
        metric = res["headline"]
        step = int(run.name.split("step")[1].split("-")[0])
        by_step.setdefault(step, []).append(res["metrics"][metric]["value"])
        by_id = {r["sample_id"]: r for r in samples[run.name]}
        fn = METRIC_ORACLES[metric].compute
        halves.setdefault(step, []).append(tuple(fn(items_from_samples([by_id[x] for x in common[h::2]])) for h in (0, 1)))
    steps = sorted(by_step)
    means = [sum(by_step[s]) / len(by_step[s]) for s in steps]
    noise = sum(plain_sample_std(by_step[s]) for s in steps) / len(steps)
    final = means[-1]
    first = [sum(h[0] for h in halves[s]) / len(halves[s]) for s in steps]
    second = [sum(h[1] for h in halves[s]) / len(halves[s]) for s in steps]
    return {"metric": metric, "monotonicity": scipy_spearman(steps, means), "noise": noise, "final_score": final,
            "distance_from_random": None if chance is None else (final - chance) / noise,
            "rank_consistency": scipy_kendall(first, second), "chance": chance}


def test_analyze_signal_on_the_committed_runs_equals_the_oracle(tmp_path):
    out = tmp_path / "signal.json"
    done = glotbench("analyze", "signal", *map(str, sorted(RUNS.iterdir())), "--chance", "hulu.cola=0", "--json", str(out))
    assert done.returncode == 0, done.stderr[-2000:]
    assert "good signal" in done.stdout and "weak signal" in done.stdout
    got = {t["task"]: t for t in json.loads(out.read_text(encoding="utf-8"))["tasks"]}
    assert set(got) == {"mm_eval.syntax", "hulu.cola"}
    # the chance level of mm_eval.syntax: option letters up to D (1/4); the majority share is another number
    golds = [json.loads(x)["gold"] for x in (RUNS / "ckpt-step1000-seed1" / "samples.jsonl").read_text().splitlines()
             if json.loads(x)["task"] == "mm_eval.syntax"]
    assert max(golds) == "D" and plain_majority_share(golds) != 0.25
    for task, chance in (("mm_eval.syntax", 0.25), ("hulu.cola", 0.0)):
        want = oracle(task, chance)
        g = got[task]
        assert g["metric"] == want["metric"] and g["n_runs"] == 8 and g["n_invalid"] == 0
        for k in ("monotonicity", "noise", "final_score", "distance_from_random", "rank_consistency", "chance"):
            assert math.isclose(g[k], want[k], rel_tol=1e-9, abs_tol=1e-12), (task, k, g[k], want[k])
    assert got["mm_eval.syntax"]["verdict"] == "good signal"
    assert got["hulu.cola"]["verdict"].startswith("weak signal")


def test_identity_from_meta_and_the_default_chance_is_unchecked_for_mcc(tmp_path):
    runs = sorted(RUNS.iterdir())[:4]  # steps 1000 and 2000 only, 2 seeds each
    # --meta renames the steps: rho needs 3 steps, so monotonicity is unchecked with two
    meta = [f"{r.name}=step={100 * (i // 2 + 1)},seed={i % 2}" for i, r in enumerate(runs)]
    meta[0] = f"{runs[0]}=step=100,seed=0"  # RUN as given (a path) works as well as the folder name
    out = tmp_path / "s.json"
    args = ["analyze", "signal", *map(str, runs), "--json", str(out)]
    for m in meta:
        args += ["--meta", m]
    done = glotbench(*args)
    assert done.returncode == 0, done.stderr[-2000:]
    js = json.loads(out.read_text(encoding="utf-8"))
    assert sorted({r["step"] for r in js["runs"]}) == [100.0, 200.0]
    tasks = {t["task"]: t for t in js["tasks"]}
    assert tasks["mm_eval.syntax"]["monotonicity"] is None and "monotonicity" in tasks["mm_eval.syntax"]["unchecked"]
    assert tasks["hulu.cola"]["chance"] is None and "distance_from_random" in tasks["hulu.cola"]["unchecked"]


def test_bad_meta_is_one_line():
    run = sorted(RUNS.iterdir())[0]
    done = glotbench("analyze", "signal", str(run), "--meta", f"{run.name}=speed=3")
    assert done.returncode != 0
    assert f"--meta '{run.name}=speed=3'" in done.stderr and "Traceback" not in done.stderr
    done = glotbench("analyze", "signal", str(run), "--meta", "elsewhere=step=3")
    assert done.returncode != 0
    assert "--meta elsewhere=...: no run directory" in done.stderr and "Traceback" not in done.stderr
    for option, rx, says in (("--step-from", "ckpt(", "not a regular expression"), ("--model-from", "ckpt", "needs a group")):
        done = glotbench("analyze", "signal", str(run), option, rx)
        assert done.returncode != 0 and f"{option} '{rx}': {says}" in done.stderr and "Traceback" not in done.stderr, done.stderr


def test_plot_draws_score_against_step(tmp_path):
    pytest.importorskip("matplotlib", reason="the plots extra is not installed")
    png = tmp_path / "signal.png"
    done = glotbench("analyze", "signal", *map(str, sorted(RUNS.iterdir())), "--plot", str(png))
    assert done.returncode == 0, done.stderr[-2000:]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_an_invalid_score_is_left_out_and_counted():
    pts = [RunPoint("m", s, str(seed), 0.1 * s + 0.01 * seed, (0.1 * s, 0.1 * s + 0.02)) for s in (1, 2, 3) for seed in (1, 2)]
    bad = RunPoint("m", 3, "3", None)
    with_bad, without = task_signal("t", "accuracy", pts + [bad], 0.0), task_signal("t", "accuracy", pts, 0.0)
    assert with_bad.n_invalid == 1 and with_bad.n_runs == 7
    for k in ("monotonicity", "noise", "final_score", "distance_from_random", "rank_consistency"):
        assert getattr(with_bad, k) == getattr(without, k)
    assert math.isclose(without.monotonicity, scipy_spearman([1, 2, 3], [0.115, 0.215, 0.315]))
    assert math.isclose(without.noise, plain_sample_std([0.11, 0.12]))


def test_step_and_model_from_regular_expressions(tmp_path):
    runs = sorted(RUNS.iterdir())
    out = tmp_path / "s.json"
    done = glotbench("analyze", "signal", *map(str, runs), "--step-from", r"step(\d)", "--model-from", r"(seed\d)",
                     "--json", str(out))
    assert done.returncode == 0, done.stderr[-2000:]
    rows = json.loads(out.read_text(encoding="utf-8"))["runs"]
    assert {(r["model"], r["step"]) for r in rows} == {(f"seed{s}", float(k)) for s in (1, 2) for k in (1, 2, 3, 4)}
    tasks = {t["task"]: t for t in json.loads(out.read_text(encoding="utf-8"))["tasks"]}
    # one seed per (model, step) now: no noise, so the distance is unchecked; rho per model, averaged
    assert tasks["mm_eval.syntax"]["noise"] is None and "distance_from_random" in tasks["mm_eval.syntax"]["unchecked"]
    scores = {(r["model"], r["step"]): r["score"] for r in rows if r["task"] == "mm_eval.syntax"}
    want = sum(scipy_spearman([1, 2, 3, 4], [scores[(m, k)] for k in (1.0, 2.0, 3.0, 4.0)]) for m in ("seed1", "seed2")) / 2
    assert math.isclose(tasks["mm_eval.syntax"]["monotonicity"], want)
