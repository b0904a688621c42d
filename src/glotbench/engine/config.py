"""The run configuration: one YAML file (or flags) names the model, tasks and every knob."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from glotbench.errors import GlotbenchError
from glotbench.yamlfile import read_mapping, validate


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
    temperature: float | None = Field(None, ge=0)
    max_tokens: int | None = Field(None, ge=1)
    samples: int = Field(1, ge=1)
    mode: Literal["generate", "loglikelihood"] = "generate"
    split: str | None = None
    prompt_lang: str | None = None
    output: str | None = None
    timeout: float = Field(120.0, gt=0)
    max_retries: int = Field(5, ge=0)
    retry_base_delay: float = Field(1.0, ge=0)
    # fail fast (see docs/footguns.md): Retry-After cap, retry-time budgets, circuit breaker
    max_retry_after: float = Field(120.0, ge=0)
    retry_budget_item: float | None = Field(300.0, gt=0)
    retry_budget_run: float | None = Field(3600.0, gt=0)
    breaker_failures: int = Field(10, ge=0)  # 0: never stop early on connection failures
    journal_flush_wait: float = Field(60.0, ge=0)  # disk full: how long to retry held writes
    bootstrap: int = 1000
    judge: str | None = None
    judge_args: dict[str, Any] = Field(default_factory=dict)
    skip_missing_data: bool = False  # set named tasks whose data is absent aside (Czech-Bench configs) instead of failing
    note: str | None = None  # free text stored in results.json and shown in the report (Czech-Bench's -n)


def load_config(path: Path) -> RunConfig:
    raw = read_mapping(path, "run config", GlotbenchError, empty_ok=True)
    from glotbench.czech.run_config import from_framework, is_framework_config

    if is_framework_config(raw):  # Czech-Bench's eval_config.yml shape
        raw = from_framework(raw, str(path))
    if isinstance(raw.get("tasks"), str):
        raw["tasks"] = [raw["tasks"]]
    if isinstance(raw.get("suites"), (list, str)):  # "suites:" is accepted as a synonym
        extra = raw.pop("suites")
        raw["tasks"] = list(raw.get("tasks") or []) + ([extra] if isinstance(extra, str) else list(extra))
    return validate(RunConfig, raw, path, GlotbenchError)
