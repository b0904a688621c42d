"""results.json as types: :class:`RunResult` of :class:`TaskResult` s of :class:`MetricResult` s, with a
``schema_version`` and one :func:`migrate` for every older layout (docs/python-api.md). A metric's
definition is data (a kind of :mod:`glotbench.scoring.metric_kinds` and its parameters) beside its
value and interval. Blocks the types do not name (config, run, slices, a benchmark's own tables) are
kept as written: ``RunResult.from_json(d).to_json() == migrate(d)``. Version 1 (no ``schema_version``)
named a corpus metric's function (``{"kind": "corpus", "function": "module:qualname", ...}``) and a mean
as ``{"kind": "mean", "key": k}``; version 2 stores every metric as a kind with its ``params``. Optional
blocks added since (``model_meta``: :attr:`RunResult.model_meta`) need no migration: a run without one reads empty.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from glotbench.errors import DataError
from glotbench.scoring.metric_kinds import migrate_definition

SCHEMA_VERSION = 2


def migrate(raw: dict[str, Any], where: str = "results.json") -> dict[str, Any]:
    """A results.json of any version as this version writes it (a new dict; ``raw`` is not changed).
    A file from a newer glotbench is refused with one line."""
    version = raw.get("schema_version", 1)
    if not isinstance(version, int) or version > SCHEMA_VERSION:
        raise DataError(f"{where}: field 'schema_version' is {version!r}; this glotbench reads versions up to "
                        f"{SCHEMA_VERSION} (a newer glotbench wrote it: upgrade to read it)")
    tasks = raw.get("tasks")
    out = {"schema_version": SCHEMA_VERSION, **{k: v for k, v in raw.items() if k != "schema_version"}}
    if version < 2 and isinstance(tasks, dict):
        out["tasks"] = {name: migrate_task(t) for name, t in tasks.items()}
    return out


def migrate_task(t: Any) -> Any:
    """One task block's metric definitions as this version writes them (idempotent)."""
    defs = t.get("metric_definitions") if isinstance(t, dict) else None
    if not isinstance(defs, dict):
        return t
    return {**t, "metric_definitions": {m: migrate_definition({"name": m, **d}) if isinstance(d, dict) else d
                                        for m, d in defs.items()}}


def _num(x: Any) -> float | None:
    return None if x is None else float(x)


@dataclass(frozen=True)
class MetricResult:
    """One aggregate: value, 95% interval (None when not computed), direction and stored definition."""

    name: str
    value: float | None
    ci95: tuple[float | None, float | None] | None
    direction: str = "higher"
    definition: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, name: str, entry: Any, definition: dict[str, Any] | None) -> "MetricResult":
        if not isinstance(entry, dict):  # a bare number (hand-made files)
            entry = {"value": entry}
        ci = entry.get("ci95")
        definition = definition or {}
        return cls(name, _num(entry.get("value")), (_num(ci[0]), _num(ci[1])) if ci else None,
                   str(definition.get("direction") or "higher"), definition)

    def to_json(self) -> dict[str, Any]:
        return {"value": self.value, "ci95": None if self.ci95 is None else list(self.ci95)}

    def metric(self):
        """The :class:`~glotbench.scoring.metrics.Metric` its definition names (computable when its kind is here)."""
        from glotbench.scoring.metrics import Metric

        return Metric.from_dict({"name": self.name, **self.definition})


@dataclass(frozen=True)
class TaskResult:
    """One task's numbers and the validity the CLI prints beside them (``status``: ok, flagged, invalid,
    incomplete or failed; ``valid`` for the first two); ``raw``: the task's block as written."""

    name: str
    language: str | None
    version: str | None
    n_items: int
    n_scored: int
    n_errors: int
    metrics: dict[str, MetricResult]
    fingerprint: str | None
    status: str = "ok"
    flag: str = ""
    n_unparseable: int = 0
    unparseable_rate: float = 0.0
    headline: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def valid(self) -> bool:
        """Whether the score stands as the CLI prints it (``ok`` or ``flagged``)."""
        return self.status in ("ok", "flagged")

    @classmethod
    def from_json(cls, name: str, t: dict[str, Any]) -> "TaskResult":
        """A task block of this version (:func:`migrate` first for an older file)."""
        defs = t.get("metric_definitions") or {}
        metrics = {m: MetricResult.from_json(m, v, defs.get(m)) for m, v in (t.get("metrics") or {}).items()}
        return cls(name=name, language=t.get("language"), version=t.get("version"), n_items=t.get("n_items", 0),
                   n_scored=t.get("n_scored", 0), n_errors=t.get("n_errors", 0), metrics=metrics,
                   fingerprint=(t.get("fingerprint") or {}).get("id"), status=t.get("status") or "ok",
                   flag=t.get("flag") or "", n_unparseable=t.get("n_unparseable") or 0,
                   unparseable_rate=t.get("unparseable_rate") or 0.0, headline=t.get("headline"), raw=t)

    def to_json(self) -> dict[str, Any]:
        out = dict(self.raw)
        if self.metrics or "metrics" in out:
            out["metrics"] = {m: r.to_json() for m, r in self.metrics.items()}
        if any(r.definition for r in self.metrics.values()) or "metric_definitions" in out:
            out["metric_definitions"] = {m: r.definition for m, r in self.metrics.items() if r.definition}
        return out


@dataclass(frozen=True)
class RunResult:
    """A run's results.json: fingerprint, model and tasks typed, the rest kept as written in ``raw``."""

    fingerprint: str
    model: dict[str, Any]
    tasks: dict[str, TaskResult]
    schema_version: int = SCHEMA_VERSION
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, raw: dict[str, Any], where: str = "results.json") -> "RunResult":
        """Any version's results.json, read through :func:`migrate`."""
        d = migrate(raw, where)
        if not isinstance(d.get("tasks") or {}, dict):
            raise DataError(f"{where}: field 'tasks' is not an object")
        return cls(fingerprint=str(d.get("fingerprint") or ""), model=d.get("model") or {},
                   tasks={n: TaskResult.from_json(n, t) for n, t in (d.get("tasks") or {}).items()},
                   schema_version=SCHEMA_VERSION, raw=d)

    @property
    def model_meta(self):
        """The model's description (``run --model-meta``; output/model_meta.py): an empty
        :class:`~glotbench.output.model_meta.ModelMeta` for a run written without it, or before it existed."""
        from glotbench.output.model_meta import ModelMeta

        return ModelMeta.from_json(self.raw.get("model_meta"))

    def to_json(self) -> dict[str, Any]:
        out = {"schema_version": self.schema_version, **{k: v for k, v in self.raw.items() if k != "schema_version"}}
        out["fingerprint"] = self.fingerprint
        out["model"] = self.model
        out["tasks"] = {n: t.to_json() for n, t in self.tasks.items()}
        return out
