"""The cs.klokanek task on the real data: items left out and counted, Czech prompt, per-category accuracy."""

from __future__ import annotations

import json

import pytest

from glotbench.czech.klokanek import DATASET, counts, load_klokanek
from glotbench.engine.config import RunConfig
from glotbench.engine.session import run_evaluation
from glotbench.paths import resolve_data_file
from glotbench.tasks.registry import resolve


@pytest.fixture(scope="module")
def task():
    if not resolve_data_file(DATASET).is_file():
        pytest.skip(f"Klokánek data not found ({DATASET}); put shared/data in place or set GLOTBENCH_DATA")
    return resolve(["cs.klokanek"])[0]


def test_unusable_items_are_left_out_and_counted(task):
    samples = task.samples()
    c = counts(load_klokanek())
    assert len(samples) == c["usable"] == 877
    assert task.excluded == {k: c[k] for k in ("total", "needs_picture", "broken_options", "dropped_in_review", "usable")}
    left_out = c["total"] - c["usable"]
    # the count a user sees in `glotbench tasks` / the task description matches the data
    assert f"{left_out} are left out" in " ".join(task.spec.description.split())
    assert f"{c['usable']} items" in task.spec.description
    usable_ids = {it.id for it in load_klokanek() if it.usable}
    assert {s.id for s in samples} == usable_ids
    assert all(s.labels == ["A", "B", "C", "D", "E"] and len(s.choices) == 5 for s in samples)


def test_czech_prompt(task):
    s = task.samples(limit=1)[0]
    msgs = task.chat_messages(s)
    assert [m["role"] for m in msgs] == ["system", "user"]
    assert "Matematický klokan" in msgs[0]["content"]
    user = msgs[1]["content"]
    assert "A, B, C, D nebo E" in user and "Odpověz pouze písmenem" in user and s.vars["question"] in user
    assert "E) " + s.choices[4] in user
    assert task.plain_prompt(s).rstrip().endswith("Odpověď:")
    assert task.spec.extractor.name == "choice" and task.spec.scorer == "label" and task.spec.slice_by == ["category"]


def test_run_scores_overall_and_per_category(task, stub_server, tmp_path):
    base = stub_server("--answer", "Správná odpověď je C.")
    cfg = RunConfig(model="openai:stub", base_url=base, tasks=["cs.klokanek"], limit=40, output=str(tmp_path / "run"),
                    bootstrap=50)
    results, out = run_evaluation(cfg, show_progress=False)
    t = results["tasks"]["cs.klokanek"]
    samples = [json.loads(line) for line in (out / "samples.jsonl").open()]
    assert all(s["pred"] == "C" for s in samples)  # the Czech answer phrase is read
    assert t["metrics"]["accuracy"]["value"] == pytest.approx(sum(s["gold"] == "C" for s in samples) / 40, abs=1e-6)
    by_cat: dict[str, list] = {}
    for s in samples:
        by_cat.setdefault(str(s["metadata"]["category"]), []).append(s["gold"] == "C")
    assert set(t["slices"]["category"]) == set(by_cat) and len(by_cat) > 2
    for cat, hits in by_cat.items():
        assert t["slices"]["category"][cat]["n"] == len(hits)
        assert t["slices"]["category"][cat]["metrics"]["accuracy"]["value"] == pytest.approx(sum(hits) / len(hits), abs=1e-6)
