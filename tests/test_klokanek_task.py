"""The czech_bench.klokanek task on the real data, Czech-Bench's way: the reference prompt with its five
exemplars, the exemplars left out of the scored items, per-category accuracy, unparseable
answers out of the headline's denominator (glotbench's accuracy beside it)."""

from __future__ import annotations

import json

import pytest

from glotbench.benchmarks.czech_bench.klokanek import DATASET, counts, load_klokanek
from glotbench.engine.config import RunConfig
from glotbench.engine.session import run_evaluation
from glotbench.paths import resolve_data_file
from glotbench.tasks.registry import resolve


@pytest.fixture(scope="module")
def task():
    if not resolve_data_file(DATASET).is_file():
        pytest.skip(f"Klokánek data not found ({DATASET}); put shared/data in place or set GLOTBENCH_DATA")
    return resolve(["czech_bench.klokanek"])[0]


def test_items_unusable_and_exemplars_left_out(task):
    samples = task.samples()
    c = counts(load_klokanek())
    assert c["usable"] == 877 and len(samples) == 872  # five exemplars out
    assert "872 items" in task.spec.description
    assert all(s.labels == ["A", "B", "C", "D", "E"] and len(s.choices) == 5 for s in samples)
    assert "czech_bench" in task.spec.suites and task.spec.slice_by == ["category"]
    assert task.spec.metrics[0] == "cb_accuracy" and "accuracy" in task.spec.metrics


def test_reference_prompt_ends_with_the_answer_cue(task):
    s = task.samples(limit=1)[0]
    msgs = task.chat_messages(s)
    assert [m["role"] for m in msgs] == ["system", "user"]
    assert msgs[0]["content"].count("Úloha:\n") == 5 and msgs[0]["content"].endswith("Odpověď:\nE\n\n")
    assert msgs[1]["content"].endswith("E) " + s.choices[4] + "\nOdpověď:\n")


def test_run_scores_overall_and_per_category(task, stub_server, tmp_path):
    base = stub_server("--answer", "C")
    cfg = RunConfig(model="openai:stub", base_url=base, tasks=["czech_bench.klokanek"], limit=40, output=str(tmp_path / "run"),
                    bootstrap=50)
    results, out = run_evaluation(cfg, show_progress=False)
    t = results["tasks"]["czech_bench.klokanek"]
    samples = [json.loads(line) for line in (out / "samples.jsonl").open()]
    assert all(s["pred"] == "C" for s in samples)
    want = sum(s["gold"] == "C" for s in samples) / 40
    assert t["metrics"]["cb_accuracy"]["value"] == pytest.approx(want, abs=1e-6)
    assert t["metrics"]["accuracy"]["value"] == pytest.approx(want, abs=1e-6)
    by_cat: dict[str, list] = {}
    for s in samples:
        by_cat.setdefault(str(s["metadata"]["category"]), []).append(s["gold"] == "C")
    assert set(t["slices"]["category"]) == set(by_cat) and len(by_cat) > 2
    for cat, hits in by_cat.items():
        assert t["slices"]["category"][cat]["n"] == len(hits)
        assert t["slices"]["category"][cat]["metrics"]["cb_accuracy"]["value"] == pytest.approx(sum(hits) / len(hits), abs=1e-6)
