"""The one settings object of a run: model, sampling, few-shot, limits, concurrency, output, judge.

The YAML run config (``--config``), the ``glotbench run`` flags and the engine all use
:class:`RunSettings`. Each field declares its own command-line flag (``cli=``) and help text, so
**adding a setting is one field here** with its flag; ``glotbench run`` builds its options from
these fields (:func:`glotbench.cli.option_groups.parameters`), with the default in the help text.
The model, judge and calling flags every model-calling command takes are RunSettings' bases
:class:`ModelOptions`, :class:`JudgeOptions` and :class:`CallOptions` (docs/cli-options.md). Fields marked ``request=True`` change the requests a run sends: they go into
the fingerprint, the default output directory and results.json ``settings``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from glotbench.errors import GlotbenchError

# The request-shaping settings that fingerprints always held; others join only when set, so an
# existing run directory keeps its fingerprint (and resumes) when a setting is added.
_FINGERPRINT_ALWAYS = ("limit", "seed", "num_fewshot", "temperature", "max_tokens", "samples", "mode", "split", "prompt_lang")


def setting(default: Any = None, help: str = "", *flags: str, request: bool = False, factory: Any = None,
            aliases: tuple[str, ...] = (), rare: bool = False, **constraints: Any) -> Any:
    """A settings field: its default, help text, command-line flags (``aliases``: old spellings still
    accepted, not shown; ``rare``: a knob few runs change, its flag accepted but not shown: ``glotbench
    run --set NAME=VALUE`` or the config file sets it), whether it shapes requests, and pydantic
    constraints (``ge=0`` ...) checked before any model call."""
    extra = {"cli": list(flags), "request": request, **({"aliases": list(aliases)} if aliases else {}),
             **({"rare": True} if rare else {})}
    if factory is not None:
        return Field(default_factory=factory, description=help, json_schema_extra=extra, **constraints)
    return Field(default, description=help, json_schema_extra=extra, **constraints)


class ModelOptions(BaseModel):
    """The model group: which model, where it is served, its backend options. Every command that
    calls a model takes these flags (``glotbench.cli.option_groups``)."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    model: str | list[str] = setting("embedded", "embedded (default SmolLM2), llamacpp:/path.gguf, hf:DIR_OR_HUB_ID, "
                                     "openai:NAME, anthropic:NAME, vllm:NAME, ollama:NAME, recorded:FILE (answers you "
                                     "already have). One per command, but build filter takes several (repeat).",
                                     "--model", "-m")
    base_url: str | list[str] | None = setting(None, "OpenAI-compatible server URL, e.g. http://127.0.0.1:8000/v1; "
                                               "several (repeat or comma-separate): replicas of one model server, "
                                               "requests spread across them.", "--base-url")
    api_key_env: str | None = setting(None, "Environment variable holding the API key.", "--api-key-env", rare=True)
    model_args: dict[str, Any] = setting(None, "Backend option KEY=VALUE (repeat or comma-separate): chat=false, "
                                         "n_ctx=8192, n_gpu_layers=20, logprobs_trusted=true, max_parallel=8, "
                                         "base_url=..., api_key_env=NAME (build filter: N:KEY=VALUE for its N-th "
                                         "--model only).", "--model-args", "-M", factory=dict)

    @field_validator("model", mode="before")
    @classmethod
    def _models(cls, v):
        """A repeated --model arrives as a list: one element is that spec."""
        if isinstance(v, (list, tuple)):
            v = [str(x) for x in v if str(x).strip()]
            return v[0] if len(v) == 1 else (v or "embedded")
        return v

    @field_validator("base_url", mode="before")
    @classmethod
    def _base_url(cls, v):
        """One URL, or replicas (a list or comma-separated) kept as one comma-separated string."""
        if v is None:
            return None
        parts = [p.strip() for item in ([v] if isinstance(v, str) else list(v)) for p in str(item).split(",")]
        parts = [p for p in parts if p]
        for p in parts:  # "notaurl" or ftp://... would be taken as a replica and fail on every request
            scheme, _, rest = p.partition("://")
            if scheme.lower() not in ("http", "https") or not rest.split("/")[0].strip():
                raise ValueError(f"{p[:80]!r} is not an http:// or https:// server URL (e.g. http://127.0.0.1:8000/v1)")
        return ",".join(parts) if parts else None

    @property
    def base_urls(self) -> list[str]:
        """The ``--base-url`` replicas (one element for one URL, none when unset)."""
        return self.base_url.split(",") if self.base_url else []

    def load_args(self) -> dict[str, Any]:
        """``-M`` with ``--api-key-env`` folded in (``--base-url`` is passed beside it)."""
        args = dict(self.model_args)
        if self.api_key_env:
            args["api_key_env"] = self.api_key_env
        return args


