"""MM-Eval's language vs cognitive ability table (§3.1) and the hulu.ws task on the real HuWS data."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from glotbench.benchmarks.mm_eval import abilities as mm
from glotbench.paths import resolve_data_file
from glotbench.tasks.registry import resolve
from glotbench.models.base import GenResult
from glotbench.tasks.request_settings import RequestSettings

SRC = Path(__file__).resolve().parents[1] / "src"


LEVELS = ("mm_eval.syntax", "mm_eval.semantics", "mm_eval.knowledge", "mm_eval.reasoning")
RIGHT = {"mm_eval.syntax": 5, "mm_eval.semantics": 2, "mm_eval.knowledge": 4, "mm_eval.reasoning": 1}  # of 6 each


def _wrong(target: str) -> str:
    if target.strip().lstrip("-").replace(".", "", 1).isdigit():  # reasoning: a number that is not the gold
        return str(float(target) + 7)
    return next(x for x in "ABCD" if x != target.strip())


def test_language_vs_cognitive_on_a_real_run(data_root, tmp_path):
    """A real run over the real MM-Eval items (recorded answers, 6 per level, some right by design): every
    cell of the table against a plain recomputation from samples.jsonl, the reasoning level on its
    headline numeric_match (it reports no `accuracy`)."""
    rows = []
    for task in LEVELS:
        for k, s in enumerate(resolve([task])[0].samples(limit=6)):
            rows.append({"task": task, "id": s.id, "answer": s.target if k < RIGHT[task] else _wrong(str(s.target))})
    answers = tmp_path / "answers.jsonl"
    answers.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")
    out = tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", ""), "COLUMNS": "200"}
    done = subprocess.run([sys.executable, "-m", "glotbench", "run", "--model", f"recorded:{answers}", "-M", "task=task",
                           "--tasks", ",".join(LEVELS), "--limit", "6", "-o", str(out), "--no-progress"],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))

    # plain recomputation: right answers per level from the sample lines
    right: dict[str, int] = {t: 0 for t in LEVELS}
    n: dict[str, int] = {t: 0 for t in LEVELS}
    for line in (out / "samples.jsonl").read_text(encoding="utf-8").splitlines():
        x = json.loads(line)
        if x["status"] != "scored":
            continue
        n[x["task"]] += 1
        if x["task"] == "mm_eval.reasoning":  # the number read from the answer equals the gold number
            ok = x.get("pred") is not None and float(x["pred"]) == float(x["gold"])
        else:
            ok = x.get("pred") is not None and str(x["pred"]) == str(x["gold"])
        right[x["task"]] += ok
    assert right == RIGHT and n == dict.fromkeys(LEVELS, 6)
    acc = {t: right[t] / n[t] for t in LEVELS}

    approx = lambda x: pytest.approx(x, abs=1e-6)  # noqa: E731 - results.json keeps 6 decimals
    ab = mm.abilities(results)
    for ability, (a, b) in mm.LEVELS.items():
        row = ab[ability]
        assert row["levels"] == {a: approx(acc[a]), b: approx(acc[b])}
        assert row["mean_of_levels"] == approx((acc[a] + acc[b]) / 2)
        assert row["pooled_items"] == approx((right[a] + right[b]) / (n[a] + n[b]))
        assert row["n"] == n[a] + n[b]
    assert ab["cognitive"]["mean_of_levels"] == approx((4 / 6 + 1 / 6) / 2)  # the row that stayed empty
    assert results["tasks"]["mm_eval.reasoning"]["headline"] == "numeric_match"
    # the table `glotbench run` printed under the results
    line = next(ln for ln in done.stdout.splitlines() if "cognitive (knowledge + reasoning)" in ln)
    assert f"{100 * (4 / 6 + 1 / 6) / 2:.2f}" in line and f"{100 * 5 / 12:.2f}" in line and " 12 " in line
    assert f"reasoning {100 * 1 / 6:.2f} (numeric_match)" in line
    line = next(ln for ln in done.stdout.splitlines() if "language (syntax + semantics)" in ln)
    assert f"{100 * (5 / 6 + 2 / 6) / 2:.2f}" in line and f"{100 * 7 / 12:.2f}" in line
    # a level that was not run leaves its ability out
    del results["tasks"]["mm_eval.reasoning"]
    partial = mm.abilities(results)
    assert partial["cognitive"]["mean_of_levels"] is None and partial["cognitive"]["levels"]["mm_eval.reasoning"] is None
    assert partial["language"]["mean_of_levels"] == approx((5 / 6 + 2 / 6) / 2)
    # --metric reads one named metric on every level: reasoning has no accuracy, so its ability is left out
    assert mm.abilities(json.loads((out / "results.json").read_text()), metric="accuracy")["cognitive"]["mean_of_levels"] is None


def test_an_invalid_level_is_shown_as_invalid_never_averaged_as_zero(data_root, tmp_path):
    """Reasoning answered with no number at all (100% unparseable: the run marks it invalid): the ability
    table shows it as invalid and averages the cognitive ability over knowledge alone, with the count."""
    rows = []
    for task in ("mm_eval.knowledge", "mm_eval.reasoning"):
        for k, s in enumerate(resolve([task])[0].samples(limit=6)):
            answer = "nevím" if task == "mm_eval.reasoning" else (s.target if k < 4 else _wrong(str(s.target)))
            rows.append({"task": task, "id": s.id, "answer": answer})
    answers = tmp_path / "answers.jsonl"
    answers.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")
    out = tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", ""), "COLUMNS": "200"}
    done = subprocess.run([sys.executable, "-m", "glotbench", "run", "--model", f"recorded:{answers}", "-M", "task=task",
                           "--tasks", "mm_eval.knowledge,mm_eval.reasoning", "--limit", "6", "-o", str(out),
                           "--no-progress"], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert results["tasks"]["mm_eval.reasoning"]["status"] == "invalid"  # the case
    row = mm.abilities(results)["cognitive"]
    assert row["levels"]["mm_eval.reasoning"] == "invalid" and row["invalid"] == ["mm_eval.reasoning"]
    assert row["mean_of_levels"] == pytest.approx(4 / 6, abs=1e-6)  # knowledge alone, not (4/6 + 0) / 2
    assert row["pooled_items"] == pytest.approx(4 / 6, abs=1e-6) and row["n"] == 6
    line = next(ln for ln in done.stdout.splitlines() if "cognitive (knowledge + reasoning)" in ln)
    assert "reasoning invalid" in line and "reasoning 0.00" not in line
    assert f"{100 * 4 / 6:.2f} (1 invalid left out)" in line
    assert f"{100 * (4 / 6) / 2:.2f}" not in line  # the silent zero average of before


def test_huws_task_on_the_real_data():
    if not resolve_data_file("hulu/HuWS/huws.json").is_file():
        pytest.skip("HuLU data not found (hulu/HuWS/huws.json under the data root)")
    [t] = resolve(["hulu.ws"])
    samples = t.samples()
    assert len(samples) == 244
    s = samples[0]
    assert s.id == "1" and s.target == "1" and s.choices == ["a városi tanácstagok", "a tüntetők"]
    assert samples[1].target == "2"  # "Kik támogatták az erőszakot?" -> a tüntetők
    assert sum(x.target == "1" for x in samples) == 122
    [req] = t.requests(s, mode="generate", chat=True, settings=RequestSettings())
    text = req.messages[-1]["content"]
    assert "kerülték az erőszakot" in text and "1. a városi tanácstagok" in text and "2. a tüntetők" in text
    assert t.score(s, [GenResult(text="1")], mode="generate").values["correct"] == 1.0
    assert t.score(samples[1], [GenResult(text="Válasz: 1")], mode="generate").values["correct"] == 0.0
