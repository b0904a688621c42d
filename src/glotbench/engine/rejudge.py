"""Re-grade a finished (or partly finished) run with another judge, without calling the evaluated
model: the answers come from the journal's sample records. The new judge's calls and verdicts
go into the same journal (responses with role 'judge', the ``judgments`` table under the new
judge's id), so a killed re-grade resumes without repeating a call, and the new judge's scores
are written into results.json under ``"judges": {judge_id: {task: summary}}``.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from pathlib import Path

from glotbench.tasks.request_settings import RequestSettings
from glotbench.tasks.names import DEFAULT_SUITE
from glotbench.engine.caller import CachedCaller, RequestFailed
from glotbench.engine.config import RunConfig
from glotbench.engine.fingerprint import task_fingerprint
from glotbench.engine.journal import JOURNAL_NAME, Journal
from glotbench.engine.lock import journal_lock
from glotbench.engine.retry import RetryPolicy
from glotbench.engine.runner import TaskRun, _output_view, judge_sample, summarise
from glotbench.errors import DataError, GlotbenchError
from glotbench.models.base import GenResult, Model
from glotbench.output.results import write_json
from glotbench.sample_record import SampleRecord
from glotbench.tasks.registry import resolve
from glotbench.tasks.task import Sample



@dataclass
class RejudgeStats:
    judge_id: str = ""
    items: int = 0  # items with model answers to grade
    reused: int = 0  # already graded by this judge (no call, verdicts read back)
    judged: int = 0  # graded in this call (some of their judge requests may have been cached)
    failed: int = 0  # a judge request failed after retries
    not_answered: int = 0  # no model answer in the journal (model error or never run): cannot be graded
    requests_sent: int = 0
    requests_cached: int = 0
    skipped_tasks: dict[str, str] = field(default_factory=dict)


def open_run(run_dir: Path) -> tuple[Journal, RunConfig, dict]:
    path = Path(run_dir) / JOURNAL_NAME
    if not path.is_file():
        raise GlotbenchError(f"{run_dir}: not a glotbench run directory (no {JOURNAL_NAME})")
    journal = Journal(path)
    raw_cfg = journal.get_meta("config")
    model_settings = journal.get_meta("model_settings")
    if raw_cfg is None or model_settings is None:
        journal.close()
        raise GlotbenchError(f"{path}: the journal has no run config (was the run started by an older glotbench?)")
    return journal, RunConfig.model_validate(raw_cfg), model_settings


def judged_task_runs(cfg: RunConfig, model_settings: dict, stats: RejudgeStats,
                     only: list[str] | None = None) -> list[TaskRun]:
    """The run's judge-graded tasks, with the same fingerprints (so the same journal records)."""
    settings = cfg  # the run config is the run's settings object
    req = RequestSettings.from_values(cfg.model_dump())
    runs = []
    from glotbench.tasks.variants import expand

    for task in expand(resolve(cfg.tasks or [DEFAULT_SUITE]), cfg.prompt_variants):  # each prompt variant too
        if not task.needs_judge or (only and task.name not in only):
            continue
        try:
            samples = task.run_samples(req)
        except DataError as err:
            stats.skipped_tasks[task.name] = str(err)
            continue
        fp = task_fingerprint(task, settings, model_settings)
        runs.append(TaskRun(task=task, mode="generate", fingerprint=fp, samples=samples, settings=req))
    return runs


def _answers(record: SampleRecord | None) -> list[GenResult] | None:
    if record is None or not record.outputs:
        return None
    return [GenResult.from_dict(o) for o in record.outputs]


def _fresh(tr: TaskRun, sample: Sample, base: SampleRecord) -> SampleRecord:
    """A new record for the re-graded item, carrying the answered record's prompt and gold."""
    return SampleRecord.start(task=tr.task.name, sample_id=sample.id, idx=sample.index, run_key=base.run_key,
                              lang=base.lang, prompt=base.prompt, request_keys=base.request_keys, gold=base.gold,
                              metadata=base.metadata, mode=base.mode)


def _judged_record(tr: TaskRun, sample: Sample, base: SampleRecord, outputs: list[GenResult], verdicts: list[dict],
                   judge_id: str) -> SampleRecord:
    rec = _fresh(tr, sample, base)
    views = [_output_view(o) for o in outputs]
    try:
        scored = tr.task.score_judged(sample, outputs, verdicts)
    except Exception as err:
        return rec.failed(f"scoring failed: {type(err).__name__}: {err}", outputs=views)
    return rec.scored(outputs=views, extracted=scored.extracted, rule=None, pred=scored.pred, values=scored.values,
                      detail=scored.detail, judge=judge_id, judgments=verdicts)


