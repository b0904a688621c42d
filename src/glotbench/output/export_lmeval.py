"""``glotbench export RUN --format lm-eval``: lm-evaluation-harness' results layout.

Writes ``results_<date>.json`` (``results`` with ``"<metric>,none"`` and ``"<metric>_stderr,none"``,
``configs``, ``versions``, ``n-shot``, ``higher_is_better``, ``n-samples``, ``config`` with the model)
and ``samples_<task>_<date>.jsonl`` per task (``doc_id``, ``doc``, ``target``, ``arguments``, ``resps``,
``filtered_resps``, ``filter``, ``metrics``, the hashes and the per-item metric values), as lm-eval's
evaluation tracker lays them out, so tools built on lm-eval output (leaderboards) can read a glotbench
run. The layout is restated from lm-eval's documentation and output files, not copied.

``acc_stderr,none`` is computed as lm-eval computes a mean's stderr (sample standard deviation of the
per-item values / sqrt(n), over the scored items). Footgun (docs/export-formats.md): for other metrics
glotbench has bootstrap 95% intervals, not standard errors; their ``_stderr`` is the half-width / 1.96.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import statistics
from datetime import datetime
from pathlib import Path
from typing import Any

from glotbench.output.run_records import iter_run_samples, read_results
from glotbench.sample_record import SampleRecord

# glotbench metric -> lm-eval's name for the same number (so leaderboards find "acc,none")
LMEVAL_NAMES = {"accuracy": "acc"}
# glotbench per-item value -> the lm-eval metric it feeds
PER_ITEM = {"correct": "acc"}
Z95 = 1.959964


def _hash(obj: Any) -> str:
    text = obj if isinstance(obj, str) else json.dumps(obj, indent=2, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _version(v: Any) -> Any:
    try:
        return float(v)
    except (TypeError, ValueError):
        return v


def _stderr(ci: Any) -> Any:
    if not ci or ci[0] is None or ci[1] is None:
        return "N/A"
    return (float(ci[1]) - float(ci[0])) / (2 * Z95)


def mean_stderr(values: list[float]) -> Any:
    """lm-eval's stderr of a mean: sample standard deviation (n - 1) / sqrt(n)."""
    if len(values) < 2:
        return "N/A"
    return statistics.stdev(values) / math.sqrt(len(values))


def _task_results(name: str, t: dict, per_item: dict[str, list[float]]) -> dict:
    out: dict[str, Any] = {"alias": name}
    for m, v in (t.get("metrics") or {}).items():
        key = LMEVAL_NAMES.get(m, m)
        value = v.get("value") if isinstance(v, dict) else v
        out[f"{key},none"] = value
        if key in per_item:
            out[f"{key}_stderr,none"] = mean_stderr(per_item[key])
        else:
            out[f"{key}_stderr,none"] = _stderr(v.get("ci95") if isinstance(v, dict) else None)
    return out


def _task_config(name: str, t: dict, results: dict) -> dict:
    defs = t.get("metric_definitions") or {}
    cfg = results.get("config") or {}
    return {
        "task": name,
        "output_type": "loglikelihood" if t.get("mode") == "loglikelihood" else "generate_until",
        "num_fewshot": cfg.get("num_fewshot") or 0,
        "metric_list": [{"metric": LMEVAL_NAMES.get(m, m), "aggregation": "mean" if m in LMEVAL_NAMES else (defs.get(m) or {}).get("function", m),
                         "higher_is_better": (defs.get(m) or {}).get("direction", "higher") == "higher"}
                        for m in (t.get("metrics") or {})],
        "repeats": cfg.get("samples") or 1,
        "metadata": {"version": _version(t.get("version")), "language": t.get("language"),
                     "glotbench_fingerprint": (t.get("fingerprint") or {}).get("id"), "prompt_hash": t.get("prompt_hash")},
    }


def _prompt_text(prompt: Any) -> str:
    if isinstance(prompt, str):
        return prompt
    return json.dumps(prompt, ensure_ascii=False)


