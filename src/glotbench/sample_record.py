"""The per-sample record: one typed object, built here and only here, read by attribute.

Its JSON form (:meth:`SampleRecord.to_json`) is exactly what the journal's ``samples.record``
column and ``samples.jsonl`` have always held, so old run directories stay readable
(:meth:`SampleRecord.from_json` reads a journal row or a samples.jsonl line; keys it does not
know are kept in ``extra`` and written back unchanged). Every attribute reads as ``None`` when the
record never had it; a key that a record never had (an error record has no ``pred``) is left out of
the JSON, as before, while one set to ``None`` on purpose (an unparseable answer's ``pred``) is kept.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from glotbench.json_codec import reads_back_same

# identity columns of a journal row (not part of the record JSON itself)
_IDENTITY = ("run_key", "task", "sample_id", "idx", "status")


@dataclass
class SampleRecord:
    task: str
    sample_id: str
    idx: int
    status: str = "scored"  # scored | error
    run_key: str = ""
    lang: Any = None
    prompt: Any = None
    request_keys: Any = None
    gold: Any = None
    metadata: Any = None
    mode: Any = None
    outputs: Any = None
    extracted: Any = None
    extraction_rule: Any = None
    pred: Any = None
    values: Any = None
    detail: Any = None
    judge: Any = None
    judgments: Any = None
    error: Any = None
    attempts: Any = None
    extra: dict[str, Any] = field(default_factory=dict)
    # which record fields this record has (a None it was given is kept in the JSON, an absent one is not)
    present: set[str] = field(default_factory=set, repr=False, compare=False)

    def _set(self, **values: Any) -> None:
        self.__dict__.update(values)  # plain attributes (no slots, no properties): setattr one by one, faster
        self.present.update(values)

    # ------------------------------------------------------------------ building (the one place)
    @classmethod
    def start(cls, *, task: str, sample_id: str, idx: int, run_key: str, lang: str, prompt: Any,
              request_keys: list[str], gold: Any, metadata: dict, mode: str) -> "SampleRecord":
        rec = cls(task=task, sample_id=sample_id, idx=idx, run_key=run_key)
        rec._set(lang=lang, prompt=prompt, request_keys=request_keys, gold=gold, metadata=metadata, mode=mode)
        return rec

    def failed(self, error: str, *, attempts: int | None = None, outputs: list[dict] | None = None) -> "SampleRecord":
        self.status = "error"
        if outputs is not None:
            self._set(outputs=outputs)
        self._set(error=error)
        if attempts is not None:
            self._set(attempts=attempts)
        return self

    def scored(self, *, outputs: list[dict], extracted: Any, rule: Any, pred: Any, values: dict, detail: dict,
               judge: str | None = None, judgments: list[dict] | None = None) -> "SampleRecord":
        self.status = "scored"
        self._set(outputs=outputs, extracted=extracted, extraction_rule=rule, pred=pred, values=values, detail=detail)
        if judgments is not None:
            self._set(judge=judge, judgments=judgments)
        return self

    # ------------------------------------------------------------------ reading by attribute
    @property
    def is_scored(self) -> bool:
        return self.status == "scored"

    def get(self, name: str, default: Any = None) -> Any:
        """The attribute, or ``default`` when the record never had it (or it is null)."""
        v = getattr(self, name) if name in _FIELD_NAMES else self.extra.get(name)
        return default if v is None else v

    @property
    def value_map(self) -> dict[str, Any]:
        return self.values or {}

    @property
    def metadata_map(self) -> dict[str, Any]:
        return self.metadata or {}

    @property
    def id(self) -> str:
        return str(self.sample_id)

    @property
    def raw(self) -> dict[str, Any]:
        """The record as samples.jsonl holds it."""
        return self.to_row()

    @property
    def output_list(self) -> list[dict[str, Any]]:
        return self.outputs or []

    # ------------------------------------------------------------------ JSON (unchanged shape)
    def to_json(self) -> dict[str, Any]:
        """The journal's ``record`` column: every key the record has, identity columns left out."""
        d, present = self.__dict__, self.present  # plain attributes: read from the instance dict
        out = {name: d[name] for name in _RECORD_FIELDS if name in present or d[name] is not None}
        if self.extra:
            out.update(self.extra)
        return out

    def to_row(self) -> dict[str, Any]:
        """A samples.jsonl line / ``Journal.iter_samples`` row: identity columns, then the record."""
        return {"run_key": self.run_key, "task": self.task, "sample_id": self.sample_id, "idx": self.idx,
                "status": self.status, **self.to_json()}

    @classmethod
    def from_json(cls, row: dict[str, Any]) -> "SampleRecord":
        ident = {k: row[k] for k in _IDENTITY if k in row}
        ident.setdefault("task", "")
        ident.setdefault("sample_id", "")
        ident.setdefault("idx", 0)
        extra, known = {}, {}
        for k, v in row.items():  # one pass; sets, not the field tuple, for membership (a summary reads every record)
            if k in _RECORD_FIELD_SET:
                known[k] = v
            elif k not in _FIELD_NAMES and k not in _IDENTITY_SET:
                extra[k] = v
        rec = cls(**ident, extra=extra)
        rec._set(**known)
        return rec


