"""Released grades as the score: ``--model recorded:FILE -M grade=COLUMN`` with no judge gives the
same CO / NA / IN / CGA / F, intervals and per-topic values as the same grades given by a stub judge
(asserted equal), and ``compare-judges --judge-name`` compares released grades with a re-judge
across runs (tau and kappa against SciPy and scikit-learn). Runs in fresh processes; the stub judge
is the loopback stub server."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

SRC = Path(__file__).resolve().parents[1] / "src"
DEFS = SRC / "glotbench" / "benchmarks" / "factuality" / "tasks"
TOPICS = ("Geography", "Art", "Science")
LETTER = {"CORRECT": "A", "INCORRECT": "B", "NOT_ATTEMPTED": "C"}


def glot(*args, cwd: Path, timeout: int = 300) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(SRC), "OPENAI_API_KEY": "x", "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "glotbench", *map(str, args)], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=timeout)


def simpleqa_task(tmp_path: Path, n: int = 30) -> Path:
    """English SimpleQA's task file on a hand-made simple-evals CSV of ``n`` questions over three topics."""
    data = tmp_path / "qa.csv"
    with data.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["metadata", "problem", "answer"])
        for k in range(n):
            meta = {"topic": TOPICS[k % 3], "answer_type": "Other", "urls": []}
            w.writerow([repr(meta), f"Question number {k:03d}?", f"gold-{k:03d}"])
    spec = yaml.safe_load((DEFS / "simpleqa.yaml").read_text(encoding="utf-8"))
    spec["dataset"]["splits"]["test"] = str(data)
    spec.pop("source", None)
    path = tmp_path / "simpleqa.yaml"
    path.write_text(yaml.safe_dump(spec, allow_unicode=True), encoding="utf-8")
    return path


def grades_for(model: int, n: int = 30) -> list[str]:
    """A fixed mix of grades per model (letters too: the SimpleQA graders' A / B / C)."""
    out = []
    for k in range(n):
        g = "CORRECT" if k % 10 < model else ("CORRECT", "INCORRECT", "NOT_ATTEMPTED")[(k * 7 + model * 11 + (k * k * (model + 1)) % 5) % 3]
        out.append(LETTER[g] if k % 7 == 3 else g)
    return out


