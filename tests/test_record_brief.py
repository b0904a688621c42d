"""RecordBrief (sample_record.py): what the summary reads of a record this process wrote equals what it
would read back from the record's journal row, or there is no brief (the summary reads the row)."""

from __future__ import annotations

import math

import pytest

from glotbench import json_codec
from glotbench.sample_record import RecordBrief, SampleRecord


def _record(gold="B", pred="B", values=None, metadata=None, outputs=None, status="scored", keys=("k1",)):
    rec = SampleRecord.start(task="t", sample_id="s1", idx=0, run_key="rk", lang="en", prompt="p",
                             request_keys=list(keys), gold=gold, metadata=metadata if metadata is not None else {"level": 1},
                             mode="generate")
    outs = outputs if outputs is not None else [{"text": "B", "input_tokens": 10, "output_tokens": 2}]
    if status == "error":
        return rec.failed("boom", attempts=2, outputs=outputs)
    return rec.scored(outputs=outs, extracted="B", rule="r", pred=pred,
                      values=values if values is not None else {"exact_match": 1.0, "ok": True}, detail={})


def _read_back(rec: SampleRecord) -> SampleRecord:
    row = {"run_key": rec.run_key, "task": rec.task, "sample_id": rec.sample_id, "idx": rec.idx,
           "status": rec.status, **json_codec.loads(json_codec.dumps_utf8(rec.to_json()))}
    return SampleRecord.from_json(row)


def _same(brief: tuple, back: SampleRecord) -> None:
    assert type(brief) is tuple and brief[RecordBrief.IDX] == back.idx
    for k, name in ((RecordBrief.STATUS, "status"), (RecordBrief.GOLD, "gold"), (RecordBrief.PRED, "pred"),
                    (RecordBrief.ERROR, "error")):
        a, b = brief[k], getattr(back, name)
        assert a == b and type(a) is type(b), name
    values, metadata = brief[RecordBrief.VALUES] or {}, brief[RecordBrief.METADATA] or {}
    assert values == back.value_map and metadata == back.metadata_map
    assert [type(v) for v in values.values()] == [type(v) for v in back.value_map.values()]
    outs = back.output_list
    assert (brief[RecordBrief.INPUT_TOKENS], brief[RecordBrief.OUTPUT_TOKENS]) == (
        sum(o.get("input_tokens") or 0 for o in outs), sum(o.get("output_tokens") or 0 for o in outs))
    keys = back.request_keys or [] if back.is_scored else []
    flat = brief[RecordBrief.REQUESTS]
    assert list(zip(flat[::2], flat[1::2])) == [(k, outs[i].get("output_tokens") if len(outs) == len(keys) else None)
                                                 for i, k in enumerate(keys)]


@pytest.mark.parametrize("rec", [
    _record(),
    _record(pred=None, values={"exact_match": 0.0, "parsed": False}),
    _record(gold=3, pred=3.5, metadata={"level": "a", "tags": ["x", {"y": None}], "big": 2 ** 63}),
    _record(outputs=[{"text": "a", "input_tokens": None, "output_tokens": 1}, {"text": "b"}], keys=("k1", "k2")),
    _record(outputs=[{"text": "a", "output_tokens": 1}], keys=("k1", "k2")),  # counts differ: no tokens per key
    _record(status="error", outputs=[{"text": "a", "input_tokens": 4, "output_tokens": 1}]),
    _record(status="error"),
])
def test_brief_reads_as_the_row_reads_back(rec):
    brief = RecordBrief.of(rec)
    assert brief is not None
    _same(brief, _read_back(rec))


@pytest.mark.parametrize("rec", [
    _record(gold=("A", "B")),  # a tuple reads back as a list
    _record(metadata={1: "int key"}),  # an int key reads back as a string
    _record(values={"score": float("nan")}),
    _record(values={"score": math.inf}),
    _record(pred=2 ** 70),
    _record(metadata={"when": object()}),  # written as its str()
    _record(outputs=[{"text": "a", "input_tokens": 1.0}]),
    _record(outputs=[{"text": "a", "output_tokens": True}]),
])
def test_no_brief_where_the_row_reads_back_otherwise(rec):
    assert RecordBrief.of(rec) is None


def test_numpy_values_take_the_row():
    np = pytest.importorskip("numpy")
    assert RecordBrief.of(_record(values={"score": np.float64(0.5)})) is None
    assert RecordBrief.of(_record(gold=np.int64(1))) is None


def test_a_brief_is_one_tracked_object():
    """A brief adds one object the garbage collector tracks (its request keys and counts are a flat
    tuple of strings and numbers, untracked once the collector has looked at it)."""
    import gc

    brief = RecordBrief.of(_record(keys=("k1", "k2"), outputs=[{"text": "a", "output_tokens": 1}, {"text": "b"}]))
    gc.collect()
    assert type(brief) is tuple and brief[RecordBrief.REQUESTS] == ("k1", 1, "k2", None)
    assert [k for k, v in enumerate(brief) if gc.is_tracked(v)] == []  # values and metadata: plain flat dicts