async def _grade_all(runs: list[TaskRun], journal: Journal, judge: CachedCaller, stats: RejudgeStats,
                     on_item=None) -> dict[str, list[SampleRecord]]:
    judge_id = judge.model.model_id
    by_task: dict[str, list[SampleRecord]] = {}

    async def one(tr: TaskRun, sample: Sample, record: SampleRecord, outputs: list[GenResult], have: dict[int, dict]):
        if len(have) >= len(outputs) and all(k in have for k in range(len(outputs))):
            verdicts = [have[k] for k in range(len(outputs))]
            stats.reused += 1
        else:
            try:
                verdicts = await judge_sample(tr, sample, outputs, judge, journal)
                stats.judged += 1
            except RequestFailed as err:
                stats.failed += 1
                by_task[tr.task.name].append(_fresh(tr, sample, record).failed(f"judge request failed: {err}"))
                if on_item:
                    on_item()
                return
        by_task[tr.task.name].append(_judged_record(tr, sample, record, outputs, verdicts, judge_id))
        if on_item:
            on_item()

    jobs = []
    for tr in runs:
        by_task[tr.task.name] = []
        records = {r["sample_id"]: SampleRecord.from_json(r) for r in journal.iter_samples(tr.run_key, tr.task.name)}
        done: dict[str, dict[int, dict]] = {}
        for j in journal.iter_judgments(judge_id, tr.task.name):
            done.setdefault(j["sample_id"], {})[j["sample_index"]] = {
                k: v for k, v in j.items() if k not in ("judge_id", "task", "sample_id", "sample_index")}
        for s in tr.samples:
            outputs = _answers(records.get(s.id))
            if outputs is None:
                stats.not_answered += 1
                continue
            stats.items += 1
            jobs.append(one(tr, s, records[s.id], outputs, done.get(s.id, {})))
    await asyncio.gather(*jobs)
    for recs in by_task.values():
        recs.sort(key=lambda r: r.idx)
    return by_task


def rejudge(run_dir: Path, judge_model: Model, *, concurrency: int | None = None, tasks: list[str] | None = None,
            max_retries: int | None = None, on_item=None, wait: bool = False) -> tuple[dict[str, dict], RejudgeStats]:
    """Grade every answered item of the run's judge-graded tasks with ``judge_model``; return
    ``({task: summary}, stats)`` and write the summaries into ``run_dir/results.json``. Holds the
    run lock (``wait``: queue behind its holder) so two graders never send the same requests."""
    run_dir = Path(run_dir)
    if not (run_dir / JOURNAL_NAME).is_file():
        raise GlotbenchError(f"{run_dir}: not a glotbench run directory (no {JOURNAL_NAME})")
    lock = journal_lock(run_dir / JOURNAL_NAME, wait=wait)
    try:
        return _rejudge_locked(run_dir, judge_model, concurrency, tasks, max_retries, on_item)
    finally:
        lock.release()


def _rejudge_locked(run_dir: Path, judge_model: Model, concurrency, tasks, max_retries, on_item):
    journal, cfg, model_settings = open_run(run_dir)
    stats = RejudgeStats(judge_id=judge_model.model_id)
    try:
        runs = judged_task_runs(cfg, model_settings, stats, tasks)
        if not runs:
            why = "; ".join(f"{k}: {v}" for k, v in stats.skipped_tasks.items()) or f"tasks {cfg.tasks}"
            raise GlotbenchError(f"{run_dir}: the run has no judge-graded task to re-grade ({why})")
        attempts = (cfg.max_retries if max_retries is None else max_retries) + 1
        policy = RetryPolicy(max_attempts=max(1, attempts), base_delay=cfg.retry_base_delay, timeout=cfg.timeout)
        caller = CachedCaller(judge_model, journal, role="judge", policy=policy,
                              concurrency=concurrency or judge_model.max_parallel or cfg.concurrency or 8, seed=cfg.seed)

        async def go():
            try:
                return await _grade_all(runs, journal, caller, stats, on_item)
            finally:
                await judge_model.aclose()

        by_task = asyncio.run(go())
        stats.requests_sent, stats.requests_cached = caller.stats.sent, caller.stats.cached
        summaries = summarise(runs, journal, n_boot=cfg.bootstrap, seed=cfg.seed, out_dir=run_dir, records_by_task=by_task)
        write_judge_results(run_dir, judge_model.model_id, summaries, judge_model.settings())
        return summaries, stats
    finally:
        journal.close()


def write_judge_results(run_dir: Path, judge_id: str, summaries: dict[str, dict], judge_settings: dict) -> dict:
    """Merge ``summaries`` into results.json under ``judges[judge_id]`` (the run's own judge is
    copied there too, so every judge's scores sit side by side)."""
    path = Path(run_dir) / "results.json"
    results = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    judges = results.setdefault("judges", {})
    own = (results.get("judge") or {}).get("model_id")
    if own and own not in judges:
        judges[own] = {"settings": results.get("judge"),
                       "tasks": {k: v for k, v in (results.get("tasks") or {}).items() if k in summaries}}
    entry = judges.setdefault(judge_id, {"settings": judge_settings, "tasks": {}})
    entry["settings"] = judge_settings
    entry["tasks"].update(summaries)
    write_json(path, results)
    return results
