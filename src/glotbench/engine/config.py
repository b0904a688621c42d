"""The run configuration: one YAML file (or flags) names the model, tasks and every knob."""

from __future__ import annotations

from pathlib import Path

from glotbench.errors import GlotbenchError
from glotbench.settings import RunSettings
from glotbench.yamlfile import read_mapping, validate

__all__ = ["RunConfig", "RunSettings", "load_config"]


# The run config is the run's one settings object (fields, flags and help: glotbench.settings).
RunConfig = RunSettings


def load_config(path: Path) -> RunConfig:
    raw = read_mapping(path, "run config", GlotbenchError, empty_ok=True)
    from glotbench.config_readers import translate

    raw = translate(raw, str(path))  # a benchmark's own config layout (bench.config_reader)
    if isinstance(raw.get("tasks"), str):
        raw["tasks"] = [raw["tasks"]]
    if isinstance(raw.get("suites"), (list, str)):  # "suites:" is accepted as a synonym
        extra = raw.pop("suites")
        raw["tasks"] = list(raw.get("tasks") or []) + ([extra] if isinstance(extra, str) else list(extra))
    return validate(RunConfig, raw, path, GlotbenchError)
