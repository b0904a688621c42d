"""``glotbench export RUN --format inspect``: Inspect AI eval logs, so ``inspect view`` can browse a run.

Written through the ``inspect-ai`` package's own log API (``inspect_ai.log``), one ``.eval`` file per
task; the mapping of a run onto ``EvalLog`` is in docs/export-formats.md ("Inspect AI logs").
``inspect-ai`` is the optional extra ``inspect``; it is imported only by this exporter.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from collections.abc import Callable
from typing import Any

from glotbench.errors import GlotbenchError
from glotbench.output.run_records import iter_run_samples, read_results
from glotbench.sample_record import SampleRecord

SCORER = "glotbench"


def _messages(prompt: Any):
    from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageUser

    kinds = {"system": ChatMessageSystem, "user": ChatMessageUser, "assistant": ChatMessageAssistant}
    if isinstance(prompt, list) and all(isinstance(m, dict) and m.get("role") in kinds for m in prompt):
        return [kinds[m["role"]](content=str(m.get("content") or "")) for m in prompt]
    return prompt if isinstance(prompt, str) else json.dumps(prompt, ensure_ascii=False)


def _conversation(prompt: Any, answer: str) -> list:
    """``EvalSample.messages``: the prompt's messages (a plain prompt as one user message), then the
    model's answer as the assistant's (what ``inspect view``'s Messages tab shows)."""
    from inspect_ai.model import ChatMessageAssistant, ChatMessageUser

    msgs = _messages(prompt)
    if isinstance(msgs, str):
        msgs = [ChatMessageUser(content=msgs)]
    return [*msgs, ChatMessageAssistant(content=answer)]


def _usage(outputs: list[dict]):
    """The item's token counts as an Inspect ``ModelUsage`` (None when the backend reported none)."""
    from inspect_ai.model import ModelUsage

    ins = [o.get("input_tokens") for o in outputs if isinstance(o.get("input_tokens"), int)]
    outs = [o.get("output_tokens") for o in outputs if isinstance(o.get("output_tokens"), int)]
    if not ins and not outs:
        return None
    return ModelUsage(input_tokens=sum(ins), output_tokens=sum(outs), total_tokens=sum(ins) + sum(outs))


def _latencies(rec: SampleRecord, journal: Any) -> list[float]:
    """The journaled latency (seconds) of each of the item's requests that has one."""
    if journal is None or not rec.request_keys:
        return []
    out = []
    for key in rec.request_keys:
        row = journal.conn.execute("SELECT latency_s FROM responses WHERE key=?", (key,)).fetchone()
        if row and isinstance(row[0], (int, float)):
            out.append(float(row[0]))
    return out


def sample_ids(recs: list[SampleRecord]) -> list[int | str]:
    """The items' ids for Inspect: integers when every id of the task is a plain non-negative integer
    (its canonical text: "7", not "07"), so Inspect's order is numeric; the ids as text otherwise."""
    ids = [str(r.id) for r in recs]
    if ids and all(i.isdigit() and str(int(i)) == i for i in ids):
        return [int(i) for i in ids]
    return ids


def _sample(rec: SampleRecord, model: str, sid: int | str | None = None, choices: list[str] | None = None,
            journal: Any = None):
    from inspect_ai.log import EvalError, EvalSample
    from inspect_ai.model import ModelOutput
    from inspect_ai.scorer import Score

    outputs = rec.output_list
    if rec.mode == "loglikelihood":
        text = json.dumps([o.get("logprob") for o in outputs])
    else:
        text = (outputs[0].get("text") if outputs else None) or ""
    own = {"idx": rec.idx, "status": rec.status, "mode": rec.mode, "extracted": rec.extracted,
           "extraction_rule": rec.extraction_rule, "detail": rec.detail, "lang": rec.lang}
    output = ModelOutput.from_content(model, text)
    usage = _usage(outputs)
    times = _latencies(rec, journal)
    if usage is not None:
        output.usage = usage
    if times:
        output.time = times[0]
    sample = EvalSample(
        id=rec.id if sid is None else sid, epoch=1, input=_messages(rec.prompt or ""), choices=choices or None,
        target=str(rec.gold) if rec.gold is not None else "",
        output=output, messages=_conversation(rec.prompt or "", text),
        model_usage={model: usage} if usage is not None else {},
        total_time=sum(times) if times else None, working_time=sum(times) if times else None,
        metadata={"glotbench": {k: v for k, v in own.items() if v is not None}, **rec.metadata_map})
    if rec.is_scored:
        values = {k: float(v) for k, v in rec.value_map.items() if isinstance(v, (int, float))}
        # answer: the model's own text (Inspect's ANSWER column); the parsed prediction is in metadata
        sample.scores = {SCORER: Score(value=values, answer=text, metadata={
            "pred": rec.pred, "extracted": rec.extracted, "extraction_rule": rec.extraction_rule})}
    elif rec.error:
        sample.error = EvalError(message=str(rec.error), traceback="", traceback_ansi="")
    return sample


def _run_span(results: dict, fallback: str) -> tuple[str, str]:
    """When the run started and ended (its first session's start; the last session's start plus its
    elapsed time), ISO 8601 in UTC: Inspect shows the log's duration from these. An old results.json
    without sessions: its elapsed time, ending when results.json was written."""
    run = results.get("run") or {}
    sessions = [x for x in run.get("sessions") or [] if isinstance(x.get("started"), (int, float))]
    iso = lambda t: datetime.fromtimestamp(t, timezone.utc).isoformat()  # noqa: E731
    if sessions:
        last = sessions[-1]
        return iso(sessions[0]["started"]), iso(last["started"] + float(last.get("elapsed_s") or 0))
    end = datetime.fromisoformat(fallback).timestamp()
    return iso(end - float(run.get("elapsed_s") or 0)), fallback


def build_logs(run_dir: Path, journal: Any = None,
               choices_of: Callable[[str, str | None], dict] | None = None) -> list:
    """One ``EvalLog`` per task of the run; ``choices_of(task, split)`` gives a task's answer options
    by item index, read again from its data (:func:`glotbench.tasks.reread.task_choices`; without it,
    or where it has none, the logs hold the run's own records only)."""
    try:
        from inspect_ai.log import (EvalConfig, EvalDataset, EvalLog, EvalMetric, EvalResults, EvalScore, EvalSpec,
                                    EvalStats)
        from inspect_ai.model import ModelUsage
    except ImportError:
        raise GlotbenchError("--format inspect needs the inspect-ai package: pip install 'glotbench[inspect]'") from None
    results = read_results(run_dir)
    cfg = results.get("config") or {}
    model_settings = results.get("model") or {}
    model = f"glotbench/{model_settings.get('model_id') or cfg.get('model')}"
    created = datetime.fromtimestamp(Path(run_dir, "results.json").stat().st_mtime, timezone.utc).isoformat()
    started, completed = _run_span(results, created)
    by_task: dict[str, list[dict]] = {}
    for rec in iter_run_samples(run_dir, results, journal):
        by_task.setdefault(rec.task, []).append(rec)
    logs = []
    for name, t in (results.get("tasks") or {}).items():
        recs = sorted(by_task.get(name, []), key=lambda r: (r.idx is None, r.idx or 0))
        metrics = {}
        for m, v in (t.get("metrics") or {}).items():
            value = v.get("value") if isinstance(v, dict) else v
            ci = (v.get("ci95") if isinstance(v, dict) else None) or [None, None]
            metrics[m] = EvalMetric(name=m, value=float("nan") if value is None else float(value),
                                    metadata={"ci95_low": ci[0], "ci95_high": ci[1]})
        spec = EvalSpec(
            created=created, task=name, task_version=str(t.get("version") or 0), run_id=results.get("fingerprint"),
            eval_id=(t.get("fingerprint") or {}).get("id"), model=model,
            dataset=EvalDataset(name=name, samples=t.get("n_items", len(recs))),
            config=EvalConfig(limit=cfg.get("limit"), epochs=cfg.get("samples") or 1),
            metadata={"glotbench_version": results.get("glotbench_version"), "settings": results.get("settings"),
                      "model": model_settings, "language": t.get("language"), "fingerprint": t.get("fingerprint")})
        scores = [EvalScore(name=SCORER, scorer=SCORER, scored_samples=t.get("n_scored", 0),
                            unscored_samples=t.get("n_errors", 0), metrics=metrics)]
        choices = choices_of(name, cfg.get("split")) if choices_of else {}
        samples = [_sample(r, model, sid, choices.get(r.idx), journal) for r, sid in zip(recs, sample_ids(recs))]
        used = [u for x in samples for u in x.model_usage.values()]
        usage = {model: ModelUsage(input_tokens=sum(u.input_tokens for u in used),
                                   output_tokens=sum(u.output_tokens for u in used),
                                   total_tokens=sum(u.total_tokens for u in used))} if used else {}
        logs.append(EvalLog(status="success", eval=spec, samples=samples,
                            stats=EvalStats(started_at=started, completed_at=completed, model_usage=usage),
                            results=EvalResults(total_samples=t.get("n_items", len(recs)),
                                                completed_samples=t.get("n_scored", 0), scores=scores)))
    return logs


def write_inspect(run_dir: Path, out_dir: Path, journal: Any = None,
                  choices_of: Callable[[str, str | None], dict] | None = None) -> list[Path]:
    """Write ``<task>.eval`` per task into ``out_dir``; return the paths."""
    from inspect_ai.log import write_eval_log

    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for log in build_logs(run_dir, journal, choices_of):
        path = out_dir / f"{log.eval.task}.eval"
        write_eval_log(log, location=str(path), format="eval")
        written.append(path)
    return written
