"""``glotbench export RUN --format lm-eval``: lm-evaluation-harness' results layout.

Checked key by key against lm-eval 0.4.13's own writer (``EvaluationTracker``) and restated, not
copied: ``OUT/<model_name_sanitized>/`` holds ``results_<date>.json`` and ``samples_<task>_<date>.jsonl``
per task (each key, and the ``_stderr`` footgun, in docs/export-formats.md "lm-eval layout"; the
per-sample values: :func:`per_sample_values`).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import statistics
from datetime import datetime
from pathlib import Path
from collections.abc import Callable
from typing import Any

from glotbench.output.run_records import iter_run_samples, read_results
from glotbench.sample_record import SampleRecord

# glotbench metric -> lm-eval's name for the same number (so leaderboards find "acc,none")
LMEVAL_NAMES = {"accuracy": "acc", "accuracy_norm": "acc_norm",  # accuracy_norm is lm-eval's acc_norm rule
                "continuation_perplexity": "perplexity"}  # a loglikelihood task's exp(-mean log-likelihood)
# lm-eval's aggregation of each of its metrics glotbench computes (api/metrics.py; config's metric_list)
LMEVAL_AGGREGATION = {"acc": "mean", "acc_norm": "mean", "perplexity": "perplexity",
                      "word_perplexity": "weighted_perplexity", "byte_perplexity": "weighted_perplexity",
                      "bits_per_byte": "bits_per_byte"}
# what lm-eval's process_results logs per sample for its log-likelihood metrics: the item's log-likelihood,
# with the count a rolling metric divides by (None: the log-likelihood alone)
LL_PER_SAMPLE = {"continuation_perplexity": None, "word_perplexity": "n_words", "byte_perplexity": "n_bytes",
                 "bits_per_byte": "n_bytes"}
# lm-eval gives these no stderr (stderr_for_metric: neither closed-form nor bootstrapped): "N/A"
LMEVAL_NO_STDERR = {"word_perplexity", "byte_perplexity", "bits_per_byte"}
# glotbench per-item value -> the lm-eval metric it feeds
PER_ITEM = {"correct": "acc", "correct_norm": "acc_norm"}
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


def sanitize_model_name(name: str) -> str:
    """lm-eval's rule for the model's folder and ``model_name_sanitized``."""
    return re.sub(r"[\"<>:/|\\?*\[\]]+", "__", name)


def sanitize_list(sub: Any) -> Any:
    """lm-eval's ``sanitize_list``: every leaf of a nested list as a string."""
    if isinstance(sub, (list, tuple)):
        return [sanitize_list(x) for x in sub]
    return str(sub)


def lm_keys(t: dict) -> dict[str, tuple[str, str]]:
    """Each of a task's metrics -> lm-eval's ``(metric, filter name)``, keyed ``<metric>,<filter>`` in
    its results: what the task named itself (results.json ``lm_eval.metrics``: a converted lm-eval task,
    gsm8k's ``exact_match`` of ``strict-match`` and of ``flexible-extract``), else lm-eval's name for the
    metric (:data:`LMEVAL_NAMES`) under lm-eval's filter ``none``."""
    named = (t.get("lm_eval") or {}).get("metrics") or {}
    return {m: (str(named[m][0]), str(named[m][1])) if m in named else (LMEVAL_NAMES.get(m, m), "none")
            for m in (t.get("metrics") or {})}


def filter_names(t: dict) -> list[str]:
    """lm-eval's filters of a task, in order (``["none"]`` for a task without its own)."""
    return list(dict.fromkeys(f for _, f in lm_keys(t).values())) or ["none"]


def _task_results(name: str, t: dict, per_item: dict[tuple[str, str], list[float]]) -> dict:
    out: dict[str, Any] = {"name": name, "alias": name, "sample_len": t.get("n_scored", 0)}
    keys = lm_keys(t)
    for m, v in (t.get("metrics") or {}).items():
        key, filt = keys[m]
        value = v.get("value") if isinstance(v, dict) else v
        out[f"{key},{filt}"] = value
        if (key, filt) in per_item:  # a mean: lm-eval's mean_stderr over the items
            out[f"{key}_stderr,{filt}"] = mean_stderr(per_item[(key, filt)])
        elif key in LMEVAL_NO_STDERR and filt == "none":
            out[f"{key}_stderr,{filt}"] = "N/A"
        else:
            out[f"{key}_stderr,{filt}"] = _stderr(v.get("ci95") if isinstance(v, dict) else None)
    return out


def n_shot(t: dict, cfg: dict) -> int:
    """The task's shot count as results.json recorded it (older runs: the run's override, else 0)."""
    n = t.get("num_fewshot")
    return int(n) if n is not None else int(cfg.get("num_fewshot") or 0)


