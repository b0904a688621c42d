"""The typed per-sample record keeps the journal's JSON shape: a run directory written by the
main branch before the record existed (tests/fixtures/run_main_d456fe5: mm_eval.syntax,
mm_eval.knowledge, hulu.cb, 3 items each, stub model answering "A") reads back unchanged."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from glotbench.engine.aggregate import summarise_task
from glotbench.engine.journal import Journal
from glotbench.sample_record import SampleRecord

OLD = Path(__file__).parent / "fixtures" / "run_main_d456fe5"


def test_old_journal_rows_round_trip_unchanged(tmp_path):
    shutil.copytree(OLD, tmp_path / "run")
    j = Journal(tmp_path / "run" / "journal.sqlite")
    try:
        rows = list(j.iter_samples())
    finally:
        j.close()
    assert len(rows) == 9
    for row in rows:
        rec = SampleRecord.from_json(row)
        assert rec.to_row() == row  # same keys, same values
        assert rec.task == row["task"] and rec.pred == row["pred"] and rec.values == row["values"]
        assert rec.is_scored and rec.extra == {}
    lines = [json.loads(x) for x in (OLD / "samples.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [SampleRecord.from_json(x).to_row() for x in lines] == lines


def test_old_run_summarises_to_its_own_results(tmp_path):
    results = json.loads((OLD / "results.json").read_text(encoding="utf-8"))
    lines = [json.loads(x) for x in (OLD / "samples.jsonl").read_text(encoding="utf-8").splitlines()]
    for name, t in results["tasks"].items():
        recs = [r for r in lines if r["task"] == name]
        again = summarise_task(recs, list(t["metrics"]), [], t["n_items"], n_boot=1000, seed=results["config"]["seed"])
        for m, block in t["metrics"].items():
            assert again["metrics"][m]["value"] == pytest.approx(block["value"]), (name, m)
        assert again["n_scored"] == t["n_scored"] and again["n_unparseable"] == t["n_unparseable"]


def test_error_and_scored_records_keep_their_keys():
    base = dict(task="t", sample_id="1", idx=0, run_key="k", lang="en", prompt="p", request_keys=["r"], gold="A",
                metadata={}, mode="generate")
    err = SampleRecord.start(**base).failed("boom", attempts=3)
    assert err.to_json() == {"lang": "en", "prompt": "p", "request_keys": ["r"], "gold": "A", "metadata": {},
                             "mode": "generate", "error": "boom", "attempts": 3}
    ok = SampleRecord.start(**base).scored(outputs=[{"text": "A"}], extracted="A", rule="r1", pred=None, values={},
                                           detail={})
    assert ok.to_json()["pred"] is None and "judge" not in ok.to_json() and ok.status == "scored"
    assert ok.get("pred", "x") == "x" and ok.get("gold") == "A"


def test_absent_fields_read_as_none_and_stay_absent_in_json():
    row = {"run_key": "k", "task": "t", "sample_id": "1", "idx": 0, "status": "error", "error": "boom"}
    rec = SampleRecord.from_json(row)
    assert rec.pred is None and rec.outputs is None and rec.output_list == [] and rec.value_map == {}
    assert rec.id == "1" and not rec.is_scored and rec.to_row() == row  # no "pred": null added
    kept = SampleRecord.from_json({**row, "status": "scored", "pred": None, "values": {"correct": 0.0}})
    assert "pred" in kept.to_json() and kept.to_json()["pred"] is None  # an unparseable answer keeps its null
    assert kept.raw == {**row, "status": "scored", "pred": None, "values": {"correct": 0.0}}


def test_unknown_keys_go_to_extra_and_come_back_in_their_place():
    """from_json's one-pass split (record fields, identity, the rest kept in ``extra``) writes back
    the row it read, key order included."""
    row = {"run_key": "k", "task": "t", "sample_id": "1", "idx": 3, "status": "scored", "lang": "mn",
           "prompt": [{"role": "user", "content": "q"}], "zz_new": {"a": 1}, "pred": "A", "present": "a key named so",
           "values": {"correct": 1.0}, "extra": [1, 2]}
    rec = SampleRecord.from_json(row)
    assert rec.extra == {"zz_new": {"a": 1}, "present": "a key named so", "extra": [1, 2]}
    assert rec.pred == "A" and rec.lang == "mn" and rec.idx == 3
    assert rec.to_row() == row
    assert list(rec.to_json()) == ["lang", "prompt", "pred", "values", "zz_new", "present", "extra"]
