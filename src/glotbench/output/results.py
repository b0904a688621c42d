"""Write results.json and samples.jsonl for a run directory."""

from __future__ import annotations

import json
import platform
import sys
from importlib import metadata
from pathlib import Path

from glotbench import __version__

TRACKED_PACKAGES = ("glotbench", "llama_cpp_python", "openai", "anthropic", "httpx", "numpy", "scikit-learn", "jinja2", "pydantic")


def package_versions() -> dict[str, str]:
    out = {"python": sys.version.split()[0], "platform": platform.platform()}
    for name in TRACKED_PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    out["glotbench"] = __version__
    return out


def write_json(path: Path, data: dict) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, ensure_ascii=False, indent=2, default=str), encoding="utf-8")
    tmp.replace(path)


def export_samples(journal, path: Path, run_keys: dict[str, str] | None = None) -> int:
    """Write every sample record (one JSON object per line) of ``journal`` (anything with
    ``iter_samples()``: output/ does not depend on the engine). ``run_keys``: task -> run_key filter."""
    n = 0
    tmp = path.with_suffix(path.suffix + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for rec in journal.iter_samples():
            if run_keys is not None and run_keys.get(rec["task"]) != rec["run_key"]:
                continue
            fh.write(json.dumps(rec, ensure_ascii=False, default=str) + "\n")
            n += 1
    tmp.replace(path)
    return n
