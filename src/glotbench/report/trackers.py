"""``--log-to mlflow[:URI]`` and ``--log-to wandb[:PROJECT]`` (repeatable): a finished run's settings,
fingerprint, metrics with intervals and its files, logged to an experiment tracker.

What is logged, where, and the footguns (stores, environment): docs/trackers.md. The packages are
optional extras (``mlflow``, ``wandb``) imported only here; :func:`check_trackers` runs before the
model loads, so a missing one is one line naming the extra, exit 2, before any model call.
"""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path
from typing import Any

from glotbench.errors import GlotbenchError

KNOWN = {"mlflow": ("mlflow", "mlflow"), "wandb": ("wandb", "wandb")}  # tracker -> (module, extra)


def parse(spec: str) -> tuple[str, str | None]:
    kind, _, arg = spec.partition(":")
    kind = kind.strip().lower()
    if kind not in KNOWN:
        raise GlotbenchError(f"--log-to {spec!r}: unknown tracker (known: mlflow[:URI], wandb[:PROJECT])")
    return kind, (arg.strip() or None)


def check_trackers(specs: list[str]) -> None:
    """Every tracker named can be imported: one line naming the extra otherwise (before any model call)."""
    for spec in specs:
        kind, _ = parse(spec)
        module, extra = KNOWN[kind]
        if importlib.util.find_spec(module) is None:
            raise GlotbenchError(f"--log-to {kind} needs the {module} package: pip install 'glotbench[{extra}]'")


def _flat(prefix: str, obj: Any, out: dict[str, str]) -> None:
    if isinstance(obj, dict):
        for k, v in obj.items():
            _flat(f"{prefix}.{k}" if prefix else str(k), v, out)
    elif obj is not None:
        out[prefix] = obj if isinstance(obj, str) else json.dumps(obj, ensure_ascii=False, default=str)


def params_of(results: dict) -> dict[str, str]:
    out: dict[str, str] = {}
    _flat("settings", results.get("settings") or {}, out)
    _flat("model", results.get("model") or {}, out)
    out["tasks"] = ",".join(results.get("tasks") or {})
    out["glotbench_version"] = str(results.get("glotbench_version"))
    return {k: v[:500] for k, v in out.items()}


def metrics_of(results: dict) -> dict[str, float]:
    out: dict[str, float] = {}
    for task, t in (results.get("tasks") or {}).items():
        for m, v in (t.get("metrics") or {}).items():
            value = v.get("value") if isinstance(v, dict) else v
            if isinstance(value, (int, float)) and math.isfinite(value):
                out[f"{task}/{m}"] = float(value)
            ci = v.get("ci95") if isinstance(v, dict) else None
            if ci and ci[0] is not None and ci[1] is not None:
                out[f"{task}/{m}_ci_low"], out[f"{task}/{m}_ci_high"] = float(ci[0]), float(ci[1])
        out[f"{task}/n_scored"] = float(t.get("n_scored", 0))
        out[f"{task}/n_errors"] = float(t.get("n_errors", 0))
    return out


def tags_of(results: dict, out_dir: Path) -> dict[str, str]:
    return {"glotbench.fingerprint": str(results.get("fingerprint")),
            "glotbench.model_id": str((results.get("model") or {}).get("model_id")),
            "glotbench.run_dir": str(Path(out_dir).resolve())}


def artifacts_of(out_dir: Path) -> list[Path]:
    """results.json, samples.jsonl and a fresh report.html (skipped with a note if the report fails)."""
    files = [p for p in (out_dir / "results.json", out_dir / "samples.jsonl") if p.is_file()]
    try:
        from glotbench.report.html import write_report

        files.append(write_report([out_dir], out_dir / "report.html"))
    except Exception:  # noqa: BLE001 - a report problem must not lose the logged metrics
        pass
    return files


def log_mlflow(uri: str | None, results: dict, out_dir: Path) -> str:
    from mlflow.entities import Metric, Param, RunTag
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    exp = client.get_experiment_by_name("glotbench")
    exp_id = exp.experiment_id if exp else client.create_experiment("glotbench")
    model_id = (results.get("model") or {}).get("model_id") or "model"
    run = client.create_run(exp_id, run_name=f"{model_id} {results.get('fingerprint')}")
    rid = run.info.run_id
    ts = int(1000 * Path(out_dir, "results.json").stat().st_mtime)
    params = [Param(k, v) for k, v in params_of(results).items()]
    metrics = [Metric(k, v, ts, 0) for k, v in metrics_of(results).items()]
    tags = [RunTag(k, v) for k, v in tags_of(results, out_dir).items()]
    for i in range(0, max(len(params), len(metrics), 1), 100):  # MLflow's batch limit is 100 params
        client.log_batch(rid, metrics=metrics[i:i + 100], params=params[i:i + 100], tags=tags if i == 0 else [])
    for path in artifacts_of(out_dir):
        client.log_artifact(rid, str(path))
    client.set_terminated(rid)
    return f"mlflow run {rid} ({client.tracking_uri})"


def log_wandb(project: str | None, results: dict, out_dir: Path) -> str:
    import os

    import wandb

    model_id = (results.get("model") or {}).get("model_id") or "model"
    run = wandb.init(project=project or os.environ.get("WANDB_PROJECT") or "glotbench",
                     name=f"{model_id} {results.get('fingerprint')}", config=params_of(results),
                     tags=[f"fingerprint:{results.get('fingerprint')}"], reinit="create_new")
    try:
        for k, v in tags_of(results, out_dir).items():
            run.summary[k] = v
        run.log(metrics_of(results))
        art = wandb.Artifact(f"glotbench-{results.get('fingerprint')}", type="glotbench-run")
        for path in artifacts_of(out_dir):
            art.add_file(str(path))
        run.log_artifact(art)
        where = run.dir
    finally:
        run.finish()
    return f"wandb run {run.id} ({where})"


def log_all(specs: list[str], results: dict, out_dir: Path) -> list[str]:
    """Log the finished run to every tracker named; return one line per tracker."""
    lines = []
    for spec in specs:
        kind, arg = parse(spec)
        try:
            lines.append(log_mlflow(arg, results, out_dir) if kind == "mlflow" else log_wandb(arg, results, out_dir))
        except Exception as err:  # noqa: BLE001 - the tracker's own message, on one line
            msg = " ".join(str(err).split())[:600]
            raise GlotbenchError(f"--log-to {spec}: {type(err).__name__}: {msg} (the run itself is complete in "
                                 f"{out_dir}; rerun the same command to log it, no model calls)") from None
    return lines
