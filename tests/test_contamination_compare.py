"""#54 per-item contamination flags in compare, in fresh processes against the stub server: ``analyze
contamination TASK --corpus FILE --run RUN`` stores the flags in the run's folder, and ``compare
--contamination RUN`` reports the score on clean and on contaminated items with intervals, equal to a
plain count over samples.jsonl and the flags file (and to the hand count of the planted answers)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mc_task import mc_task_yaml

SRC = str(Path(__file__).resolve().parents[1] / "src")
ENV = {**os.environ, "OPENAI_API_KEY": "x", "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}

WORDS = "river stone bright window garden silver morning quiet bridge yellow forest candle distant harbor".split()
N = 20
PLANTED = {1, 4, 7, 10, 13, 16}  # these items' questions are copied into the corpus


def _question(k: int) -> str:
    # 15 words, each item its own order: no 13-gram is shared between two items
    return f"item{k:02d} " + " ".join(WORDS[(k * 3 + j * 5) % len(WORDS)] + str(k) for j in range(14))


def glotbench(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "glotbench", *args], env=ENV, capture_output=True, text=True,
                          timeout=300, cwd=cwd)


def test_clean_vs_contaminated_equals_a_plain_count(stub_server, tmp_path):
    data = tmp_path / "items.jsonl"
    data.write_text("".join(json.dumps({"id": f"i{k}", "q": _question(k), "opts": ["w", "x", "y", "z"], "gold": "ABCD"[k % 4]})
                            + "\n" for k in range(N)), encoding="utf-8")
    spec = tmp_path / "contam.yaml"
    spec.write_text(mc_task_yaml("demo.contam", data), encoding="utf-8")
    # contaminated items are answered right; of the clean ones, every third
    answers = {k: "ABCD"[k % 4] if (k in PLANTED or k % 3 == 0) else "ABCD"[(k + 1) % 4] for k in range(N)}
    canned = tmp_path / "responses.jsonl"
    canned.write_text("".join(json.dumps({"match": f"item{k:02d} ", "response": a}) + "\n" for k, a in answers.items()),
                      encoding="utf-8")
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("unrelated text about nothing in particular\n" + "".join(
        f"some page {k}: {_question(k)} and more words after it\n" for k in sorted(PLANTED)), encoding="utf-8")
    base = stub_server("--responses", str(canned), "--answer", "zzz")
    run = tmp_path / "run"
    done = glotbench("run", "--model", "openai:stub", "--base-url", base, "--tasks", str(spec), "--output", str(run),
                     "--no-progress", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    # a folder that is no run is refused before the scan
    bad = glotbench("analyze", "contamination", str(spec), "--corpus", str(corpus), "--run", str(tmp_path), cwd=tmp_path)
    assert bad.returncode == 2 and "no results.json" in bad.stderr and "Traceback" not in bad.stderr, bad.stderr
    flagged = glotbench("analyze", "contamination", str(spec), "--corpus", str(corpus), "--run", str(run), cwd=tmp_path)
    assert flagged.returncode == 0, flagged.stderr[-2000:]
    flags_file = run / "contamination" / "demo.contam.jsonl"
    flags = {r["item"]: r["lm_eval_13gram"]["contaminated"] for r in map(json.loads, flags_file.read_text().splitlines())
             if "item" in r}
    assert {k for k, v in flags.items() if v} == {f"i{k}" for k in PLANTED}
    out = tmp_path / "cmp.json"
    cmp = glotbench("runs", "compare", "--contamination", str(run), "--n-boot", "300", "--seed", "4", "--json", str(out), cwd=tmp_path)
    assert cmp.returncode == 0, cmp.stderr[-2000:]
    (row,) = json.loads(out.read_text())["contamination"]
    samples = [json.loads(x) for x in (run / "samples.jsonl").read_text().splitlines()]
    right = {s["sample_id"]: str(s["gold"]) == str(s["pred"]) for s in samples if s["status"] == "scored"}
    clean = [right[i] for i in right if not flags[i]]
    dirty = [right[i] for i in right if flags[i]]
    assert (row["n_clean"], row["n_contaminated"], row["n_unchecked"], row["n_unflagged"]) == (len(clean), len(dirty), 0, 0)
    assert row["clean"] == pytest.approx(sum(clean) / len(clean)) and row["contaminated"] == pytest.approx(sum(dirty) / len(dirty))
    # by hand: the 6 planted items are all right; of the 14 clean ones, k = 0, 3, 6, 9, 12, 15, 18: 7 of 14
    assert (row["contaminated"], row["clean"]) == (1.0, 0.5)
    assert row["difference"] == pytest.approx(0.5)
    from glotbench.report.runs import load_run
    from glotbench.scoring.metrics import ScoredItem, bootstrap_stats, get_metric
    from glotbench.scoring.resample import percentile_interval

    acc = get_metric("accuracy")
    recs = {r.sample_id: r for r in load_run(run).samples}
    items = lambda ids: [ScoredItem(gold=recs[i].gold, pred=recs[i].pred, values=recs[i].value_map) for i in ids]  # noqa: E731
    c = bootstrap_stats(items([i for i in right if not flags[i]]), acc, 300, 4)
    d = bootstrap_stats(items([i for i in right if flags[i]]), acc, 300, 5)
    assert row["clean_ci95"] == pytest.approx(list(percentile_interval(c)))
    assert row["difference_ci95"] == pytest.approx(list(percentile_interval(d - c)))
    assert "contaminated - clean" in cmp.stdout and "0.500" in cmp.stdout


def test_runs_without_flags_are_one_line():
    runs = sorted(str(p) for p in (Path(__file__).parent / "fixtures" / "signal_runs").iterdir())[:2]
    done = glotbench("runs", "compare", "--contamination", *runs, cwd=Path(__file__).parent)
    lines = [x for x in done.stderr.splitlines() if x.strip()]
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-1500:]
    assert len(lines) == 1 and "analyze contamination TASK --corpus FILE --run RUN" in lines[0], lines