class RecordBrief:
    """What a run's summary reads of a record this process wrote (engine/runner.summarise): kept as
    the item is put, so the summary need not read and parse its journal row back.

    A brief is an exact tuple ``(idx, status, gold, pred, values, metadata, error, input tokens,
    output tokens, requests)``: ``idx`` orders it as its row; the tokens are the outputs' sums;
    ``requests`` a scored record's request keys, each followed by its output tokens or None
    (``(key1, tokens1, key2, ...)``: the latency block). One object the garbage collector tracks per
    item (the record's own values and metadata dicts aside): a brief as an object with a list of pair
    tuples was four, and the run's collections took 5 -> 8 ms per 1,590 stub items."""

    IDX, STATUS, GOLD, PRED, VALUES, METADATA, ERROR, INPUT_TOKENS, OUTPUT_TOKENS, REQUESTS = range(10)

    @staticmethod
    def of(rec: SampleRecord) -> tuple | None:
        """The brief of ``rec`` as its journal row reads back (:meth:`SampleRecord.from_json` of
        :meth:`SampleRecord.to_json`'s JSON), or None when a value would not read back the same (then
        the summary reads the row)."""
        if type(rec.idx) is not int:
            return None
        outs = rec.outputs or ()
        tin = tout = 0
        counts = []
        for o in outs:
            if type(o) is not dict:
                return None
            a, b = o.get("input_tokens"), o.get("output_tokens")
            if (a is not None and type(a) is not int) or (b is not None and type(b) is not int):
                return None
            tin += a or 0
            tout += b or 0
            counts.append(b)
        if not reads_back_same([rec.gold, rec.pred, rec.values, rec.metadata, rec.error]):
            return None
        requests = ()
        if rec.status == "scored":
            keys = rec.request_keys or []
            if type(keys) is not list or not reads_back_same(keys):
                return None
            same = len(counts) == len(keys)
            flat: list = []
            for i, k in enumerate(keys):  # flat, no tuple per pair: nothing more for the collector to track
                flat += (k, counts[i] if same else None)
            requests = tuple(flat)
        return (rec.idx, rec.status, rec.gold, rec.pred, rec.values, rec.metadata, rec.error, tin, tout, requests)


_FIELD_NAMES = frozenset(f.name for f in fields(SampleRecord)) - {"extra", "present"}
_RECORD_FIELDS = tuple(f.name for f in fields(SampleRecord) if f.name not in _IDENTITY and f.name not in ("extra", "present"))
_RECORD_FIELD_SET = frozenset(_RECORD_FIELDS)
_IDENTITY_SET = frozenset(_IDENTITY)
