"""``compare --crosslingual``: the item-paired bootstrap interval of each difference, each relative
gap and each model's average gap, equal to a plain loop (tests/value_oracles.py) with the same seed
and resample count; ``compare --paired`` pairs a task with its ``counterpart`` on shared item ids;
an invalid side is shown as invalid, never as a number, and left out of the averages with a count.
Two-language tasks and recorded answers made here; every CLI call in a fresh process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from value_oracles import item_paired_gap_bootstrap

SRC = str(Path(__file__).resolve().parents[1] / "src")
N = 40


def glot(cwd: Path, *args) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": SRC, "COLUMNS": "250"}
    return subprocess.run([sys.executable, "-m", "glotbench", *map(str, args)], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


def task(name: str, lang: str, counterpart: str | None) -> dict:
    spec = {"name": name, "version": "1", "language": lang,
            "dataset": {"format": "jsonl", "splits": {"test": f"{name}.jsonl"}},
            "fields": {"id": "id", "question": "q", "target": "a"}, "output_type": "generate",
            "prompt": {"user": "{{ question }}"}, "generation": {"max_tokens": 8},
            "extractor": {"name": "number"}, "scorer": "numeric", "metrics": ["numeric_match"]}
    if counterpart:
        spec["counterpart"] = counterpart
    return spec


# which items each model gets right on each task: (model, task) -> predicate over the item index
RIGHT = {
    ("m1", "gap.cs"): lambda k: k % 3 != 0, ("m1", "gap.en"): lambda k: k % 5 != 0,
    ("m1", "gap2.cs"): lambda k: k % 2 == 0, ("m1", "gap2.en"): lambda k: k % 4 != 1,
    ("m2", "gap.cs"): lambda k: k % 4 == 0, ("m2", "gap.en"): lambda k: k % 3 == 0 or k < 10,
    ("m2", "gap2.cs"): lambda k: k % 5 < 3, ("m2", "gap2.en"): lambda k: k % 5 < 2,
}
TASKS = ("gap.cs", "gap.en", "gap2.cs", "gap2.en")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("gap")
    for name in TASKS:
        lang = name.split(".")[1]
        other = name.replace(".cs", ".en") if lang == "cs" else None
        (root / f"{name}.yaml").write_text(yaml.safe_dump(task(name, lang, other)), encoding="utf-8")
        rows = [{"id": f"q{k:02d}", "q": f"{name} question {k}?", "a": str(k + 1)} for k in range(N)]
        (root / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    for model in ("m1", "m2", "m3"):
        rows = []
        for name in TASKS:
            for k in range(N):
                if model == "m3":  # answers nothing on gap.cs (invalid: over 50% unparseable), right elsewhere
                    ans = "no idea" if name == "gap.cs" else str(k + 1)
                else:
                    ans = str(k + 1) if RIGHT[(model, name)](k) else str(k + 100)
                rows.append({"task": name, "id": f"q{k:02d}", "answer": ans})
        answers = root / f"{model}.jsonl"
        answers.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        done = glot(root, "run", "--model", f"recorded:{answers}", "-M", "task=task",
                    "--tasks", ",".join(str(root / f"{t}.yaml") for t in TASKS), "--bootstrap", "50",
                    "--no-progress", "-o", root / model)
        assert done.returncode == 0, done.stderr[-3000:]
    return root


def values(model: str, name: str) -> list[float]:
    return [1.0 if RIGHT[(model, name)](k) else 0.0 for k in range(N)]


def test_gap_intervals_equal_a_plain_item_paired_bootstrap_loop(runs):
    done = glot(runs, "runs", "compare", "--crosslingual", "m1", "m2", "--n-boot", "400", "--seed", "7", "--json", "x.json")
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads((runs / "x.json").read_text())
    gaps = got["gap_intervals"]
    assert gaps["n_resamples"] == 400 and gaps["seed"] == 7
    by_pair = {(p["model"], p["pair"].split(" ")[0]): p for p in gaps["pairs"]}
    by_model = {m["model"]: m for m in gaps["models"]}
    labels = sorted(by_model)
    assert len(labels) == 2
    for model in ("m1", "m2"):
        label = next(x for x in labels if x.startswith(f"recorded:{model}.jsonl"))
        want = item_paired_gap_bootstrap([values(model, "gap.cs"), values(model, "gap2.cs")],
                                         [values(model, "gap.en"), values(model, "gap2.en")],
                                         ["gap.cs vs gap.en", "gap2.cs vs gap2.en"], n_resamples=400, seed=7)
        for j, native in enumerate(("gap.cs", "gap2.cs")):
            row = by_pair[(label, native)]
            assert row["n_items"] == N
            assert row["difference_ci95"] == pytest.approx(want["pairs"][j]["difference_ci95"], abs=1e-12)
            assert row["relative_gap_ci95"] == pytest.approx(want["pairs"][j]["relative_gap_ci95"], abs=1e-12)
            assert row["difference_ci95"][0] < row["difference_ci95"][1]
        assert by_model[label]["average_relative_gap_ci95"] == pytest.approx(want["average_ci95"], abs=1e-12)
    # the console shows the intervals beside the difference, the gap and the average
    assert "item-paired bootstrap" in done.stdout and "%, " in done.stdout


def test_invalid_side_shows_invalid_and_is_left_out_of_the_average(runs):
    res = json.loads((runs / "m3" / "results.json").read_text())["tasks"]
    assert res["gap.cs"]["status"] == "invalid"  # the case: nothing parsed on the native side
    done = glot(runs, "runs", "compare", "--crosslingual", "m3", "--n-boot", "100", "--json", "y.json")
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads((runs / "y.json").read_text())
    [model] = got["crosslingual"]["models"].values()
    assert model["n_pairs"] == 1 and model["n_missing"] == 1
    assert model["average_relative_gap"] == 0.0  # gap2: right on both sides; the invalid pair is not a 0
    assert got["invalid"] and got["invalid"][0]["native"] == "invalid"
    row = next(line for line in done.stdout.splitlines() if "gap.cs numeric_match vs" in line)
    assert "invalid" in row and "0.000 [" not in row.split("vs gap.en")[1].split("│")[1]
    assert any("left out of the average" in n for n in got["notes"])


def test_paired_pairs_a_task_with_its_counterpart_and_marks_invalid(runs):
    done = glot(runs, "runs", "compare", "--paired", "m1", "m1", "--n-boot", "300", "--json", "p.json")
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads((runs / "p.json").read_text())
    rows = {r["task"]: r for r in got["paired"]}
    assert set(rows) == {"gap.cs vs gap.en", "gap2.cs vs gap2.en"}
    r = rows["gap.cs vs gap.en"]
    a, b = values("m1", "gap.cs"), values("m1", "gap.en")
    assert r["n_items"] == N and r["difference"] == pytest.approx(sum(a) / N - sum(b) / N, abs=1e-12)
    # the invalid side: shown as invalid, no number and no test, counted
    done = glot(runs, "runs", "compare", "--paired", "m3", "m3", "--n-boot", "300", "--json", "q.json")
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads((runs / "q.json").read_text())
    assert [r["task"] for r in got["paired"]] == ["gap2.cs vs gap2.en"]
    [bad] = got["invalid"]
    assert bad["task"] == "gap.cs vs gap.en" and bad["invalid"] == "A" and bad["difference"] is None
    line = next(x for x in done.stdout.splitlines() if "gap.cs vs gap.en" in x)
    assert "invalid" in line and "0.000" not in line
    assert any("1 score(s) invalid" in n for n in got["notes"])
