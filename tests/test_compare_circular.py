"""`runs compare --paired` and `--duels` over two `--circular` runs: every metric is compared on the
items the run computed it over. The plain metrics on the dataset's order (rotation 0: n is the
dataset's size, not items x rotations), `circular_accuracy` on one value per item read from all its
rotations (it had no per-item value, and was left out). Checked by value against plain loops over
the runs' samples.jsonl (tests/value_oracles.py: plain_circular_accuracy, the McNemar counts)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from glotbench.report.analysis.paired import paired_bootstrap
from mc_task import mc_task_yaml
from value_oracles import plain_circular_accuracy

N = 24
SET_A = {i for i in range(N) if i % 2 == 0}  # items model A answers right in every rotation
SET_B = {i for i in range(N) if i % 3 == 0}  # ... and model B


def _canned(path, items: set[int]):
    """The gold option's text is KEY<i>!: the model answers its letter, wherever a rotation put it."""
    path.write_text("".join(json.dumps({"match": f"{letter}. KEY{i}!", "response": letter}) + "\n"
                            for i in sorted(items) for letter in "ABCD"), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    from glotbench.testing.servers import start_stub, stop

    tmp = tmp_path_factory.mktemp("compare_circular")
    data = tmp / "items.jsonl"
    rows = []
    for i in range(N):
        opts = [f"w{i}a", f"w{i}b", f"w{i}c"]
        g = i % 4
        opts.insert(g, f"KEY{i}!")
        rows.append({"id": f"q{i}", "q": f"Question {i}?", "opts": opts, "gold": "ABCD"[g]})
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    task = tmp / "cmp.yaml"
    task.write_text(mc_task_yaml("cmp.mc", data), encoding="utf-8")
    env = {**os.environ, "OPENAI_API_KEY": "stub"}
    procs = []
    try:
        for name, items in (("ra", SET_A), ("rb", SET_B)):
            base, proc = start_stub("--answer", "A", "--responses", str(_canned(tmp / f"{name}.jsonl", items)))
            procs.append(proc)
            p = subprocess.run([sys.executable, "-m", "glotbench", "run", "-t", str(task), "-m", f"openai:{name}",
                                "--base-url", base, "--set", "circular=true", "--no-progress", "-o", str(tmp / name)],
                               capture_output=True, text=True, env=env, timeout=300)
            assert p.returncode == 0, p.stderr[-2000:]
    finally:
        for proc in procs:
            stop(proc)
    return tmp


def _samples(run):
    return [json.loads(line) for line in (run / "samples.jsonl").read_text(encoding="utf-8").splitlines()]


def _compare(tmp, *args):
    out = tmp / f"cmp-{len(list(tmp.glob('cmp-*.json')))}.json"
    p = subprocess.run([sys.executable, "-m", "glotbench", "runs", "compare", str(tmp / "ra"), str(tmp / "rb"), *args,
                        "--json", str(out)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    return json.loads(out.read_text(encoding="utf-8"))


def _plain_vectors(sa, sb):
    """Per item of A's order (rotation 0 / every rotation right), with plain loops."""
    def per_item(samples):
        plain, every = {}, {}
        for s in samples:
            md = s["metadata"]
            right = str(s["gold"]) == str(s["pred"])
            if md["rotation"] == 0:
                plain[md["circular_of"]] = float(right)
            every[md["circular_of"]] = every.get(md["circular_of"], True) and right
        return plain, {k: float(v) for k, v in every.items()}
    (pa, ea), (pb, eb) = per_item(sa), per_item(sb)
    items = [k for k in pa if k in pb]
    return ([pa[k] for k in items], [pb[k] for k in items]), ([ea[k] for k in items], [eb[k] for k in items])


def test_paired_compares_each_metric_on_the_items_it_is_computed_over(runs):
    sa, sb = _samples(runs / "ra"), _samples(runs / "rb")
    (plain_a, plain_b), (every_a, every_b) = _plain_vectors(sa, sb)
    acc_a, circ_a, n_a = plain_circular_accuracy(sa)
    acc_b, circ_b, n_b = plain_circular_accuracy(sb)
    assert n_a == n_b == N and circ_a == len(SET_A) / N and circ_b == len(SET_B) / N
    res = _compare(runs, "--paired")
    rows = {r["metric"]: r for r in res["paired"]}
    assert {"accuracy", "circular_accuracy"} <= set(rows), res["notes"]
    assert set(rows) - {"accuracy", "circular_accuracy"} == {f"{s}[{c}]" for c in "ABCD" for s in ("precision", "recall", "f1")}
    assert all(r["n_items"] == N for r in rows.values())  # every metric on the items, per-class F1 too
    for metric, (va, vb), (want_a, want_b) in (("accuracy", (plain_a, plain_b), (acc_a, acc_b)),
                                              ("circular_accuracy", (every_a, every_b), (circ_a, circ_b))):
        row = rows[metric]
        assert row["n_items"] == N and row["n_left_out"] == 0, metric  # items, not items x rotations
        assert row["score_a"] == pytest.approx(want_a) and row["score_b"] == pytest.approx(want_b), metric
        b = sum(1 for x, y in zip(va, vb) if x == 1.0 and y == 0.0)
        c = sum(1 for x, y in zip(va, vb) if x == 0.0 and y == 1.0)
        assert (row["mcnemar_b"], row["mcnemar_c"]) == (b, c), metric
        boot = paired_bootstrap(va, vb, metric_fn=np.nanmean, n=10_000, seed=0)
        assert [row["low"], row["high"]] == pytest.approx([boot.low, boot.high]), metric
    results_a = json.loads((runs / "ra" / "results.json").read_text())["tasks"]["cmp.mc"]["metrics"]
    assert rows["circular_accuracy"]["score_a"] == pytest.approx(results_a["circular_accuracy"]["value"], abs=1e-6)
    assert rows["accuracy"]["score_a"] == pytest.approx(results_a["accuracy"]["value"], abs=1e-6)


def test_duels_on_circular_accuracy_count_items(runs):
    res = _compare(runs, "--duels", "--metric", "circular_accuracy")
    duels = res.get("duels") or []
    assert len(duels) == 1, res
    d = duels[0]
    assert d["n_items"] == N
    assert sorted([d["score_a"], d["score_b"]]) == pytest.approx(sorted([len(SET_A) / N, len(SET_B) / N]))


def test_an_item_with_a_rotation_in_error_is_left_out_of_circular_accuracy(runs):
    """B with one rotation an error (its samples.jsonl line edited): that item has no CircularEval value in
    B, so --paired and --duels compare circular_accuracy on the other N - 1 items (and count it left out)."""
    import shutil

    broken = runs / "rb_err"
    if not broken.exists():
        shutil.copytree(runs / "rb", broken)
        lines = (broken / "samples.jsonl").read_text(encoding="utf-8").splitlines()
        rec = json.loads(lines[1])
        assert rec["metadata"]["rotation"] == 1 and rec["metadata"]["circular_of"] == "q0"
        rec.update(status="error", pred=None, error="stub: boom")
        lines[1] = json.dumps(rec, ensure_ascii=False)
        (broken / "samples.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = runs / "cmp-err.json"
    for args in (["--paired"], ["--duels", "--metric", "circular_accuracy"]):
        p = subprocess.run([sys.executable, "-m", "glotbench", "runs", "compare", str(runs / "ra"), str(broken), *args,
                            "--json", str(out)], capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr[-2000:]
        res = json.loads(out.read_text(encoding="utf-8"))
        if args[0] == "--paired":
            row = {r["metric"]: r for r in res["paired"]}["circular_accuracy"]
            assert (row["n_items"], row["n_left_out"]) == (N - 1, 1)
        else:
            assert [d["n_items"] for d in res["duels"]] == [N - 1]
