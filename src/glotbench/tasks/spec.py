"""The task specification: one frozen, documented object per task, read from YAML.

Every knob that changes a prompt is a field here (see docs/adding-a-task.md), so a prompt is
data, not code. ``TaskSpec.prompt_hash()`` hashes the fields that shape the prompt; it is shown next
to every score. The task's fingerprint (engine/fingerprint.py) hashes the whole spec instead
(:meth:`TaskSpec.fingerprint_payload`: every field after defaults but :data:`FINGERPRINT_EXEMPT`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from glotbench.errors import TaskSpecError
from glotbench.tasks.judging.declaration import JudgeDecl, anchor_prompt_file, check_declaration, fingerprint_exclude, \
    resolve_judge_field
from glotbench.models.base import canonical_json, sha256_hex
from glotbench.prompts.sandbox import first_unsafe
from glotbench.sources.schema import DataOrigin, covers
from glotbench.yamlfile import read_mapping, validate


# The only fields left out of a task's fingerprint: they cannot change a number (what a task is
# called in prose, where it came from, where it sits in its suites' tables). Every other field, nested
# ones included, is in it, so editing it makes the next run recompute (tests/test_task_fingerprint.py).
# ``prompts``: the other prompts a task declares do not change its own prompt's numbers (each variant's
# run hashes its own prompt, tasks/variants.py)
FINGERPRINT_EXEMPT = ("description", "source", "order", "suites", "prompts")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SourceInfo(_Strict):
    name: str = ""
    url: str = ""
    paper: str = ""
    license: str = ""
    revision: str = ""
    # where the files the task reads come from, to fetch and check them (glotbench.sources.schema)
    fetch: list[DataOrigin] = Field(default_factory=list)


class HFSource(_Strict):
    """A Hugging Face dataset, for online users. The revision must be pinned."""

    id: str
    revision: str
    config: str | None = None


class DatasetSpec(_Strict):
    format: Literal["json", "jsonl", "csv", "tsv", "parquet", "hf"] = "json"
    # split name -> file path, relative to the data root (or absolute)
    splits: dict[str, str] = Field(default_factory=dict)
    hf: HFSource | None = None
    eval_split: str = "test"
    encoding: str = "utf-8-sig"  # tolerates a UTF-8 BOM (HuCommitmentBank has one)
    # Python escape hatch: "module:function" taking a raw record dict, returning a dict (or None to drop it).
    record_fn: str | None = None


class FewshotSpec(_Strict):
    split: str | None = None  # None: no few-shot material
    n: int = Field(0, ge=0)
    seed: int = 1234
    # how a solved example's answer is written (jinja2, same variables as the prompt)
    answer: str = "{{ target }}"


DEFAULT_USER = "{{ input }}"


class PromptSpec(_Strict):
    system: str | None = None
    user: str = DEFAULT_USER
    # template for plain-completion models; default: system, then user, then the answer cue
    plain: str | None = None
    # how each option is written in {{ choices_block }}
    choice_format: str = "{{ label }}. {{ text }}"
    choice_separator: str = "\n"
    # loglikelihood scoring: what follows the plain prompt for each option ("label" or "text")
    ll_continuation: Literal["label", "text"] = "label"
    answer_cue: str = ""  # appended to plain prompts (e.g. "Хариулт:")
    # a multi-turn task: the user turns, in order (jinja2, the same variables as ``user``, which they
    # replace); the model answers turn 1, its answer goes back as the assistant message before turn 2, ...
    # (docs/multi-turn.md). None: one user turn, ``user``.
    turns: list[str] | None = None

    @model_validator(mode="after")
    def _turns_or_user(self):
        if self.turns is not None:
            if not self.turns or not all(isinstance(t, str) and t.strip() for t in self.turns):
                raise ValueError("turns: a non-empty list of user-turn templates (none of them empty)")
            if self.user != DEFAULT_USER:
                raise ValueError("turns replaces user: give one of prompt.user or prompt.turns")
            if self.plain is not None:
                raise ValueError("turns: a multi-turn prompt is laid out from its messages; leave prompt.plain unset")
        return self


class PromptVariant(_Strict):
    """One more prompt a task declares (``prompts:``), run by ``run --prompt-variants``: a name and the
    prompt fields it changes (unset ones are the task's ``prompt``), here or in a YAML ``file``
    (relative to the task file) holding those fields."""

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]{0,39}$")
    file: str | None = None
    system: str | None = None
    user: str | None = None
    plain: str | None = None
    choice_format: str | None = None
    choice_separator: str | None = None
    answer_cue: str | None = None
    headline: bool = False  # this variant, not the task's own prompt, is the task's headline


DECLARED_PROMPT = "declared"  # the name of the task's own ``prompt`` among its variants


class GenerationSpec(_Strict):
    max_tokens: int = Field(256, ge=1)
    temperature: float = Field(0.0, ge=0)
    top_p: float | None = None
    stop: list[str] = Field(default_factory=list)
    extra: dict[str, Any] = Field(default_factory=dict)


class ExtractorSpec(_Strict):
    name: str = "text"
    options: dict[str, Any] = Field(default_factory=dict)


class TaskSpec(_Strict):
    name: str
    version: str
    language: str
    description: str = ""
    source: SourceInfo = Field(default_factory=SourceInfo)
    suites: list[str] = Field(default_factory=list)
    order: int = 100  # position within its suites (then by name): tables follow the paper's order
    dataset: DatasetSpec
    # template variable -> path into the record ("question", "choices[*].text", "meta.level").
    # Special names: id, target, choices, labels.
    fields: dict[str, str] = Field(default_factory=dict)
    required_fields: list[str] = Field(default_factory=list)
    # value used when a record lacks a mapped field or holds null there; without one, a missing or
    # null field that a prompt template uses is an error (it would be rendered as the text "None")
    default: dict[str, Any] = Field(default_factory=dict)
    # loglikelihood_rolling: each item is a text (field ``text``) scored by its log-likelihood under the
    # model (perplexity, bits per byte: docs/calibration-and-perplexity.md); needs a log-probability backend
    # loglikelihood: one target continuation per item scored after its prompt (lm-eval's output type of
    # that name: lambada); the task class builds the continuation (glotbench.tasks.lm_eval_task)
    output_type: Literal["generate", "multiple_choice", "loglikelihood_rolling", "loglikelihood"] = "generate"
    default_labels: list[str] | None = None  # MC labels when the record has none
    prompt: PromptSpec = Field(default_factory=PromptSpec)
    # more prompts (run --prompt-variants, docs/prompt-variants.md); the headline stays ``prompt``
    # unless a variant says ``headline: true``
    prompts: list[PromptVariant] = Field(default_factory=list)
    fewshot: FewshotSpec = Field(default_factory=FewshotSpec)
    generation: GenerationSpec = Field(default_factory=GenerationSpec)
    extractor: ExtractorSpec = Field(default_factory=ExtractorSpec)
    # per-item scorer: a registered name (glotbench.scoring.scorers) or "module:function"
    scorer: str = "label"
    scorer_options: dict[str, Any] = Field(default_factory=dict)  # keyword options for the scorer
    # registered metric names, "mean:<value key>", or "module:attr" naming a Metric
    metrics: list[str] = Field(default_factory=lambda: ["accuracy"])
    slice_by: list[str] = Field(default_factory=list)
    counterpart: str | None = None  # the same task in another language (cross-lingual pairs)
    # Python escape hatch: a registered task class name or "module:Class" (a glotbench Task subclass)
    task_class: str | None = None
    options: dict[str, Any] = Field(default_factory=dict)  # free-form knobs for a task_class
    # an LLM judge grades the answers: its declaration (glotbench.tasks.judging.declaration), or in the file
    # the path of a judge file (read in place by load_spec)
    judge: JudgeDecl | None = None

    def fingerprint_payload(self) -> dict:
        """Every field after defaults (nested ones included), minus :data:`FINGERPRINT_EXEMPT`
        (and ``judge`` when a task has none, so tasks without one keep their fingerprint)."""
        # the other prompts do not change this prompt's numbers (a variant's run hashes its own prompt)
        exclude: Any = set(FINGERPRINT_EXEMPT) | ({"judge"} if self.judge is None else set())
        if self.judge is not None:  # a judge field added later is left out while unset (the same fingerprint)
            later = fingerprint_exclude(self.judge)
            if later:
                exclude = {**{k: True for k in exclude}, "judge": later}
        if self.prompt.turns is None:  # added later: a one-turn task keeps its fingerprint
            exclude = {**({k: True for k in exclude} if isinstance(exclude, set) else exclude), "prompt": {"turns"}}
        return self.model_dump(mode="json", exclude=exclude)

    def spec_hash(self) -> str:
        """Short hash of :meth:`fingerprint_payload`."""
        return sha256_hex(canonical_json(self.fingerprint_payload()))[:8]

    @model_validator(mode="after")
    def _prompt_names(self):
        names = [DECLARED_PROMPT] + [v.name for v in self.prompts]
        dup = next((n for n in names if names.count(n) > 1), None)
        if dup is not None:
            raise ValueError(f"prompts: the name {dup!r} is used twice ({DECLARED_PROMPT!r} is the task's own prompt)")
        if sum(v.headline for v in self.prompts) > 1:
            raise ValueError("prompts: more than one variant says headline: true")
        return self

    @property
    def headline_prompt(self) -> str:
        """The name of the prompt the task's headline is read from (its own, unless a variant says so)."""
        return next((v.name for v in self.prompts if v.headline), DECLARED_PROMPT)

    @model_validator(mode="after")
    def _turns_are_generated(self):
        if self.prompt.turns is not None and self.output_type in ("loglikelihood_rolling", "loglikelihood"):
            raise ValueError(f"prompt.turns: a multi-turn task is answered by generation; output_type "
                             f"{self.output_type} scores a text's log-likelihood")
        return self

    @model_validator(mode="after")
    def _fetch_covers_splits(self):
        """A declared source names every file the task reads: each split's path comes from it."""
        if self.source.fetch:
            for split, rel in self.dataset.splits.items():
                if Path(rel).expanduser().is_absolute():  # the user's own file, read as it is
                    continue
                if not covers(self.source.fetch, rel):
                    raise ValueError(f"source.fetch: no origin provides split {split!r} ({rel}); "
                                     f"list it under a 'files' entry's 'to' (or an hf origin's 'to')")
        return self

    def prompt_hash(self, run_overrides: dict | None = None) -> str:
        """Hash of everything that shapes the prompt; ``run_overrides`` holds run-level prompt
        settings (``num_fewshot``, ``prompt_lang``) when a run changes them."""
        payload = {
            "version": self.version,
            "fields": self.fields,
            "prompt": self.prompt.model_dump(exclude={"turns"} if self.prompt.turns is None else None),
            "fewshot": self.fewshot.model_dump(),
            "generation": self.generation.model_dump(),
            "extractor": self.extractor.model_dump(),
            "scorer": self.scorer,
            "options": self.options,
            "task_class": self.task_class,  # prompts built in Python differ by class
        }
        if self.scorer_options:  # only when set, so existing tasks keep their hash
            payload["scorer_options"] = self.scorer_options
        if self.default:  # only when set, so the hashes of tasks without defaults stay as they were
            payload["default"] = self.default
        overrides = {k: v for k, v in (run_overrides or {}).items() if v is not None}
        if overrides:
            payload["run"] = overrides
        return sha256_hex(canonical_json(payload))[:8]


def load_spec(path: Path) -> TaskSpec:
    """Read one task YAML; any problem becomes a one-line TaskSpecError naming file and field
    (a problem in a judge file the task names, that file and its field)."""
    raw = resolve_judge_field(read_mapping(path, "task file", TaskSpecError), path)
    unsafe = first_unsafe(raw)
    if unsafe is not None:
        raise TaskSpecError(f"{path}: field '{unsafe[0]}': {unsafe[1]}")
    if isinstance(raw.get("judge"), dict):  # an inline judge's prompt_file.path: relative to the task file
        raw = {**raw, "judge": anchor_prompt_file(raw["judge"], Path(path).parent)}
    spec = validate(TaskSpec, raw, path, TaskSpecError)
    if spec.judge is not None:
        check_declaration(spec.judge, str(path), prefix="judge.")
    return spec
