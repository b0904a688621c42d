"""``analyze signal``: the runs' points per task for :mod:`glotbench.report.analysis.signal`.

A run's identity (``--meta``, the folder name or model id, ``--step-from``, ``--model-from``), a
task's chance level (``--chance`` or the gold labels) and the two halves of the items are read as
docs/trust-a-number.md says.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from glotbench.report.analysis.signal import RunPoint, TaskSignal, task_signal
from glotbench.errors import DataError
from glotbench.report.comparisons import rankable
from glotbench.report.items import is_binary, item_vector, scored_items
from glotbench.report.runs import RunData, metric_of, primary_metric, short_model_name, task_names

STEP_RE = re.compile(r"step[-_=]?(\d+(?:\.\d+)?)", re.IGNORECASE)
SEED_RE = re.compile(r"seed[-_=]?(\w+?)(?:$|[-_.])", re.IGNORECASE)


def parse_meta(values: list[str]) -> dict[str, dict[str, str]]:
    """``RUN=key=value,key=value`` -> {RUN: {key: value}}; keys model, step, seed."""
    out: dict[str, dict[str, str]] = {}
    for v in values:
        run, sep, rest = v.partition("=")
        if not sep or not rest:
            raise DataError(f"--meta {v!r}: expected RUN=step=1000,seed=1 (keys model, step, seed)")
        fields: dict[str, str] = {}
        for part in rest.split(","):
            k, sep2, val = part.partition("=")
            k = k.strip()
            if not sep2 or k not in ("model", "step", "seed"):
                raise DataError(f"--meta {v!r}: {part!r} is not model=, step= or seed=")
            fields[k] = val.strip()
        out[run] = fields
    return out


def parse_chance(values: list[str]) -> dict[str, float]:
    out = {}
    for v in values:
        task, sep, x = v.partition("=")
        try:
            out[task] = float(x)
        except ValueError:
            raise DataError(f"--chance {v!r}: expected TASK=NUMBER") from None
        if not sep:
            raise DataError(f"--chance {v!r}: expected TASK=NUMBER")
    return out


def pattern(text: str | None, option: str) -> re.Pattern | None:
    """A user's regular expression with at least one group, or one line naming the option."""
    if text is None:
        return None
    try:
        rx = re.compile(text)
    except re.error as err:
        raise DataError(f"{option} {text!r}: not a regular expression ({err})") from None
    if rx.groups < 1:
        raise DataError(f"{option} {text!r}: needs a group, e.g. 'ckpt(\\d+)'")
    return rx


def run_identity(run: RunData, given: str, meta: dict[str, dict[str, str]], step_from: str | None,
                 model_from: str | None) -> tuple[str, float | None, str | None]:
    name = Path(run.path).name
    m = meta.get(given) or meta.get(str(run.path)) or meta.get(name) or {}
    step_text = m.get("step")
    if step_text is None:
        for where in (name, run.model_id):
            found = (pattern(step_from, "--step-from") or STEP_RE).search(where)
            if found:
                step_text = found.group(1)
                break
    try:
        step = float(step_text) if step_text is not None else None
    except ValueError:
        raise DataError(f"{run.path}: step {step_text!r} is not a number") from None
    seed = m.get("seed")
    if seed is None:
        found = SEED_RE.search(name) or SEED_RE.search(run.model_id)
        seed = found.group(1) if found else None
    model = m.get("model")
    if model is None and model_from:
        found = pattern(model_from, "--model-from").search(name)  # type: ignore[union-attr]
        model = found.group(1) if found else None
    return model or short_model_name(run.model_id), step, seed


def chance_level(run: RunData, task: str, metric: str) -> float | None:
    recs = [s for s in run.samples_of(task) if s.is_scored]
    mdef = metric_of(run.tasks[task], metric)
    values = item_vector(recs, mdef)
    if not recs or values is None or not is_binary([v for v in values if v is not None]):
        return None
    golds = [str(s.gold) for s in recs if s.gold is not None]
    if not golds:
        return None
    if all(len(g) == 1 and "A" <= g <= "Z" for g in golds):
        return 1 / (ord(max(golds)) - ord("A") + 1)
    return max(Counter(golds).values()) / len(golds)


def signal_from_runs(runs: list[RunData], given: list[str], meta: dict[str, dict[str, str]] | None = None,
                     metric: str | None = None, chance: dict[str, float] | None = None, step_from: str | None = None,
                     model_from: str | None = None) -> tuple[list[TaskSignal], list[dict]]:
    """Per task the signal, and each run's identity and scores (for the table and the JSON)."""
    meta, chance = meta or {}, chance or {}
    known = set(given) | {str(r.path) for r in runs} | {Path(r.path).name for r in runs}
    stray = [k for k in meta if k not in known]
    if stray:
        raise DataError(f"--meta {stray[0]}=...: no run directory given by that path or folder name")
    ids = [run_identity(r, g, meta, step_from, model_from) for r, g in zip(runs, given)]
    out, rows = [], []
    for task in task_names(runs):
        holders = [(r, ident) for r, ident in zip(runs, ids) if task in r.tasks]
        m = metric or primary_metric(holders[0][0].tasks[task])
        if m is None:
            continue
        valid = [(r, i) for r, i in holders if m in (r.tasks[task].get("metrics") or {}) and rankable(r.tasks[task], m) is not None]
        mdef = metric_of(valid[0][0].tasks[task], m) if valid else metric_of(holders[0][0].tasks[task], m)
        common: list[str] = []
        if valid:
            scored = [{s.sample_id: s for s in r.samples_of(task) if s.is_scored} for r, _ in valid]
            common = [x for x in scored[0] if all(x in d for d in scored[1:])]
        points = []
        valid_ids = {id(r) for r, _ in valid}
        for r, (model, step, seed) in holders:
            score = rankable(r.tasks[task], m) if id(r) in valid_ids else None
            halves = None
            if score is not None and len(common) >= 2 and mdef is not None and mdef.available:
                by_id = {s.sample_id: s for s in r.samples_of(task)}
                halves = tuple(float(mdef(scored_items([by_id[x] for x in common[h::2]]))) for h in (0, 1))
            points.append(RunPoint(model, step, seed, None if score is None else float(score), halves))  # type: ignore[arg-type]
            rows.append({"task": task, "metric": m, "run": str(r.path), "model": model, "step": step, "seed": seed,
                         "score": score, "halves": halves})
        c = chance.get(task, chance_level(valid[0][0], task, m) if valid else None)
        out.append(task_signal(task, m, points, c, True if mdef is None else mdef.higher_is_better))
    return out, rows