class JudgeOptions(BaseModel):
    """The judge group: the model that grades, and its backend options."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    judge: str | list[str] | None = setting(None, "Judge model (same syntax as --model) for judge-graded tasks and "
                                            "judge steps. One, but build checklist takes several (repeat).", "--judge")
    judge_args: dict[str, Any] = setting(None, "Judge backend option KEY=VALUE (repeat or comma-separate), as -M for the "
                                         "model, e.g. base_url=http://...:8080/v1, n_ctx=4096.", "--judge-args",
                                         factory=dict, aliases=("--judge-arg",))
    judge_base_url: str | list[str] | None = setting(None, "Server URL for an OpenAI-compatible judge (build "
                                                     "checklist: one per --judge, or one for all); the same as --judge-args "
                                                     "base_url=URL.", "--judge-base-url", rare=True)

    @field_validator("judge", "judge_base_url", mode="before")
    @classmethod
    def _one_or_several(cls, v):
        """A repeated flag arrives as a list: one element is that value; none is unset."""
        if isinstance(v, (list, tuple)):
            v = [str(x) for x in v if str(x).strip()]
            return v[0] if len(v) == 1 else (v or None)
        return v

    def judge_options(self) -> dict[str, Any]:
        opts = dict(self.judge_args)
        if self.judge_base_url:
            opts["base_url"] = self.judge_base_url
        return opts


class CallOptions(BaseModel):
    """The calling group: requests in flight, per-request timeout and retries."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    concurrency: int | None = setting(None, "Requests in flight (default: the backend's own limit, else 8).",
                                      "--concurrency", "-j", ge=1)
    timeout: float = setting(120.0, "Per-request timeout, seconds.", "--timeout", rare=True, gt=0)
    max_retries: int = setting(5, "Retries on timeouts, connection errors, HTTP 429 and 5xx.", "--max-retries",
                              rare=True, ge=0)