def sample_line(rec: SampleRecord, metric_names: list[str]) -> dict:
    outputs = rec.output_list
    doc = {"id": rec.sample_id, "gold": rec.gold, "metadata": rec.metadata_map}
    prompt = _prompt_text(rec.prompt)
    line: dict[str, Any] = {
        "doc_id": rec.idx,
        "doc": doc,
        "target": rec.gold,
        "arguments": {"gen_args_0": {"arg_0": prompt, "arg_1": {"mode": rec.mode}}},
        "resps": [[o.get("text") for o in outputs]],
        "filtered_resps": [rec.pred],
        "filter": "none",
        "metrics": metric_names,
        "doc_hash": _hash(doc),
        "prompt_hash": _hash(prompt),
        "target_hash": _hash(str(rec.gold)),
    }
    for k, v in rec.value_map.items():
        line[k] = v
        if k in PER_ITEM:
            line[PER_ITEM[k]] = v
    if rec.error:
        line["error"] = rec.error
    return line


def write_lmeval(run_dir: Path, out_dir: Path, date_id: str | None = None, journal: Any = None) -> list[Path]:
    """Write lm-eval's results file and one samples file per task into ``out_dir``; return the paths."""
    results = read_results(run_dir)
    date_id = date_id or datetime.now().isoformat().replace(":", "-")
    tasks = results.get("tasks") or {}
    cfg = results.get("config") or {}
    model = results.get("model") or {}
    run = results.get("run") or {}
    records = list(iter_run_samples(run_dir, results, journal))
    per_item: dict[str, dict[str, list[float]]] = {n: {} for n in tasks}
    for rec in records:
        if rec.is_scored:
            for k, v in rec.value_map.items():
                if k in PER_ITEM and isinstance(v, (int, float)):
                    per_item.setdefault(rec.task, {}).setdefault(PER_ITEM[k], []).append(float(v))
    doc = {
        "results": {n: _task_results(n, t, per_item.get(n, {})) for n, t in tasks.items()},
        "group_subtasks": {n: [] for n in tasks},
        "configs": {n: _task_config(n, t, results) for n, t in tasks.items()},
        "versions": {n: _version(t.get("version")) for n, t in tasks.items()},
        "n-shot": {n: cfg.get("num_fewshot") or 0 for n in tasks},
        "higher_is_better": {n: {LMEVAL_NAMES.get(m, m): ((t.get("metric_definitions") or {}).get(m) or {}).get(
            "direction", "higher") == "higher" for m in (t.get("metrics") or {})} for n, t in tasks.items()},
        "n-samples": {n: {"original": t.get("n_items", 0), "effective": t.get("n_scored", 0)} for n, t in tasks.items()},
        "config": {
            "model": model.get("backend") or cfg.get("model"),
            "model_args": model,
            "batch_size": cfg.get("concurrency"),
            "device": None,
            "use_cache": str(Path(run_dir) / "journal.sqlite"),
            "limit": cfg.get("limit"),
            "bootstrap_iters": cfg.get("bootstrap"),
            "gen_kwargs": {k: cfg.get(k) for k in ("temperature", "max_tokens") if cfg.get(k) is not None},
            "random_seed": cfg.get("seed"),
            "glotbench_settings": results.get("settings"),
        },
        "git_hash": None,
        "date": datetime.now().timestamp(),
        "model_source": "glotbench",
        "model_name": model.get("model_id") or cfg.get("model"),
        "model_name_sanitized": re.sub(r"[^A-Za-z0-9._-]+", "__", str(model.get("model_id") or cfg.get("model"))),
        "total_evaluation_time_seconds": str(run.get("elapsed_s")),
        "glotbench": {"fingerprint": results.get("fingerprint"), "version": results.get("glotbench_version"),
                      "ci95": {n: {m: (v.get("ci95") if isinstance(v, dict) else None) for m, v in (t.get("metrics") or {}).items()}
                               for n, t in tasks.items()}},
    }
    out_dir.mkdir(parents=True, exist_ok=True)
    written = [out_dir / f"results_{date_id}.json"]
    written[0].write_text(json.dumps(doc, ensure_ascii=False, indent=2, default=str), encoding="utf-8")
    handles: dict[str, Any] = {}
    try:
        for rec in records:
            task = rec.task
            if task not in handles:
                path = out_dir / f"samples_{task}_{date_id}.jsonl"
                handles[task] = path.open("w", encoding="utf-8")
                written.append(path)
            names = [LMEVAL_NAMES.get(m, m) for m in ((tasks.get(task) or {}).get("metrics") or {})]
            handles[task].write(json.dumps(sample_line(rec, names), ensure_ascii=False, default=str) + "\n")
    finally:
        for fh in handles.values():
            fh.close()
    return written
