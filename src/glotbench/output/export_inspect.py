"""``glotbench export RUN --format inspect``: Inspect AI eval logs, so ``inspect view`` can browse a run.

Written through the ``inspect-ai`` package's own log API (``inspect_ai.log``: ``EvalLog``,
``EvalSpec``, ``EvalSample``, ``EvalResults``, ``write_eval_log``), one ``.eval`` file per task (an
Inspect log holds one task). Mapping:

* spec: ``task`` = the glotbench task, ``task_version``, ``model`` = ``glotbench/<model_id>``,
  ``run_id`` = the run fingerprint, ``eval_id`` = the task's fingerprint id, ``dataset`` (name,
  size), ``config.limit``, ``metadata`` = glotbench's settings and model settings;
* each item is an ``EvalSample`` (``id``, ``epoch`` 1, ``input`` = the prompt (chat messages as
  Inspect chat messages), ``target`` = the gold answer, ``output`` = the first answer (for
  loglikelihood items: the per-option log-probabilities as text), ``scores["glotbench"]`` = a
  ``Score`` whose value is the per-item values dict, whose answer is the model's own text (Inspect's
  ANSWER column) and whose metadata holds the parsed prediction; ``messages`` = the prompt's
  messages and the model's answer; a failed item carries ``error``);
* ``stats``: the run's start and end (its sessions), so Inspect shows a real duration;
* ``results.scores``: one ``EvalScore`` named ``glotbench`` with one ``EvalMetric`` per task metric,
  the value as glotbench computed it and its 95% interval in the metric's ``metadata``
  (``ci95_low`` / ``ci95_high``): Inspect recomputes nothing.

``inspect-ai`` is the optional extra ``inspect``; it is imported only by this exporter.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
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


def _sample(rec: SampleRecord, model: str):
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
    sample = EvalSample(
        id=rec.id, epoch=1, input=_messages(rec.prompt or ""),
        target=str(rec.gold) if rec.gold is not None else "",
        output=ModelOutput.from_content(model, text), messages=_conversation(rec.prompt or "", text),
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


def build_logs(run_dir: Path, journal: Any = None) -> list:
    """One ``EvalLog`` per task of the run."""
    try:
        from inspect_ai.log import (EvalConfig, EvalDataset, EvalLog, EvalMetric, EvalResults, EvalScore, EvalSpec,
                                    EvalStats)
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
        logs.append(EvalLog(status="success", eval=spec, samples=[_sample(r, model) for r in recs],
                            stats=EvalStats(started_at=started, completed_at=completed),
                            results=EvalResults(total_samples=t.get("n_items", len(recs)),
                                                completed_samples=t.get("n_scored", 0), scores=scores)))
    return logs


def write_inspect(run_dir: Path, out_dir: Path, journal: Any = None) -> list[Path]:
    """Write ``<task>.eval`` per task into ``out_dir``; return the paths."""
    from inspect_ai.log import write_eval_log

    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for log in build_logs(run_dir, journal):
        path = out_dir / f"{log.eval.task}.eval"
        write_eval_log(log, location=str(path), format="eval")
        written.append(path)
    return written
