"""docs/factuality.md's alignment-tax recipe (Chinese SimpleQA §4.5, App. H) runs: a base model's
``chinese_simpleqa.base`` run and an aligned model's ``chinese_simpleqa`` run, then
``glotbench compare --paired BASE_RUN ALIGNED_RUN``. The two tasks are variants of the same items, so
the comparison pairs them item by item; the numbers are checked against the grades recomputed here."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
N = 10
# per item: which answer each model gives; the stub judge grades "对对对" CORRECT (A), "错错错" INCORRECT (B),
# "我不知道" NOT_ATTEMPTED (C)
BASE = ["对对对"] * 3 + ["错错错"] * 5 + ["我不知道"] * 2
ALIGNED = ["对对对"] * 6 + ["错错错"] * 1 + ["我不知道"] * 3
GRADE = {"对对对": "CORRECT", "错错错": "INCORRECT", "我不知道": "NOT_ATTEMPTED"}


def glot(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", ""), "OPENAI_API_KEY": "x",
           "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "glotbench", *args], capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=300)


def co(answers: list[str]) -> float:
    return sum(GRADE[a] == "CORRECT" for a in answers) / len(answers)


def test_alignment_tax_recipe_pairs_the_base_variant_with_the_chat_task(data_root, tmp_path, stub_server):
    from glotbench.tasks.registry import resolve

    samples = resolve(["chinese_simpleqa"])[0].samples(limit=N)
    assert [s.id for s in resolve(["chinese_simpleqa.base"])[0].samples(limit=N)] == [s.id for s in samples]
    canned = tmp_path / "judge.jsonl"
    canned.write_text("\n".join(json.dumps({"match": f"预测答案: {a}", "response": g}, ensure_ascii=False)
                                for a, g in (("对对对", "A"), ("错错错", "B"), ("我不知道", "C"))), encoding="utf-8")
    judge = stub_server("--responses", str(canned))
    runs = {}
    for name, task, answers in (("base", "chinese_simpleqa.base", BASE), ("aligned", "chinese_simpleqa", ALIGNED)):
        f = tmp_path / f"{name}.jsonl"
        f.write_text("\n".join(json.dumps({"id": s.id, "answer": a}, ensure_ascii=False) for s, a in zip(samples, answers)),
                     encoding="utf-8")
        runs[name] = tmp_path / f"run_{name}"
        done = glot("run", "--model", f"recorded:{f}", "--judge", "openai:j", "--judge-base-url", judge, "--tasks", task,
                    "--limit", str(N), "-o", str(runs[name]), "--no-progress", cwd=tmp_path)
        assert done.returncode == 0, done.stderr[-3000:]

    # the recipe: glotbench compare --paired BASE_RUN ALIGNED_RUN
    done = glot("runs", "compare", "--paired", str(runs["base"]), str(runs["aligned"]), "--n-boot", "200",
                "--json", str(tmp_path / "paired.json"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    rows = {r["metric"]: r for r in json.loads((tmp_path / "paired.json").read_text())["paired"]}
    r = rows["factuality_co"]
    assert r["task"] == "chinese_simpleqa.base vs chinese_simpleqa"
    assert r["n_items"] == N and r["n_left_out"] == 0
    assert r["score_a"] == pytest.approx(co(BASE)) and r["score_b"] == pytest.approx(co(ALIGNED))
    assert r["difference"] == pytest.approx(co(BASE) - co(ALIGNED))  # -0.3: the base model knows less here
    na = rows["factuality_na"]
    assert na["score_a"] == pytest.approx(0.2) and na["score_b"] == pytest.approx(0.3)
    assert "chinese_simpleqa.base vs chinese_simpleqa" in done.stdout and "-0.300" in done.stdout
