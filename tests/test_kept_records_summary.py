"""A task that keeps its records for its summary hook (Chinese SimpleQA's factuality tables, judged)
summarises the records this process put from memory, not from their journal rows read back
(engine/runner.py ``_keep``). The summary is the same whether every record comes from memory, every
record is read back, some of each (a resumed run), or the run is over the in-memory cap: same
results, same samples.jsonl bytes, same journal rows; and with every record in memory the journal's
sample rows are not read back at all."""

from __future__ import annotations

import json
import os

import pytest

from glotbench.engine import journal as journal_mod
from glotbench.engine import runner
from journal_rows import stored_rows

N = 12


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    from glotbench.paths import find_data_root
    from glotbench.testing.servers import start_stub, stop

    root = find_data_root()
    data = root / "chinese_simpleqa" / "chinese_simpleqa.jsonl" if root is not None else None
    if data is None or not data.is_file():
        pytest.skip("Chinese SimpleQA data not found: put the shared data folder at ../shared/data or set GLOTBENCH_DATA")
    tmp = tmp_path_factory.mktemp("kept")
    questions = [json.loads(line)["question"] for line in data.read_text(encoding="utf-8").splitlines()[:N]]
    # the judge grades by question: B (incorrect) for every third item, C (not attempted) for some, else A
    canned = tmp / "grades.jsonl"
    canned.write_text("".join(json.dumps({"match": q, "response": "B" if i % 3 == 1 else "C"}, ensure_ascii=False) + "\n"
                              for i, q in enumerate(questions) if i % 3 == 1 or i % 4 == 2), encoding="utf-8")
    model_base, model = start_stub("--answer", "A")
    judge_base, judge = start_stub("--answer", "A", "--responses", str(canned))
    try:
        yield model_base, judge_base, tmp
    finally:
        stop(model)
        stop(judge)


def _run(servers, name):
    from glotbench.engine.config import RunConfig
    from glotbench.engine.session import run_evaluation

    model_base, judge_base, tmp = servers
    os.environ.setdefault("OPENAI_API_KEY", "stub")
    out = tmp / name
    cfg = RunConfig(model="openai:stub", base_url=model_base, judge="openai:judge", judge_base_url=judge_base,
                    tasks=["chinese_simpleqa"], limit=N, concurrency=4, output=str(out), bootstrap=50, max_retries=0)
    results, _ = run_evaluation(cfg, show_progress=False)
    task = dict(results["tasks"]["chinese_simpleqa"])
    task["latency"] = {k: v for k, v in task["latency"].items() if k.startswith("n_")}  # timings vary
    return (out / "samples.jsonl").read_bytes(), stored_rows(out / "journal.sqlite"), task


def test_summary_from_kept_records_rows_or_both_is_the_same(servers, monkeypatch):
    reads: list[str] = []
    iter_samples = journal_mod.Journal.iter_samples

    def counting(self, *a, **k):
        reads.append("rows")
        return iter_samples(self, *a, **k)

    monkeypatch.setattr(journal_mod.Journal, "iter_samples", counting)
    kept = _run(servers, "kept")
    assert reads == []  # every record came from memory: no sample row read back

    keep = runner._keep
    monkeypatch.setattr(runner, "_keep", lambda tr, rec, row: None)  # nothing kept: every row read back
    rows = _run(servers, "rows")
    assert reads == ["rows"]
    monkeypatch.setattr(runner, "_keep", lambda tr, rec, row: keep(tr, rec, row) if rec.idx % 2 else None)
    mixed = _run(servers, "mixed")  # half from memory, half read back (as a resumed run's)
    monkeypatch.setattr(runner, "_keep", keep)
    monkeypatch.setattr(runner, "KEEP_MAX", 5)  # over the cap: the run's summary reads every row
    capped = _run(servers, "capped")

    assert kept[2]["n_scored"] == N
    grades = kept[2]["metrics"]
    assert 0 < grades["factuality_co"]["value"] < 1 and grades["factuality_in"]["value"] > 0  # grades differ by item
    assert grades["factuality_na"]["value"] > 0
    for other in (rows, mixed, capped):
        assert kept[0] == other[0]  # samples.jsonl, byte for byte
        assert kept[1] == other[1]  # journal rows, checksums included
        assert kept[2] == other[2]  # the task's results: metrics, intervals, slices, the factuality tables


def test_a_record_that_would_not_read_back_the_same_is_read_from_its_row():
    from glotbench.sample_record import SampleRecord

    rec = SampleRecord.start(task="t", sample_id="s1", idx=0, run_key="rk", lang="en", prompt="p",
                             request_keys=["k"], gold="B", metadata={"level": 1}, mode="generate")
    rec = rec.scored(outputs=[{"text": "B"}], extracted="B", rule="r", pred="B", values={"exact_match": 1.0}, detail={})
    tr = runner.TaskRun(task=None, mode="generate", fingerprint={"id": "rk"}, samples=[])
    runner._keep(tr, rec, rec.to_json())
    assert type(tr.kept["s1"]) is SampleRecord and tr.kept["s1"].pred == "B"
    runner._keep(tr, rec, {**rec.to_json(), "detail": {"pair": ("a", "b")}})  # a tuple reads back as a list
    assert "s1" not in tr.kept