class RunSettings(ModelOptions, CallOptions, JudgeOptions):
    """Every knob of a run (see docs/run-config.md). Unknown keys are errors."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    # ---- what to run
    tasks: list[str] = setting(None, "Task, suite or glob names; repeat or comma-separate (a command that reads "
                               "finished runs: only these of their tasks).", "--tasks", "-t", "--suite",
                               factory=list)
    split: str | None = setting(None, "Split of each task to read, e.g. dev (default: each task's evaluation split).",
                                "--split",
                                request=True)
    limit: int | float | None = setting(None, "Items per task: N >= 1 the first N; 0 < x < 1 that share of each task.",
                                        "--limit", "-n", request=True)
    sample: int | float | None = setting(None, "Items per task drawn at random with --seed: N >= 1 items, 0 < x < 1 "
                                         "that share (instead of --limit's first N).", "--sample", request=True, rare=True)
    stratify: str | None = setting(None, "With the sample setting: spread the items evenly over this field's values (gold: "
                                   "the gold label; or a metadata field).", "--stratify", request=True, rare=True)
    # ---- prompt and sampling
    seed: int = setting(1234, "Sampling and few-shot seed.", "--seed", request=True)
    num_fewshot: int | None = setting(None, "Few-shot examples per prompt (default: each task's own).", "--num-fewshot",
                                      request=True, ge=0)
    prompt_lang: str | None = setting(None, "Prompt variant for tasks that ship several (OpenHuEval: hu or en).",
                                      "--prompt-lang", request=True, rare=True)
    temperature: float | None = setting(None, "Sampling temperature (default: each task's own, usually 0).",
                                        "--temperature", request=True, ge=0, allow_inf_nan=False)
    max_tokens: int | None = setting(None, "Output token limit of each model call (default: each task's own; a build "
                                     "step's own, see its description).", "--max-tokens", request=True, ge=1)
    samples: int = setting(1, "Answers drawn per item (Best-of-N).", "--samples", request=True, ge=1)
    system_prompt: str | None = setting(None, "System prompt replacing the task's own (chat: the system message; plain "
                                        "prompts and loglikelihood contexts: the text before the question).",
                                        "--system-prompt", request=True, rare=True)
    perturb: list[str] = setting(None, "Perturb each item's input text (not its reference), seeded with --seed: "
                                 "strip_diacritics, translit, zh_t2s, zh_s2t, typos[:RATE], case, whitespace; "
                                 "repeat or comma-separate (docs/perturbations.md).", "--perturb", request=True,
                                 factory=list, rare=True)
    prompt_variants: str | None = setting(None, "Run the prompt variants a task declares (prompts: in its file): all, "
                                          "or N (the first N, the declared prompt first); results give each variant's "
                                          "score, their mean, spread and best (docs/prompt-variants.md).",
                                          "--prompt-variants", request=True, rare=True)
    gen_kwargs: dict[str, Any] = setting(None, "Generation option KEY=VALUE (repeat or comma-separate), typed (ints, floats, "
                                         "true/false): temperature, top_p, max_tokens, stop, seed set those fields; "
                                         "anything else (top_k, repetition_penalty ...) goes to the backend as is.",
                                         "--gen-kwargs", request=True, factory=dict, rare=True)
    chat_template: str | None = setting(None, "Jinja chat template FILE replacing the model's own (in-process backends: "
                                        "embedded, llamacpp:, hf:; a server applies its own, see docs/overrides.md).",
                                        "--chat-template", request=True, rare=True)
    circular: bool = setting(False, "CircularEval (OpenCompass): ask every rotation of each multiple-choice item's "
                             "options; an item counts only when all are right (circular_accuracy, beside the plain "
                             "accuracy of the unrotated order). Multiple-choice tasks only.", "--circular", request=True, rare=True)
    mode: Literal["generate", "loglikelihood"] = setting(
        "generate", "generate (parse answers) or loglikelihood (compare option log-probabilities).", "--mode", request=True)
    # ---- calling
    retry_base_delay: float = setting(1.0, "Exponential backoff base, seconds (with jitter).", "--retry-base-delay",
                                      rare=True, ge=0)
    # fail fast (docs/footguns.md): Retry-After cap, retry-time budgets, circuit breaker, disk-full holding
    max_retry_after: float = setting(120.0, "Longest Retry-After honoured, seconds.", "--max-retry-after", rare=True, ge=0)
    retry_budget_item: float | None = setting(300.0, "Total retry time per item, seconds.", "--retry-budget-item",
                                              rare=True, gt=0)
    retry_budget_run: float | None = setting(3600.0, "Total retry time per run, seconds.", "--retry-budget-run",
                                             rare=True, gt=0)
    breaker_failures: int = setting(10, "Consecutive connection failures that stop the run (0: never).",
                                    "--breaker-failures", rare=True, ge=0)
    journal_flush_wait: float = setting(60.0, "Disk full: how long to retry held journal writes, seconds.",
                                        "--journal-flush-wait", rare=True, ge=0)
    # ---- shared response cache (docs/cache.md): answers reused across run directories
    cache: str | None = setting(None, "Shared response cache folder, read before sending and written after each "
                                "answer, reused across run directories (default: $GLOTBENCH_CACHE if set; 'default' "
                                "is ~/.cache/glotbench/responses). Off unless set.", "--cache", rare=True)
    no_cache: bool = setting(False, "Bypass the shared response cache (the cache setting and $GLOTBENCH_CACHE).", "--no-cache")
    cache_trust_name: bool = setting(False, "Use the shared response cache with a server that does not say which model "
                                     "it serves (no /v1/models, /props), keyed on the model's name and URL alone; "
                                     "results.json says so (docs/cache.md).", "--cache-trust-name", rare=True)
    # ---- output
    output: str | None = setting(None, "Where the command writes (glotbench run: the run directory, default "
                                 "runs/<model>/<hash of the settings>; other commands: see their description).",
                                 "--output", "-o")
    bootstrap: int = setting(1000, "Bootstrap resamples for the 95% intervals (0: no intervals).", "--bootstrap", ge=0, rare=True)
    model_meta: dict[str, Any] = setting(None, "Model description for comparisons, KEY=VALUE (repeat or comma-separate): "
                                         "size=7B, open=yes|no, reasoning=yes|no (other keys kept as text); stored in "
                                         "results.json, read by compare --by.", "--model-meta", factory=dict, rare=True)
    model_meta_file: str | None = setting(None, "YAML or JSON file of the same keys as the model_meta setting (the flag's keys "
                                          "win).", "--model-meta-file", rare=True)
    note: str | None = setting(None, "Free-text note stored in results.json and shown in the report.", "--note", rare=True)
    log_to: list[str] = setting(None, "Experiment tracker to log the finished run to: mlflow[:URI] or wandb[:PROJECT] "
                                "(repeat for several; docs/trackers.md).", "--log-to", factory=list, rare=True)
    offline: bool = setting(False, "Fetch no data: a task whose data is absent names the `glotbench data pull` "
                            "command instead (also when HF_HUB_OFFLINE=1).", "--offline")
    skip_missing_data: bool = setting(False, "Set named tasks whose data is absent aside instead of failing "
                                      "(Czech-Bench configs).", "--skip-missing-data", rare=True)
    allow_modified_data: bool = setting(False, "Run on data files that differ from their declared or locked sha256 "
                                        "(e.g. a cached file edited after the pull); every result read from them is "
                                        "marked 'data differs from its source' (table, results.json, report).",
                                        "--allow-modified-data", rare=True)
    # ---- sharding (docs/sharding.md): none of these changes a request, so a sharded run and an
    # unsharded run of the same command share one run directory and journal
    shards: int | None = setting(None, "Split the items into N shards, each run as its own job with its own "
                                 "journal (RUN/shards/K), then merged.", "--shards", ge=1)
    executor: Literal["local", "ray", "slurm"] = setting("local", "Where shards run: local (processes), ray "
                                                         "(pip install 'glotbench[ray]') or slurm (a job array "
                                                         "through submitit: pip install 'glotbench[slurm]').",
                                                         "--executor", rare=True)
    ray_address: str | None = setting(None, "Ray cluster to join (e.g. auto or ray://head:10001; default: "
                                      "start a local one).", "--ray-address", rare=True)
    ray_args: dict[str, Any] = setting(None, "Ray task option KEY=VALUE per shard (repeat), e.g. num_gpus=1.",
                                       "--ray-args", factory=dict, rare=True)
    slurm_args: dict[str, Any] = setting(None, "submitit parameter KEY=VALUE (repeat), e.g. slurm_partition=gpu, "
                                         "timeout_min=600, gpus_per_node=1; cluster=local runs the array locally.",
                                         "--slurm-args", factory=dict, rare=True)
    shard_retries: int = setting(2, "Times a failed shard is run again (Ray's max_retries; resubmitted for "
                                 "local and slurm).", "--shard-retries", rare=True, ge=0)
    @field_validator("gen_kwargs")
    @classmethod
    def _gen_kwargs(cls, v):
        """Options every backend reads as numbers must be numbers: ``top_k=abc`` was sent as a string."""
        for key, value in (v or {}).items():
            kind = NUMERIC_GEN_KWARGS.get(key)
            if kind is None or value is None:
                continue
            ok = isinstance(value, (int, float)) and not isinstance(value, bool) and value == value
            if kind is int:
                ok = ok and float(value).is_integer()
            if not ok:
                what = "a whole number" if kind is int else "a number"
                raise ValueError(f"{key}={value!r}: {key} must be {what}")
        return v

    @model_validator(mode="after")
    def _subset(self):
        for name, flag in (("model", "--model"), ("judge", "--judge"), ("judge_base_url", "--judge-base-url")):
            if isinstance(getattr(self, name), list):
                raise ValueError(f"{flag}: a run takes one (got {len(getattr(self, name))})")
        if self.sample is not None and self.limit is not None:
            raise ValueError("the sample setting and --limit both choose the items: give one (--set sample=N: random, "
                             "--limit N: the first N)")
        if self.stratify and self.sample is None:
            raise ValueError("the stratify setting needs --set sample=N (how many items to spread over its values)")
        return self

    @field_validator("limit", "sample")
    @classmethod
    def _limit(cls, v):
        if v is None:
            return None
        if v != v or v in (float("inf"), float("-inf")):
            raise ValueError(f"limit {v} is not a number of items or a share between 0 and 1")
        if v <= 0:
            raise ValueError("limit must be a positive count or a share between 0 and 1")
        if v >= 1:
            if float(v) != int(v):
                raise ValueError(f"limit {v} is neither a whole number of items nor a share between 0 and 1")
            return int(v)
        return float(v)

    # ------------------------------------------------------------------ derived
    def request_settings(self) -> dict[str, Any]:
        """The settings that shape requests (fingerprint, output directory, results.json)."""
        out: dict[str, Any] = {k: getattr(self, k) for k in _FINGERPRINT_ALWAYS}
        for name, f in type(self).model_fields.items():
            if name not in out and (f.json_schema_extra or {}).get("request") and getattr(self, name) != f.get_default(
                    call_default_factory=True):
                out[name] = getattr(self, name)
        return out

# generation options every backend reads as numbers (the rest go to the backend as given)
NUMERIC_GEN_KWARGS: dict[str, type] = {
    "temperature": float, "top_p": float, "min_p": float, "typical_p": float, "repetition_penalty": float,
    "frequency_penalty": float, "presence_penalty": float, "top_k": int, "max_tokens": int, "seed": int,
    "min_tokens": int, "n": int}


def parse_key_values(items: list[str] | None, flag: str) -> dict[str, Any]:
    """``["chat=false", "n_ctx=8192"]`` -> ``{"chat": False, "n_ctx": 8192}`` (values read as YAML scalars)."""
    import yaml

    out: dict[str, Any] = {}
    for item in items or []:
        parts = item.split(",")
        if not all("=" in p for p in parts):  # a comma inside a value: keep the item whole
            parts = [item]
        for part in parts:
            key, sep, raw = part.partition("=")
            if not sep or not key.strip():
                raise GlotbenchError(f"{flag} {part!r}: expected KEY=VALUE")
            try:
                value = yaml.safe_load(raw) if raw.strip() else ""
            except yaml.YAMLError:
                value = raw
            out[key.strip()] = value
    return out


def items_for(limit: int | float | None, total: int) -> int:
    """How many of ``total`` items ``--limit`` takes: N >= 1 the first N; a share rounds up, at least one."""
    if limit is None:
        return total
    if isinstance(limit, float):
        import math

        return min(total, max(1, math.ceil(limit * total)))
    return min(total, limit)
