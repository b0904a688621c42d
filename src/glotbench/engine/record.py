"""The per-sample record: one typed object, built here and only here, read by attribute.

Its JSON form (:meth:`SampleRecord.to_json`) is exactly what the journal's ``samples.record``
column and ``samples.jsonl`` have always held, so old run directories stay readable
(:meth:`SampleRecord.from_json` reads a journal row or a samples.jsonl line; keys it does not
know are kept in ``extra`` and written back unchanged). A key that a record never had (an error
record has no ``pred``) is left out of the JSON, as before.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

_UNSET: Any = type("Unset", (), {"__repr__": lambda self: "<unset>", "__bool__": lambda self: False})()

# identity columns of a journal row (not part of the record JSON itself)
_IDENTITY = ("run_key", "task", "sample_id", "idx", "status")


@dataclass
class SampleRecord:
    task: str
    sample_id: str
    idx: int
    status: str = "scored"  # scored | error
    run_key: str = ""
    lang: Any = _UNSET
    prompt: Any = _UNSET
    request_keys: Any = _UNSET
    gold: Any = _UNSET
    metadata: Any = _UNSET
    mode: Any = _UNSET
    outputs: Any = _UNSET
    extracted: Any = _UNSET
    extraction_rule: Any = _UNSET
    pred: Any = _UNSET
    values: Any = _UNSET
    detail: Any = _UNSET
    judge: Any = _UNSET
    judgments: Any = _UNSET
    error: Any = _UNSET
    attempts: Any = _UNSET
    extra: dict[str, Any] = field(default_factory=dict)

    # ------------------------------------------------------------------ building (the one place)
    @classmethod
    def start(cls, *, task: str, sample_id: str, idx: int, run_key: str, lang: str, prompt: Any,
              request_keys: list[str], gold: Any, metadata: dict, mode: str) -> "SampleRecord":
        return cls(task=task, sample_id=sample_id, idx=idx, run_key=run_key, lang=lang, prompt=prompt,
                   request_keys=request_keys, gold=gold, metadata=metadata, mode=mode)

    def failed(self, error: str, *, attempts: int | None = None, outputs: list[dict] | None = None) -> "SampleRecord":
        self.status = "error"
        if outputs is not None:
            self.outputs = outputs
        self.error = error
        if attempts is not None:
            self.attempts = attempts
        return self

    def scored(self, *, outputs: list[dict], extracted: Any, rule: Any, pred: Any, values: dict, detail: dict,
               judge: str | None = None, judgments: list[dict] | None = None) -> "SampleRecord":
        self.status = "scored"
        self.outputs, self.extracted, self.extraction_rule = outputs, extracted, rule
        self.pred, self.values, self.detail = pred, values, detail
        if judgments is not None:
            self.judge, self.judgments = judge, judgments
        return self

    # ------------------------------------------------------------------ reading by attribute
    @property
    def is_scored(self) -> bool:
        return self.status == "scored"

    def get(self, name: str, default: Any = None) -> Any:
        """The attribute, or ``default`` when the record never had it (or it is null)."""
        v = getattr(self, name, _UNSET) if name in _FIELD_NAMES else self.extra.get(name, _UNSET)
        return default if v is _UNSET or v is None else v

    @property
    def value_map(self) -> dict[str, Any]:
        return self.get("values", {})

    @property
    def metadata_map(self) -> dict[str, Any]:
        return self.get("metadata", {})

    # ------------------------------------------------------------------ JSON (unchanged shape)
    def to_json(self) -> dict[str, Any]:
        """The journal's ``record`` column: every key the record has, identity columns left out."""
        out = {f.name: getattr(self, f.name) for f in fields(self)
               if f.name not in _IDENTITY and f.name != "extra" and getattr(self, f.name) is not _UNSET}
        out.update(self.extra)
        return out

    def to_row(self) -> dict[str, Any]:
        """A samples.jsonl line / ``Journal.iter_samples`` row: identity columns, then the record."""
        return {"run_key": self.run_key, "task": self.task, "sample_id": self.sample_id, "idx": self.idx,
                "status": self.status, **self.to_json()}

    @classmethod
    def from_json(cls, row: dict[str, Any]) -> "SampleRecord":
        known = {f.name for f in fields(cls)} - {"extra"}
        kw = {k: v for k, v in row.items() if k in known}
        kw.setdefault("task", "")
        kw.setdefault("sample_id", "")
        kw.setdefault("idx", 0)
        return cls(**kw, extra={k: v for k, v in row.items() if k not in known})


_FIELD_NAMES = frozenset(f.name for f in fields(SampleRecord)) - {"extra"}