def output_type(t: dict) -> str:
    """lm-eval's name for how the task was scored: a text's rolling log-likelihood is
    ``loglikelihood_rolling``, a target continuation's (its perplexity) ``loglikelihood``, ranking the
    options by log-likelihood ``multiple_choice``; generating an answer is ``generate_until``."""
    mode = t.get("mode")
    if mode == "loglikelihood_rolling":
        return mode
    if mode == "loglikelihood":
        return "loglikelihood" if "continuation_perplexity" in (t.get("metrics") or {}) else "multiple_choice"
    return "generate_until"


def _aggregation(d: dict, name: str) -> str:
    """How the metric aggregates, in words: ``mean``, or its kind and statistic (``label:mcc``)."""
    kind, stat = d.get("kind"), (d.get("params") or {}).get("stat")
    return "mean" if kind == "mean" else f"{kind}:{stat}" if kind and stat else str(kind or name)


def _value_key(t: dict, m: str) -> str | None:
    """The per-item value a mean metric of the task averages, where lm-eval's stderr is wanted."""
    if m in ((t.get("lm_eval") or {}).get("metrics") or {}):
        return (((t.get("metric_definitions") or {}).get(m) or {}).get("params") or {}).get("key")
    return next((k for k, v in PER_ITEM.items() if v == LMEVAL_NAMES.get(m)), None)


def _higher_is_better(t: dict) -> dict[str, bool]:
    """lm-eval's ``higher_is_better`` of a task: one entry per metric name, whatever its filters."""
    defs = t.get("metric_definitions") or {}
    out: dict[str, bool] = {}
    for m, (key, _) in lm_keys(t).items():
        out.setdefault(key, (defs.get(m) or {}).get("direction", "higher") == "higher")
    return out


def _task_config(name: str, t: dict, results: dict) -> dict:
    defs = t.get("metric_definitions") or {}
    cfg = results.get("config") or {}
    metric_list: dict[str, dict] = {}  # one entry per metric, as lm-eval's config lists it (filters apart)
    for m, (key, _) in lm_keys(t).items():
        agg = LMEVAL_AGGREGATION.get(key) if m in LMEVAL_NAMES or m in LMEVAL_NO_STDERR else None
        metric_list.setdefault(key, {"metric": key, "aggregation": agg or _aggregation(defs.get(m) or {}, m),
                                     "higher_is_better": (defs.get(m) or {}).get("direction", "higher") == "higher"})
    filter_list = (t.get("lm_eval") or {}).get("filter_list")
    return {
        "task": name,
        "output_type": output_type(t),
        "num_fewshot": n_shot(t, cfg),
        "metric_list": list(metric_list.values()),
        **({"filter_list": filter_list} if filter_list else {}),
        "repeats": cfg.get("samples") or 1,
        "metadata": {"version": _version(t.get("version")), "language": t.get("language"),
                     "glotbench_fingerprint": (t.get("fingerprint") or {}).get("id"), "prompt_hash": t.get("prompt_hash")},
    }


def _prompt_text(prompt: Any) -> str:
    if isinstance(prompt, str):
        return prompt
    return json.dumps(prompt, ensure_ascii=False)


def _arguments(rec: SampleRecord, prompt: str, requests: list[dict | None]) -> tuple[dict, Any, Any]:
    """lm-eval's ``arguments``, ``resps`` and ``filtered_resps`` for one item."""
    outputs = rec.output_list
    if rec.mode == "loglikelihood":
        args = {f"gen_args_{i}": {"arg_0": (r or {}).get("context", prompt), "arg_1": (r or {}).get("continuation")}
                for i, r in enumerate(requests or [None] * len(outputs))}
        pairs = [[o.get("logprob"), o.get("is_greedy")] for o in outputs]
        return args, sanitize_list([[p] for p in pairs]), sanitize_list(pairs)
    r0 = next((r for r in requests if r), None) or {}
    gen = {k: r0.get(k) for k in ("max_tokens", "temperature", "top_p", "stop", "seed") if r0.get(k) not in (None, [])}
    gen.update(r0.get("extra") or {})
    args = {"gen_args_0": {"arg_0": prompt, "arg_1": gen}}
    return args, sanitize_list([[o.get("text") for o in outputs]]), sanitize_list([rec.pred])


