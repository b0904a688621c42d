"""Sharding options checked before anything is loaded or sent (docs/sharding.md): an option that
would be ignored, or an executor whose optional extra (Ray, submitit) is not installed, is one line."""

from __future__ import annotations

import shutil

from glotbench.errors import GlotbenchError

EXTRAS = {"ray": "Ray", "slurm": "submitit"}  # executor -> the optional package it needs


def check_settings(cfg) -> None:
    """Sharding options that would be ignored are refused on one line (an --executor without
    --shards, --ray-address without --executor ray, ...); then :func:`check_available`."""
    given = [flag for flag, value in (("--ray-address", cfg.ray_address), ("--ray-args", cfg.ray_args),
                                      ("--slurm-args", cfg.slurm_args)) if value]
    if cfg.executor != "local":
        given.insert(0, f"--executor {cfg.executor}")
    if not cfg.shards:
        if given:
            raise GlotbenchError(f"{', '.join(given)} appl{'ies' if len(given) == 1 else 'y'} to sharded runs: "
                                 "add --shards N (docs/sharding.md)")
        return
    wrong = [f for f in given if (f.startswith("--ray") and cfg.executor != "ray")
             or (f.startswith("--slurm") and cfg.executor != "slurm")]
    if wrong:
        raise GlotbenchError(f"{', '.join(wrong)} given with --executor {cfg.executor}: it would be ignored "
                             f"(--ray-* go with --executor ray, --slurm-args with --executor slurm)")
    check_available(cfg)


def check_available(cfg) -> None:
    """One line (GlotbenchError, exit 2) when the executor cannot run here, before any model loads."""
    executor = cfg.executor
    if executor not in EXTRAS:
        return
    name = EXTRAS[executor]
    try:
        if executor == "ray":
            import ray  # noqa: F401
        else:
            import submitit  # noqa: F401
    except ImportError:
        raise GlotbenchError(f"--executor {executor} needs {name}, which is not installed: "
                             f"pip install 'glotbench[{executor}]'") from None
    if executor == "slurm" and _slurm_cluster(cfg) == "slurm" and shutil.which("sbatch") is None:
        raise GlotbenchError("--executor slurm: sbatch is not on PATH (not a Slurm login node?); "
                             "--slurm-args cluster=local runs the job array on this machine")


def _slurm_cluster(cfg) -> str:
    return str((cfg.slurm_args or {}).get("cluster", "slurm"))
