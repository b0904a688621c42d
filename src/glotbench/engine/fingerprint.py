"""One reproducibility id per task result: data content + prompt + extractor/scorer + model settings."""

from __future__ import annotations

from glotbench import __version__
from glotbench.models.base import canonical_json, sha256_hex
from glotbench.tasks.task import RunSettings, Task


def task_fingerprint(task: Task, settings: RunSettings, model_settings: dict) -> dict:
    split = settings.split or task.spec.dataset.eval_split
    parts = {
        "data": task.data_fingerprint(split),
        "prompt": task.spec.prompt_hash(),
        "scoring": sha256_hex(canonical_json({
            "task_version": task.spec.version,
            "extractor": task.spec.extractor.model_dump(),
            "scorer": task.spec.scorer,
            **({"scorer_options": task.spec.scorer_options} if task.spec.scorer_options else {}),
            "metrics": task.spec.metrics,
            "glotbench": __version__.rsplit(".", 1)[0],
        }))[:8],
        "model": sha256_hex(canonical_json(model_settings))[:8],
        "settings": sha256_hex(canonical_json({k: v for k, v in settings.to_dict().items()}))[:8],
    }
    parts["id"] = sha256_hex(canonical_json(parts))[:12]
    return parts


def run_fingerprint(task_fps: dict[str, dict]) -> str:
    return sha256_hex(canonical_json({k: v["id"] for k, v in sorted(task_fps.items())}))[:12]