def grade_file(tmp_path: Path, model: int, grades: list[str], name: str | None = None) -> Path:
    path = tmp_path / (name or f"release_m{model}.jsonl")
    rows = [{"question": f"Question number {k:03d}?", "answer": f"ans-m{model}-{k:03d}-end", "grade": g}
            for k, g in enumerate(grades)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def full(g: str) -> str:
    return {v: k for k, v in LETTER.items()}.get(g, g)


def canned(tmp_path: Path, verdicts: dict[str, str]) -> Path:
    """The stub judge's replies: the letter for each answer (matched on the grader prompt's answer line)."""
    path = tmp_path / "judge.jsonl"
    lines = [{"match": f"Predicted answer: {answer}", "response": letter} for answer, letter in verdicts.items()]
    path.write_text("\n".join(json.dumps(x) for x in lines), encoding="utf-8")
    return path


def _task(run: Path) -> dict:
    return json.loads((run / "results.json").read_text(encoding="utf-8"))["tasks"]["simpleqa"]


def test_recorded_grades_without_a_judge_equal_the_stub_judge_route(tmp_path):
    from glotbench.testing.servers import start_stub, stop

    task = simpleqa_task(tmp_path)
    grades = grades_for(1)
    release = grade_file(tmp_path, 1, grades)
    rec = tmp_path / "rec"
    done = glot("run", "--model", f"recorded:{release}", "-M", "question=question", "-M", "grade=grade",
                "--tasks", task, "--bootstrap", "500", "--no-progress", "-o", rec, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "grades from file" in done.stdout + done.stderr
    res = json.loads((rec / "results.json").read_text(encoding="utf-8"))
    assert res["judge"]["source"] == "grades from file" and res["judge"]["column"] == "grade"
    assert res["judge"]["model_id"].startswith("recorded-grades:release_m1.jsonl@")

    # the stub-judge route: the same answers, the same grades given by a judge's letters
    answers = {f"ans-m1-{k:03d}-end": LETTER[full(g)] for k, g in enumerate(grades)}
    base, proc = start_stub("--responses", str(canned(tmp_path, answers)))
    try:
        stub = tmp_path / "stub"
        done = glot("run", "--model", f"recorded:{release}", "-M", "question=question", "--judge", "openai:j",
                    "--judge-base-url", base, "--tasks", task, "--bootstrap", "500", "--no-progress", "-o", stub,
                    cwd=tmp_path)
        assert done.returncode == 0, done.stderr[-3000:]
    finally:
        stop(proc)
    a, b = _task(rec), _task(stub)
    names = ("factuality_co", "factuality_na", "factuality_in", "factuality_cga", "factuality_f")
    assert set(names) <= set(a["metrics"])
    for m in names:
        assert a["metrics"][m]["value"] == b["metrics"][m]["value"], m
        assert a["metrics"][m]["ci95"] == b["metrics"][m]["ci95"], m
        assert a["metrics"][m]["ci95"][0] < a["metrics"][m]["ci95"][1]
    assert a["slices"] == b["slices"] and set(a["slices"]["topic"]) == set(TOPICS)
    # and by value: plain counts of the file's grades
    full_grades = [full(g) for g in grades]
    c, i, n = (full_grades.count(x) for x in ("CORRECT", "INCORRECT", "NOT_ATTEMPTED"))
    assert a["metrics"]["factuality_co"]["value"] == pytest.approx(c / 30, abs=1e-6)
    assert a["metrics"]["factuality_cga"]["value"] == pytest.approx(c / (c + i), abs=1e-6)
    assert a["metrics"]["factuality_f"]["value"] == pytest.approx(2 * c / (2 * c + 2 * i + n), abs=1e-6)
    for t, topic in enumerate(TOPICS):  # per topic: the plain count over the topic's rows
        gs = [g for k, g in enumerate(full_grades) if k % 3 == t]
        c, i = gs.count("CORRECT"), gs.count("INCORRECT")
        got = a["slices"]["topic"][topic]["metrics"]
        assert got["factuality_co"]["value"] == pytest.approx(c / len(gs), abs=1e-6)
        assert got["factuality_cga"]["value"] == pytest.approx(c / (c + i), abs=1e-6)


def test_a_row_without_a_grade_is_a_judge_error_not_a_grade(tmp_path):
    task = simpleqa_task(tmp_path, n=6)
    grades = ["CORRECT", "", "INCORRECT", "NOT_ATTEMPTED", "CORRECT", "CORRECT"]
    release = grade_file(tmp_path, 1, grades)
    done = glot("run", "--model", f"recorded:{release}", "-M", "question=question", "-M", "grade=grade",
                "--tasks", task, "--bootstrap", "50", "--no-progress", "-o", tmp_path / "r", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    m = _task(tmp_path / "r")["metrics"]
    assert m["factuality_co"]["value"] == pytest.approx(3 / 5, abs=1e-6)  # the ungraded row is out of the denominator
    recs = [json.loads(x) for x in (tmp_path / "r" / "samples.jsonl").read_text().splitlines()]
    ungraded = [r for r in recs if r.get("pred") is None]
    assert len(ungraded) == 1 and ungraded[0]["judgments"][0]["reason"] == "no grade in the file"


def test_a_judged_task_without_judge_or_grades_is_refused_naming_both(tmp_path):
    task = simpleqa_task(tmp_path, n=3)
    release = grade_file(tmp_path, 1, ["CORRECT"] * 3)
    done = glot("run", "--model", f"recorded:{release}", "-M", "question=question", "--tasks", task,
                "--no-progress", "-o", tmp_path / "r", cwd=tmp_path)
    assert done.returncode != 0
    assert "pass --judge MODEL" in done.stderr and "-M grade=COLUMN" in done.stderr


def test_compare_judges_released_grades_against_a_rejudge_equal_scipy_and_sklearn(tmp_path):
    from scipy.stats import kendalltau
    from sklearn.metrics import cohen_kappa_score

    from glotbench.testing.servers import start_stub, stop

    task = simpleqa_task(tmp_path)
    released = {m: grades_for(m) for m in range(4)}
    # the re-judge disagrees with the release on some items (every 4th answer of model m, shifted by m)
    rejudged = {m: [full(g) if (k + m) % 4 else ("INCORRECT" if full(g) == "CORRECT" else "CORRECT")
                    for k, g in enumerate(gs)] for m, gs in released.items()}
    verdicts = {f"ans-m{m}-{k:03d}-end": LETTER[g] for m, gs in rejudged.items() for k, g in enumerate(gs)}
    base, proc = start_stub("--responses", str(canned(tmp_path, verdicts)))
    runs = []
    try:
        for m in range(4):
            out = tmp_path / f"run{m}"
            args = ["run", "--model", f"recorded:{grade_file(tmp_path, m, released[m])}", "-M", "question=question",
                    "-M", "grade=grade", "--tasks", task, "--bootstrap", "20", "--no-progress", "-o", out]
            if m == 3:  # the fourth: released grades and the live judge in one run
                args += ["--judge", "openai:j", "--judge-base-url", base]
            done = glot(*args, cwd=tmp_path)
            assert done.returncode == 0, done.stderr[-3000:]
            if m < 3:  # the three recorded runs, re-judged afterwards
                done = glot("judge", "rerun", out, "--judge", "openai:j", "--judge-base-url", base, "--no-progress", cwd=tmp_path)
                assert done.returncode == 0, done.stderr[-3000:]
            runs.append(out)
    finally:
        stop(proc)
    # without --judge-name each file is its own judge: no judge graded every run
    done = glot("judge", "compare", *runs, "--json", tmp_path / "plain.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "skipped" in json.loads((tmp_path / "plain.json").read_text())["simpleqa"]
    done = glot("judge", "compare", *runs, "--judge-name", "released", "--json", tmp_path / "cmp.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "released" in done.stdout
    got = json.loads((tmp_path / "cmp.json").read_text())["simpleqa"]
    assert sorted(got["judges"]) == ["openai:j", "released"] and len(got["models"]) == 4

    def f_score(gs: list[str]) -> float:
        c, i, n = (gs.count(x) for x in ("CORRECT", "INCORRECT", "NOT_ATTEMPTED"))
        return 2 * c / (2 * c + 2 * i + n)

    label = {r["run_dir"]: name for name, r in got["runs"].items()}
    order = [label[str(r)] for r in runs]
    assert sorted(order) == sorted(got["models"])
    f_rel = {name: f_score([full(g) for g in released[m]]) for m, name in enumerate(order)}
    f_rej = {name: f_score(rejudged[m]) for m, name in enumerate(order)}
    models = got["models"]
    want_tau = kendalltau([f_rel[x] for x in models], [f_rej[x] for x in models]).statistic
    [tau] = got["kendall_tau"]
    assert tau["tau"] == pytest.approx(want_tau, abs=1e-12) and tau["n_models"] == 4
    for name in models:  # each model's F under each judge
        assert got["scores"]["released"][name]["F"] == pytest.approx(f_rel[name], abs=1e-12)
        assert got["scores"]["openai:j"][name]["F"] == pytest.approx(f_rej[name], abs=1e-12)
    # kappa on item grades pooled over models, items in id order as compare-judges aligns them
    pooled_rel, pooled_rej = [], []
    for name in models:
        m = order.index(name)
        ids = sorted(range(30), key=str)  # the task's item ids are the row numbers, aligned as strings
        pooled_rel += [full(released[m][k]) for k in ids]
        pooled_rej += [rejudged[m][k] for k in ids]
    [kappa] = got["cohen_kappa"]
    labels = ["CORRECT", "INCORRECT", "NOT_ATTEMPTED"]
    want_kappa = cohen_kappa_score(pooled_rel, pooled_rej, labels=labels)
    assert kappa["kappa"] == pytest.approx(want_kappa, abs=1e-12) and kappa["n_items"] == 120


def test_judge_name_pattern_matching_two_judges_of_one_run_is_one_line(tmp_path):
    from glotbench.judges.judge_compare import JudgedRun, rename_judges
    from glotbench.errors import GlotbenchError

    run = JudgedRun(run_dir=tmp_path, model_id="m", settings={},
                    grades={"t": {"recorded-grades:a@1": {"x": "CORRECT"}, "openai:j": {"x": "CORRECT"}}})
    with pytest.raises(GlotbenchError, match="two judges of this run match"):
        rename_judges(run, [("all", "*")])
    rename_judges(run, [("released", "recorded-grades:*")])
    assert set(run.grades["t"]) == {"released", "openai:j"}