def per_sample_values(rec: SampleRecord, defs: dict[str, dict]) -> dict[str, Any]:
    """A value under every metric the task lists (lm-eval's WandbLogger and zeno script read
    ``sample[metric]`` for each entry of ``metric_list``): a mean metric's per-item value (its
    ``key``; None for an item not scored); for a corpus metric (mcc, F1, calibration ...) the item's
    ``[gold, prediction]`` pair (both as the run recorded them: labels), as lm-eval's own corpus
    metrics log per sample (``mcc``: ``(gold, pred)``, aggregated over the items)."""
    values = rec.value_map
    out: dict[str, Any] = {}
    for m, d in defs.items():
        name = LMEVAL_NAMES.get(m, m)
        per_item = next((k for k, v in PER_ITEM.items() if v == name), None)
        if m in LL_PER_SAMPLE:  # lm-eval's process_results: the item's log-likelihood (with its count)
            ll, count = (-values["nll"] if values.get("nll") is not None else None), LL_PER_SAMPLE[m]
            out[name] = ll if count is None else None if ll is None else [ll, values.get(count)]
        elif per_item is not None:
            out[name] = values.get(per_item)
        elif (d or {}).get("kind") == "mean" and (d.get("params") or {}).get("key"):
            out[name] = values.get(d["params"]["key"])
        else:
            out[name] = [rec.gold, rec.pred]
    return out


def sample_line(rec: SampleRecord, metric_names: list[str], requests: list[dict | None] | None = None,
                item: tuple[dict, Any] | None = None, defs: dict[str, dict] | None = None,
                lm_filter: tuple[str, dict[str, str]] | None = None) -> dict:
    """One line of lm-eval's samples file. ``lm_filter``: ``(filter name, {metric: lm-eval name})``
    of a task with filters of its own: lm-eval writes one line per item and filter, holding that
    filter's answer (``filtered_resps``) and its values under lm-eval's names (``defs`` are then that
    filter's metrics)."""
    if item is not None:
        doc, target = item
    else:
        doc, target = {"id": rec.sample_id, "gold": rec.gold, "metadata": rec.metadata_map}, rec.gold
    prompt = _prompt_text(rec.prompt)
    arguments, resps, filtered = _arguments(rec, prompt, requests or [])
    line: dict[str, Any] = {
        "doc_id": rec.idx,
        "doc": doc,
        "target": str(target),
        "arguments": arguments,
        "resps": resps,
        "filtered_resps": filtered,
        "filter": "none",
        "metrics": metric_names,
        "doc_hash": _hash(doc),
        "prompt_hash": _hash(prompt),
        "target_hash": _hash(str(target)),
    }
    for k, v in rec.value_map.items():
        line[k] = v
        if k in PER_ITEM:
            line[PER_ITEM[k]] = v
    for k, v in per_sample_values(rec, defs or {}).items():
        line.setdefault(k, v)
    if lm_filter is not None:
        name, renamed = lm_filter
        picked = rec.extracted.get(name, rec.pred) if isinstance(rec.extracted, dict) else rec.pred
        line["filter"], line["filtered_resps"] = name, sanitize_list([picked])
        for m, v in per_sample_values(rec, defs or {}).items():  # this filter's value, under lm-eval's name
            line.pop(m, None)
            line[renamed[m]] = v
    if rec.error:
        line["error"] = rec.error
    return line


