"""Where shard jobs run: ``local`` (one subprocess per shard), ``ray`` (one Ray task per shard,
retried by Ray itself) or ``slurm`` (a Slurm job array through submitit). Ray and submitit are
optional extras, imported only here; :func:`glotbench.engine.shards.checks.check_available` says
which one is missing on one line before anything is loaded or sent.

Each returns ``(results, failures)``: shard index -> the worker's counters, and shard index ->
one line saying why the shard still failed after its retries.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

from glotbench.engine.shards.assign import SHARDS_DIR, shard_dir
from glotbench.engine.shards.checks import check_available
from glotbench.engine.shards.worker import run_shard

Say = Callable[[str], None]


def forwarded_env(cfg) -> dict[str, str]:
    """Environment a remote worker needs and may not have: the API key variables the run names
    and glotbench's own variables (data root, injected test faults)."""
    names = {n for n in (cfg.api_key_env, (cfg.judge_args or {}).get("api_key_env"), "OPENAI_API_KEY",
                         "ANTHROPIC_API_KEY") if n}
    return {k: v for k, v in os.environ.items() if k in names or k.startswith("GLOTBENCH_")}


def _last_line(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1][:300] if lines else "no output"


# ---------------------------------------------------------------------------------------- local
def run_local(cfg, jobs: list[dict], say: Say) -> tuple[dict[int, dict], dict[int, str]]:
    """One ``python -m glotbench.engine.shards.worker`` process per shard, at most one per CPU at
    a time; a shard whose process dies is started again up to ``shard_retries`` times."""
    parallel = max(1, min(len(jobs), os.cpu_count() or 1))
    queue = list(jobs)
    tries: dict[int, int] = {}
    running: dict[int, tuple[subprocess.Popen, Path, Path]] = {}
    results: dict[int, dict] = {}
    failures: dict[int, str] = {}
    while queue or running:
        while queue and len(running) < parallel:
            job = queue.pop(0)
            k = job["index"]
            sdir = shard_dir(Path(job["run_dir"]), k)
            sdir.mkdir(parents=True, exist_ok=True)
            (sdir / "job.json").write_text(json.dumps(job), encoding="utf-8")
            out = sdir / "result.json"
            out.unlink(missing_ok=True)
            log = sdir / "worker.log"
            with log.open("ab") as fh:
                proc = subprocess.Popen([sys.executable, "-m", "glotbench.engine.shards.worker", str(sdir / "job.json"),
                                         str(out)], stdout=subprocess.DEVNULL, stderr=fh)
            tries[k] = tries.get(k, 0) + 1
            running[k] = (proc, out, log)
        time.sleep(0.05)
        for k, (proc, out, log) in list(running.items()):
            if proc.poll() is None:
                continue
            del running[k]
            if proc.returncode == 0 and out.is_file():
                results[k] = json.loads(out.read_text(encoding="utf-8"))
                continue
            why = f"exit code {proc.returncode}: {_last_line(log.read_text(encoding='utf-8', errors='replace'))}"
            if tries[k] <= cfg.shard_retries:
                say(f"shard {k} failed ({why}); starting it again (attempt {tries[k] + 1})")
                queue.append(next(j for j in jobs if j["index"] == k))
            else:
                failures[k] = why
    return results, failures


# ------------------------------------------------------------------------------------------ ray
def run_ray(cfg, jobs: list[dict], say: Say) -> tuple[dict[int, dict], dict[int, str]]:
    """One Ray task per shard with ``max_retries`` (a worker that dies is rerun by Ray). Joins
    the cluster at ``--ray-address`` (or the one this process already joined), else starts a
    local one for the run."""
    import ray

    started_here = not ray.is_initialized()
    if started_here:
        ray.init(address=cfg.ray_address, include_dashboard=False, log_to_driver=False)
    try:
        env = forwarded_env(cfg)
        options: dict = {"max_retries": cfg.shard_retries, **cfg.ray_args}
        if env:
            options["runtime_env"] = {"env_vars": env}
        remote = ray.remote(run_shard).options(**options)
        refs = {job["index"]: remote.remote(job) for job in jobs}
        results: dict[int, dict] = {}
        failures: dict[int, str] = {}
        for k, ref in refs.items():
            try:
                results[k] = ray.get(ref)
            except ray.exceptions.RayError as err:
                failures[k] = f"{type(err).__name__}: {_last_line(str(err))}"
        return results, failures
    finally:
        if started_here:
            ray.shutdown()


# ---------------------------------------------------------------------------------------- slurm
def run_slurm(cfg, jobs: list[dict], say: Say) -> tuple[dict[int, dict], dict[int, str]]:
    """A Slurm job array (submitit ``map_array``); failed shards go into a new array, up to
    ``shard_retries`` times. ``--slurm-args cluster=local`` runs the array on this machine
    (submitit's LocalExecutor), e.g. to try a configuration."""
    import submitit

    check_available(cfg)
    params = dict(cfg.slurm_args)
    cluster = str(params.pop("cluster", "slurm"))
    folder = Path(jobs[0]["run_dir"]) / SHARDS_DIR / "submitit"
    executor = submitit.AutoExecutor(folder=str(folder), cluster=cluster)
    params.setdefault("name", "glotbench-shard")
    executor.update_parameters(**params)
    results: dict[int, dict] = {}
    failures: dict[int, str] = {}
    remaining = list(jobs)
    for attempt in range(cfg.shard_retries + 1):
        submitted = executor.map_array(run_shard, remaining)
        say(f"submitted {len(submitted)} shard(s) as job array {submitted[0].job_id.split('_')[0]}"
            if submitted else "nothing to submit")
        retry = []
        for job, sub in zip(remaining, submitted):
            try:
                results[job["index"]] = sub.result()
                failures.pop(job["index"], None)
            except Exception as err:  # noqa: BLE001 - a failed job (killed, crashed): resubmit it
                failures[job["index"]] = f"{type(err).__name__}: {_last_line(str(err))}"
                retry.append(job)
        if not retry:
            break
        if attempt < cfg.shard_retries:
            say(f"{len(retry)} shard(s) failed ({', '.join(str(j['index']) for j in retry)}); submitting them again")
        remaining = retry
    return results, failures


RUNNERS = {"local": run_local, "ray": run_ray, "slurm": run_slurm}
