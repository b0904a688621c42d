"""Leaderboard submission files from a finished (or interrupted) run.

``write_submissions(run_dir, out_dir)`` reads the run's sample records (``samples.jsonl``, or the
journal when the export is missing) and writes ``<task>.json`` per HuLU task run on its **test**
split, in the leaderboard's format (:func:`glotbench.leaderboard.submission_format.make_submission`).
The fallback label for unreadable or failed items, the ``n_fallback`` count and partial runs
(``fill_missing``): docs/leaderboard.md.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

from glotbench.data.loaders import iter_jsonl
from glotbench.engine.journal import Journal
from glotbench.sample_record import SampleRecord
from glotbench.errors import GlotbenchError
from glotbench.leaderboard.submission_format import make_submission
from glotbench.tasks.registry import all_specs, make_task
from glotbench.tasks.task import Task

SUBMISSION_SUITE = "hulu"
SUBMISSION_SPLIT = "test"
JOURNAL_NAME = "journal.sqlite"


@dataclass
class SubmissionSummary:
    task: str
    path: Path | None  # None when the task was skipped
    split: str
    n_items: int = 0  # items in the split
    n_predicted: int = 0  # parseable model answers
    n_fallback: int = 0  # unparseable answers and failed requests, given the fallback label
    n_missing: int = 0  # items the run never reached (filled only with fill_missing)
    fallback_label: str | None = None
    skipped: str = ""  # why no file was written
    fallback_ids: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["path"] = str(self.path) if self.path else None
        return d


def _read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as err:
        raise GlotbenchError(f"{path}: cannot read run results ({err})") from None


def _run_info(run_dir: Path) -> tuple[dict, dict]:
    """(settings, model settings) of the run: results.json, else the journal's stored config."""
    results = run_dir / "results.json"
    if results.is_file():
        doc = _read_json(results)
        return doc.get("settings") or {}, doc.get("model") or {}
    journal_path = run_dir / JOURNAL_NAME
    if not journal_path.is_file():
        raise GlotbenchError(f"{run_dir}: not a run directory (no results.json or {JOURNAL_NAME})")
    journal = Journal(journal_path)
    try:
        cfg = journal.get_meta("config") or {}
    finally:
        journal.close()
    return {"split": cfg.get("split")}, {"model_id": cfg.get("model")}


def _records(run_dir: Path) -> dict[str, list[SampleRecord]]:
    """task -> its sample records (latest run of each task)."""
    by_task: dict[str, list[SampleRecord]] = {}
    samples = run_dir / "samples.jsonl"
    if samples.is_file():
        for _, row in iter_jsonl(samples, encoding="utf-8"):
            rec = SampleRecord.from_json(row)
            by_task.setdefault(rec.task, []).append(rec)
        return by_task
    journal_path = run_dir / JOURNAL_NAME
    if not journal_path.is_file():
        raise GlotbenchError(f"{run_dir}: no samples.jsonl or {JOURNAL_NAME} to read predictions from")
    journal = Journal(journal_path)
    try:
        for row in journal.iter_samples():
            rec = SampleRecord.from_json(row)
            by_task.setdefault(rec.task, []).append(rec)
    finally:
        journal.close()
    for task, recs in by_task.items():  # a journal can hold several runs of a task: keep the newest
        keys = {r.run_key for r in recs}
        if len(keys) > 1:
            raise GlotbenchError(f"{journal_path}: task {task} was run with {len(keys)} different settings; "
                                 "finish the run (it writes samples.jsonl) or use a fresh output directory")
    return by_task


def majority_label(task: Task) -> str:
    """The most frequent label in the task's few-shot (train) split; ties go to the first label in option order."""
    split = task.spec.fewshot.split or "train"
    counts = Counter(s.target for s in task.samples(split) if s.target is not None)
    if not counts:
        raise GlotbenchError(f"task {task.name}: split {split!r} has no labels to take a fallback label from")
    order = list(task.spec.options.get("values") or sorted(counts))
    return max(order, key=lambda lab: (counts.get(lab, 0), -order.index(lab)))


def build_submissions(run_dir: Path, out_dir: Path, *, model_name: str | None = None,
                      fill_missing: bool = False) -> list[SubmissionSummary]:
    """Write the submission files; return one summary per HuLU task in the run (written or skipped)."""
    run_dir, out_dir = Path(run_dir), Path(out_dir)
    settings, model = _run_info(run_dir)
    model_name = model_name or model.get("model_id") or "unknown-model"
    by_task = _records(run_dir)
    specs = all_specs()
    hulu = [make_task(*specs[name]) for name in sorted(by_task)
            if name in specs and SUBMISSION_SUITE in specs[name][0].suites]
    if not hulu:
        return []  # output.submission_writers says so when no writer has a task in the run
    summaries: list[SubmissionSummary] = []
    for task in hulu:
        split = settings.get("split") or task.spec.dataset.eval_split
        if split != SUBMISSION_SPLIT:
            summaries.append(SubmissionSummary(task=task.name, path=None, split=split,
                                               skipped=f"run on split {split!r}; submissions need --split {SUBMISSION_SPLIT}"))
            continue
        summaries.append(_write_one(task, by_task[task.name], out_dir, model_name, fill_missing, settings))
    return summaries


def _write_one(task: Task, records: list[SampleRecord], out_dir: Path, model_name: str, fill_missing: bool,
               settings: dict) -> SubmissionSummary:
    items = task.samples(SUBMISSION_SPLIT)
    values = set(task.spec.options.get("values") or [])
    fallback = majority_label(task)
    got = {r.sample_id: r for r in records}
    summary = SubmissionSummary(task=task.name, path=None, split=SUBMISSION_SPLIT, n_items=len(items),
                                fallback_label=fallback)
    predictions: dict[str, str] = {}
    for s in items:
        rec = got.get(s.id)
        if rec is None:
            summary.n_missing += 1
            if fill_missing:
                predictions[s.id] = fallback
            continue
        pred = rec.pred if rec.is_scored else None
        if pred is None or (values and str(pred) not in values):
            summary.n_fallback += 1
            summary.fallback_ids.append(s.id)
            predictions[s.id] = fallback
        else:
            summary.n_predicted += 1
            predictions[s.id] = str(pred)
    doc = make_submission(task.name, model_name, predictions)
    doc["glotbench"] = {
        "split": SUBMISSION_SPLIT,
        "task_version": task.spec.version,
        "prompt_hash": task.spec.prompt_hash(),
        "settings": settings,
        "n_items": summary.n_items,
        "n_predicted": summary.n_predicted,
        "n_fallback": summary.n_fallback,
        "n_missing": summary.n_missing,
        "missing_filled": fill_missing,
        "fallback_label": fallback,
        "fallback_rule": "majority label of the train split, for unparseable answers and failed requests",
    }
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{task.name}.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    tmp.replace(path)
    summary.path = path
    return summary


def write_submissions(run_dir: Path, out_dir: Path, *, model_name: str | None = None,
                      fill_missing: bool = False) -> list[Path]:
    """One leaderboard submission file per HuLU task run on the test split; returns their paths."""
    return [s.path for s in build_submissions(run_dir, out_dir, model_name=model_name, fill_missing=fill_missing)
            if s.path is not None]
