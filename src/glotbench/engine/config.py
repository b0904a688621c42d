"""The run configuration: one YAML file (or flags) names the model, tasks and every knob."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from glotbench.errors import GlotbenchError


class RunConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    model: str = "embedded"
    base_url: str | None = None
    api_key_env: str | None = None
    model_args: dict[str, Any] = Field(default_factory=dict)
    tasks: list[str] = Field(default_factory=list)
    limit: int | None = None
    seed: int = 1234
    num_fewshot: int | None = None
    concurrency: int | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    samples: int = 1
    mode: Literal["generate", "loglikelihood"] = "generate"
    split: str | None = None
    prompt_lang: str | None = None
    output: str | None = None
    timeout: float = 120.0
    max_retries: int = 5
    retry_base_delay: float = 1.0
    bootstrap: int = 1000
    judge: str | None = None
    judge_args: dict[str, Any] = Field(default_factory=dict)


def load_config(path: Path) -> RunConfig:
    try:
        raw = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    except OSError as err:
        raise GlotbenchError(f"{path}: cannot read config: {err.strerror}") from None
    except yaml.YAMLError as err:
        raise GlotbenchError(f"{path}: invalid YAML: {str(err).splitlines()[0]}") from None
    if not isinstance(raw, dict):
        raise GlotbenchError(f"{path}: a run config must be a YAML mapping")
    if isinstance(raw.get("tasks"), str):
        raw["tasks"] = [raw["tasks"]]
    if isinstance(raw.get("suites"), (list, str)):  # "suites:" is accepted as a synonym
        extra = raw.pop("suites")
        raw["tasks"] = list(raw.get("tasks") or []) + ([extra] if isinstance(extra, str) else list(extra))
    try:
        return RunConfig.model_validate(raw)
    except ValidationError as err:
        first = err.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        msg = "unknown field" if first["type"] == "extra_forbidden" else first["msg"]
        raise GlotbenchError(f"{path}: field '{loc}': {msg}") from None
