"""samples.jsonl lines spliced from the journal's record text equal the parsed-and-merged dump."""

from __future__ import annotations

import json

import pytest

from glotbench import json_codec
from glotbench.engine.journal import Journal
from glotbench.output.results import export_samples, sample_line
from glotbench.sample_record import SampleRecord

RECORDS = [
    {},
    {"pred": "A", "gold": "B", "values": {"accuracy": 0.0}, "prompt": [{"role": "user", "content": "Монгол \"task\""}]},
    {"outputs": [{"text": "答案是 A", "input_tokens": 12}], "detail": None, "nan": float("nan")},
    {"task": "old journals kept identity keys", "idx": 7},  # parsed and merged: the row's columns keep their place
    {"note": "the value \"status\" inside a string"},
]


COMPACT = (",", ":")


@pytest.mark.parametrize("record", RECORDS)
def test_splice_equals_merge(record):
    """A record as the journal writes it (compact): the line is the merged dump, byte for byte."""
    text = json_codec.dumps(record, separators=json_codec.COMPACT)
    merged = {"run_key": "rk", "task": "mm_eval.semantics", "sample_id": "s/1", "idx": 3, "status": "scored", **record}
    line = sample_line("rk", "mm_eval.semantics", "s/1", 3, "scored", text)
    assert line == json.dumps(merged, ensure_ascii=False, default=str, separators=COMPACT)


@pytest.mark.parametrize("record", RECORDS)
def test_an_older_journals_spaced_record_gives_the_same_values(record):
    text = json.dumps(record, ensure_ascii=False, default=str)  # how journals before the compact records wrote it
    merged = {"run_key": "rk", "task": "mm_eval.semantics", "sample_id": "s/1", "idx": 3, "status": "scored", **record}
    line = sample_line("rk", "mm_eval.semantics", "s/1", 3, "scored", text)
    assert list(json.loads(line)) == list(merged)
    assert json.dumps(json.loads(line), default=str) == json.dumps(merged, default=str)  # NaN-safe equality


def test_exported_file_is_what_the_parsed_rows_give(tmp_path):
    j = Journal(tmp_path / "journal.sqlite")
    for i in range(5):
        rec = SampleRecord.start(task="t", sample_id=f"s{i}", idx=i, run_key="rk", lang="mn", prompt=f"Асуулт {i}",
                                 request_keys=["k"], gold="A", metadata={"topic": "x"}, mode="generate")
        rec = rec.scored(outputs=[{"text": "A"}], extracted="A", rule="choice:leading_label", pred="A",
                         values={"accuracy": 1.0}, detail=None, judge=None, judgments=None)
        j.put_sample(rec.run_key, rec.task, rec.sample_id, rec.idx, rec.status, rec.to_json())
    export_samples(j, tmp_path / "fast.jsonl")
    parsed = "".join(json.dumps(rec, ensure_ascii=False, default=str, separators=COMPACT) + "\n"
                     for rec in j.iter_samples())
    fast = (tmp_path / "fast.jsonl").read_bytes()
    assert fast == parsed.encode("utf-8") and fast.count(b"\n") == 5
    j.close()


def test_export_writes_sample_line_of_every_row(tmp_path):
    """export_samples' byte splice gives sample_line's text for compact, spaced, empty and identity-key
    records, ids that need escaping and several tasks."""
    j = Journal(tmp_path / "journal.sqlite")
    texts = [json_codec.dumps(r, separators=json_codec.COMPACT) for r in RECORDS]
    texts += [json.dumps(r, ensure_ascii=False, default=str) for r in RECORDS] + ["{} ", "{ }"]
    rows = []
    for i, text in enumerate(texts):
        row = (f"rk{i % 2}", f"t\"{i % 3}ö", f"s/{i}\\\"\n日本", i, "scored" if i % 4 else "error", text)
        j.conn.execute("INSERT INTO samples(run_key, task, sample_id, idx, status, record, created) VALUES (?,?,?,?,?,?,0)",
                       row)
        rows.append(row)
    export_samples(j, tmp_path / "all.jsonl")
    want = "".join(sample_line(*r) + "\n" for r in sorted(rows, key=lambda r: (r[1], r[3])))
    assert (tmp_path / "all.jsonl").read_bytes() == want.encode("utf-8")
    keep = {"t\"0ö": "rk0", "t\"1ö": "rk1"}
    assert export_samples(j, tmp_path / "some.jsonl", keep) == sum(1 for r in rows if keep.get(r[1]) == r[0])
    want = "".join(sample_line(*r) + "\n" for r in sorted(rows, key=lambda r: (r[1], r[3])) if keep.get(r[1]) == r[0])
    assert (tmp_path / "some.jsonl").read_bytes() == want.encode("utf-8")
    j.close()