def write_lmeval(run_dir: Path, out_dir: Path, date_id: str | None = None, journal: Any = None,
                 items_of: Callable[[str, str | None, bool], dict] | None = None) -> list[Path]:
    """Write lm-eval's results file and one samples file per task into ``out_dir``; return the paths.
    ``items_of(task, split, ranked)`` gives a task's dataset records and lm-eval targets by item index
    (:func:`glotbench.tasks.reread.task_items`); without it the lines hold the run's own fields."""
    results = read_results(run_dir)
    date_id = date_id or datetime.now().isoformat().replace(":", "-")
    tasks = results.get("tasks") or {}
    cfg = results.get("config") or {}
    model = results.get("model") or {}
    run = results.get("run") or {}
    records = list(iter_run_samples(run_dir, results, journal))
    settings = results.get("settings") or {}
    template = None
    if settings.get("chat_template"):
        try:
            template = Path(settings["chat_template"]).read_text(encoding="utf-8")
        except OSError:
            template = None
    # each mean's per-item values (lm-eval's stderr is mean_stderr over them): accuracy from the items'
    # ``correct``, a metric the task named for lm-eval (lm_eval.metrics) from its definition's key
    value_keys = {n: {lm_keys(t)[m]: _value_key(t, m) for m in t.get("metrics") or {}} for n, t in tasks.items()}
    per_item: dict[str, dict[tuple[str, str], list[float]]] = {n: {} for n in tasks}
    for rec in records:
        if rec.is_scored:
            for lm_key, k in value_keys.get(rec.task, {}).items():
                if k is not None and isinstance(v := rec.value_map.get(k), (int, float)):
                    per_item[rec.task].setdefault(lm_key, []).append(float(v))
    doc = {
        "results": {n: _task_results(n, t, per_item.get(n, {})) for n, t in tasks.items()},
        "group_subtasks": {n: [] for n in tasks},
        "configs": {n: _task_config(n, t, results) for n, t in tasks.items()},
        "versions": {n: _version(t.get("version")) for n, t in tasks.items()},
        "n-shot": {n: n_shot(t, cfg) for n, t in tasks.items()},
        "higher_is_better": {n: _higher_is_better(t) for n, t in tasks.items()},
        "n-samples": {n: {"original": t.get("n_dataset", t.get("n_items", 0)), "effective": t.get("n_scored", 0)} for n, t in tasks.items()},
        "config": {
            "model": model.get("backend") or cfg.get("model"),
            "model_args": model,
            "batch_size": cfg.get("concurrency"),
            "device": None,
            "use_cache": str(Path(run_dir) / "journal.sqlite"),
            "limit": cfg.get("limit"),
            "bootstrap_iters": cfg.get("bootstrap"),
            "gen_kwargs": {**{k: cfg.get(k) for k in ("temperature", "max_tokens") if cfg.get(k) is not None},
                           **(cfg.get("gen_kwargs") or {})},
            **({"model_dtype": model["dtype"]} if model.get("dtype") else {}),
            **({"model_revision": model["revision"]} if model.get("revision") else {}),
            "random_seed": cfg.get("seed"),
            "glotbench_settings": results.get("settings"),
        },
        "git_hash": None,
        "date": datetime.now().timestamp(),
        "model_source": "glotbench",
        "model_name": model.get("model_id") or cfg.get("model"),
        "model_name_sanitized": sanitize_model_name(str(model.get("model_id") or cfg.get("model"))),
        "system_instruction": settings.get("system_prompt"),
        "system_instruction_sha": _hash(settings["system_prompt"]) if settings.get("system_prompt") else None,
        "fewshot_as_multiturn": bool(cfg.get("num_fewshot")) and bool(model.get("chat")) or None,
        "chat_template": template,
        "chat_template_sha": _hash(template) if template else None,
        "total_evaluation_time_seconds": str(run.get("elapsed_s")),
        "glotbench": {"fingerprint": results.get("fingerprint"), "version": results.get("glotbench_version"),
                      "ci95": {n: {m: (v.get("ci95") if isinstance(v, dict) else None) for m, v in (t.get("metrics") or {}).items()}
                               for n, t in tasks.items()}},
    }
    lines: dict[str, list[dict]] = {}
    get_request = getattr(journal, "get_request", None)
    items = {n: items_of(n, cfg.get("split"), t.get("mode") == "loglikelihood") if items_of else {}
             for n, t in tasks.items()}
    by_task: dict[str, list[SampleRecord]] = {}
    for rec in records:
        by_task.setdefault(rec.task, []).append(rec)
    for task, recs in by_task.items():
        t = tasks.get(task) or {}
        keys = lm_keys(t)
        all_defs = {m: (t.get("metric_definitions") or {}).get(m) or {} for m in (t.get("metrics") or {})}
        filters = filter_names(t)
        for filt in filters:  # lm-eval: every item under its first filter, then under the next ...
            mine = [m for m in all_defs if keys[m][1] == filt]
            names = list(dict.fromkeys(keys[m][0] for m in mine))
            defs = {m: all_defs[m] for m in mine}
            lm_filter = (filt, {LMEVAL_NAMES.get(m, m): keys[m][0] for m in mine}) if t.get("lm_eval") else None
            for rec in recs:
                reqs = [get_request(k) for k in rec.request_keys or []] if get_request else []
                lines.setdefault(task, []).append(sample_line(rec, names, reqs, items.get(task, {}).get(rec.idx), defs,
                                                              lm_filter))
    # lm-eval: one hash per task over its samples' doc + prompt + target hashes
    doc["task_hashes"] = {t: _hash("".join(x["doc_hash"] + x["prompt_hash"] + x["target_hash"] for x in ls))
                          for t, ls in lines.items()}
    out_dir = out_dir / doc["model_name_sanitized"]  # lm-eval writes OUTPUT_PATH/<model_name_sanitized>/
    out_dir.mkdir(parents=True, exist_ok=True)
    written = [out_dir / f"results_{date_id}.json"]
    written[0].write_text(json.dumps(doc, ensure_ascii=False, indent=2, default=str), encoding="utf-8")
    for task, ls in lines.items():
        path = out_dir / f"samples_{task}_{date_id}.jsonl"
        with path.open("w", encoding="utf-8") as fh:
            for line in ls:
                fh.write(json.dumps(line, ensure_ascii=False, default=str) + "\n")
        written.append(path)
    return written
