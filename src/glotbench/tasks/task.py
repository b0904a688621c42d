"""A runnable task built from a :class:`TaskSpec`.

The default :class:`Task` covers multiple-choice and generative tasks described entirely in
YAML. Odd tasks subclass it (``task_class: module:Class`` in the YAML) and override
``build_sample``, ``requests`` or ``score``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from functools import cached_property
from itertools import chain
from pathlib import Path
from typing import Any

from glotbench.data.fields import FieldDecodeError, MissingField, getter, unmatched_paths
from glotbench.data.loaders import file_sha256, locate, read_hf, read_records
from glotbench.errors import DataError, TaskSpecError
from glotbench.models.base import GenRequest, GenResult, KeyTemplate, LoglikelihoodRequest, LoglikelihoodResult
from glotbench.paths import resolve_data_file
from glotbench.prompts.render import choices_block, constant_text, plain_from_chat, render
from glotbench.sources.locate import find_location, missing_line
from glotbench.tasks.request_settings import RequestSettings
from glotbench.tasks.spec import TaskSpec

LL_DELIMITER = " "  # between the context and each option in --mode loglikelihood (lm-eval's target_delimiter)
# --mode loglikelihood's metrics: accuracy_norm is lm-eval's acc_norm (per character); the byte- and
# token-normalised variants are reported beside it (see score_loglikelihood); the calibration of the
# softmax over the options' log-likelihoods beside them (glotbench.scoring.ll_calibration)
LL_METRICS = ("accuracy", "accuracy_norm", "accuracy_norm_bytes", "accuracy_norm_tokens", "ll_ece", "ll_brier",
              "ll_auroc_macro")
# output_type loglikelihood_rolling: a text's log-likelihood per byte (the headline: no tokenizer in it),
# per token and per word (glotbench.scoring.perplexity); a task file's own `metrics:` replaces these
ROLLING_METRICS = ("bits_per_byte", "perplexity", "word_perplexity")
ROLLING = "loglikelihood_rolling"


@dataclass
class Sample:
    task: str
    id: str
    index: int
    vars: dict[str, Any]  # template variables (the mapped fields)
    target: Any
    choices: list[str] | None = None
    labels: list[str] | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass
class Scored:
    """What scoring one sample produced."""

    pred: Any  # the extracted answer, None if unparseable
    values: dict[str, float]  # per-item values for metrics
    extracted: Any = None  # what the extractor returned (for inspection)
    rule: str | None = None  # the extraction rule that produced it (samples.jsonl: extraction_rule)
    detail: dict[str, Any] = field(default_factory=dict)


Request = GenRequest | LoglikelihoodRequest
Output = GenResult | LoglikelihoodResult


def _getter_or_raise(path: str) -> Any:
    """``getter(path)``; a path it refuses (an unknown ``|decoder``) raises its error when a record is
    read, in field order, as ``get_path`` did."""
    try:
        return getter(path)
    except DataError as err:
        message = str(err)

        def refuse(record: Any) -> Any:
            raise DataError(message)
        return refuse


def import_object(ref: str, *, where: str) -> Any:
    from glotbench.registry import import_ref

    return import_ref(ref, where=where, error=TaskSpecError)


class Task:
    # a generation prompt that ends with the start of the answer, which a chat model must continue as an
    # open assistant turn (lm-eval's gen_prefix; engine/run_checks.check_prefill)
    prefills_answer: bool = False

    def __init__(self, spec: TaskSpec, spec_path: Path | None = None):
        self.spec = spec
        self.spec_path = spec_path
        self.name = spec.name
        self.load_warnings: list[str] = []  # shown once by the run (one-option items, ...)
        self._split_sizes: dict[str, int] = {}  # split -> items, counted by a run_samples with a limit

    # ---------------------------------------------------------------- data
    @cached_property
    def _record_fn(self):
        if not self.spec.dataset.record_fn:
            return None
        return import_object(self.spec.dataset.record_fn, where=f"{self.spec_path or self.name}: dataset.record_fn")

    def split_path(self, split: str) -> Path:
        rel = self.spec.dataset.splits.get(split)
        if rel is None:
            raise DataError(f"task {self.name}: no split {split!r} (splits: {', '.join(self.spec.dataset.splits) or 'none'})")
        if self.spec.source.fetch and not (self.yaml_dir is not None and (self.yaml_dir / rel).is_file()):
            path = self.data_file(rel)
            if not path.exists():
                raise DataError(self.data_problem or missing_line(self.spec, rel))
            return path
        return locate(rel, self.name, self.yaml_dir)

    # A fetch that failed for this task in this process (one line), shown instead of "not present".
    data_problem: str | None = None
    # Files that differ from their source, run anyway (--allow-modified-data): every output marks them.
    data_differs: list[str] | None = None

    def data_location(self):
        """The one data root this task reads all its files from (None: no root has them all):
        GLOTBENCH_DATA or shared/data first, then the user's cache (docs/data.md)."""
        return find_location(self.spec)

    def data_file(self, rel: str) -> Path:
        """``rel`` under the task's data root; a task declaring no source looks file by file, as
        before. No root holds all of the task's files: the path in the cache, where a pull puts it
        (never a file of another root: roots are not mixed)."""
        p = Path(rel).expanduser()
        if p.is_absolute() or not self.spec.source.fetch:
            return resolve_data_file(rel)
        loc = self.data_location()
        if loc is not None:
            return loc.root / rel
        from glotbench.sources.cache import data_dir

        return data_dir() / rel

    @property
    def yaml_dir(self) -> Path | None:
        """The folder of the task YAML: its relative data paths are looked up there first (a user's
        task file beside its data, a benchmark package that ships its data), then in the data roots."""
        if self.spec_path is None:
            return None
        return Path(self.spec_path).resolve().parent

    def raw_records(self, split: str) -> list[dict]:
        ds = self.spec.dataset
        if ds.format == "hf":
            if ds.hf is None:
                raise TaskSpecError(f"{self.spec_path or self.name}: field 'dataset.hf': required when format is hf")
            return read_hf(ds.hf.id, self.hf_commit, ds.hf.config, split)
        return read_records(self.split_path(split), ds.format, ds.encoding)

    @cached_property
    def hf_commit(self) -> str:
        """The commit a ``format: hf`` task reads: its revision when that is a commit, else what the
        data lock file pins, else what the branch names now (so ``main`` never hides which data)."""
        from glotbench.sources.schema import COMMIT

        hf = self.spec.dataset.hf
        if COMMIT.fullmatch(hf.revision) or Path(hf.id).expanduser().exists():  # pinned, or a local folder
            return hf.revision
        from glotbench.sources import hub
        from glotbench.sources.lock import Lock

        for (key, entry) in Lock.load().origins.items():
            if entry.get("kind") == "hf" and entry.get("repo") == hf.id and entry.get("requested") == hf.revision:
                return entry["commit"]
        from glotbench.sources.pull import offline

        if offline():
            return hf.revision
        try:
            return hub.resolve(hf.id, hf.revision)[0]
        except DataError:
            return hf.revision  # offline: the datasets library reports what it cannot reach

    def data_fingerprint(self, split: str | None = None) -> str:
        split = split or self.spec.dataset.eval_split
        if self.spec.dataset.format == "hf":
            return f"hf:{self.spec.dataset.hf.id}@{self.hf_commit}"
        paths = [self.split_path(split)]
        if self.spec.fewshot.n and self.spec.fewshot.split and self.spec.fewshot.split != split:
            paths.append(self.split_path(self.spec.fewshot.split))
        return "+".join(file_sha256(p)[:16] for p in paths)

    def samples(self, split: str | None = None, limit: int | None = None) -> list[Sample]:
        split = split or self.spec.dataset.eval_split
        return self._built(self.raw_records(split), split, limit)

    def _built(self, records: list[dict], split: str, limit: int | None) -> list[Sample]:
        """:meth:`samples` of ``records`` (the split's, as read): the first ``limit`` kept ones (None: all)."""
        where = self.spec.dataset.splits.get(split, split)
        out: list[Sample] = []
        seen: list[dict] = []
        stop = len(records)
        for i, rec in enumerate(records):
            if self._record_fn is not None:
                rec = self._record_fn(rec)
                if rec is None:
                    continue
            seen.append(rec)
            out.append(self.build_sample(rec, i, where))
            if limit is not None and len(out) >= limit:
                stop = i + 1
                break
        self._check_paths_match(seen, records[stop:], where)
        ids = [s.id for s in out]
        if len(set(ids)) != len(ids):
            dup = next(x for x in ids if ids.count(x) > 1)
            raise DataError(f"{where}: task {self.name}: duplicate record id {dup!r}")
        if self.spec.prompt.turns:  # every later turn is rendered now: a bad one is refused before turn 1 is sent
            for s in out:
                for k in range(self.n_turns):
                    self.render_turn(s, k)
        absent = [f for f in self.spec.slice_by
                  if out and all(f not in s.vars and (s.metadata or {}).get(f) is None for s in out)]
        if absent:  # a misspelt field made one slice "None" holding every item
            fields = sorted({k for s in out[:50] for k in s.vars if not k.startswith("_")})
            raise DataError(f"{where}: task {self.name}: field 'slice_by': {', '.join(map(repr, absent))} is in no record "
                            f"(record fields: {', '.join(fields[:20])})")
        return out

    def run_samples(self, settings: RequestSettings) -> list[Sample]:
        """The items a run with ``settings`` evaluates: the split, then ``limit`` (the first N, or a
        share), or ``sample`` (seeded random, ``stratify``: balanced over a field); see tasks/subsets.py;
        then ``--perturb`` on their input text (tasks/perturbed.py); with ``circular``, every rotation
        of each of those items (tasks/circular.py)."""
        items = self._chosen_samples(settings)
        if settings.perturb:
            from glotbench.tasks.perturbed import perturb_samples

            items = perturb_samples(self, items, settings.perturb, settings.seed)
        if settings.circular:
            from glotbench.tasks.circular import expand

            return expand(self, items)
        return items

    def _chosen_samples(self, settings: RequestSettings) -> list[Sample]:
        from glotbench.tasks import subsets

        sample_n = settings.sample
        if sample_n is not None:
            every = self.samples(settings.split)
            stratify = settings.stratify
            if stratify:
                return subsets.stratified_items(every, sample_n, settings.seed, stratify, self.name)
            return subsets.sample_items(every, sample_n, settings.seed)
        if settings.limit is None:
            return self.samples(settings.split)
        split = settings.split or self.spec.dataset.eval_split
        if type(self).samples is Task.samples:  # the first N items are built, the rest only counted
            records = self.raw_records(split)
            fn = self._record_fn
            kept = list(enumerate(records)) if fn is None else [(i, r) for i, r in enumerate(map(fn, records))
                                                                if r is not None]
            total = len(kept)
            n = settings.items_for(total)
            taken = self._built(records, split, n) if n > 0 else []
            every_targets = chain((s.target for s in taken), self._targets(kept[n:], split))
        else:  # a task that builds its items itself: all of them
            every = self.samples(settings.split)
            total = len(every)
            taken = every[:settings.items_for(total)]
            every_targets = (s.target for s in every)
        self._split_sizes[split] = total  # for dataset_size
        if len(taken) < total:  # the gold labels of the rest are read only when the first N are all one class
            warn = subsets.one_class_warning(taken, every_targets, settings.limit)
            if warn and warn not in self.load_warnings:
                self.load_warnings.insert(0, warn)
        return taken

    def _targets(self, kept: list[tuple[int, dict]], split: str):
        """The gold answers of ``kept`` ``(index, record)`` pairs (after the record function) that were
        not built: the target field alone, as :meth:`build_sample` reads it (a task with its own
        ``build_sample`` builds them)."""
        if type(self).build_sample is not Task.build_sample:
            where = self.spec.dataset.splits.get(split, split)
            yield from (self.build_sample(rec, i, where).target for i, rec in kept)
            return
        path = self.spec.fields.get("target")
        get = getter(path) if path is not None else None
        defaults = self.spec.default
        for _, rec in kept:
            try:
                value = get(rec) if get is not None else None
            except (MissingField, FieldDecodeError):
                value = None
            if value is None and "target" in defaults:
                value = defaults["target"]
            yield value

    def dataset_size(self, settings: RequestSettings) -> int:
        """How many items the run's split holds before ``limit`` (lm-eval's ``n-samples.original``).
        A task that builds its items itself (overrides ``samples``) builds them all once more."""
        if settings.limit is None:
            return len(self._run_items(settings))
        split = settings.split or self.spec.dataset.eval_split
        if split in self._split_sizes:  # counted when run_samples read the split
            return self._split_sizes[split]
        if type(self).samples is Task.samples:  # the plain path: records kept by the record function
            fn = self._record_fn
            records = self.raw_records(split)
            return len(records) if fn is None else sum(1 for r in records if fn(r) is not None)
        return len(self.samples(split))

    def shots(self, settings: RequestSettings) -> int:
        """Few-shot examples per prompt in a run with ``settings`` (the run's override, else the task's)."""
        n = self.spec.fewshot.n if settings.num_fewshot is None else settings.num_fewshot
        return max(0, int(n or 0))

    def _check_paths_match(self, seen: list[dict], unread: list[dict], where: str) -> None:
        """A field path that matches nothing in any record is a typo (``topic: topik``): fail naming it."""
        missing = unmatched_paths(self.spec.fields, seen)
        if where != self.spec.dataset.splits.get(self.spec.dataset.eval_split):
            missing.pop("target", None)  # another split may be unlabeled (a leaderboard's hidden test labels)
        if missing and unread:  # a --limit stopped early: look at the rest too
            fn = self._record_fn
            rest = unread if fn is None else (r for r in map(fn, unread) if r is not None)
            missing = unmatched_paths(missing, rest)
        for other in self.spec.dataset.splits:  # an unlabelled split (a hidden test set) is no typo
            if not missing or other == where or self.spec.dataset.splits.get(other) == where:
                continue
            try:
                recs = self.raw_records(other)
            except Exception:  # noqa: BLE001 - a split that cannot be read cannot vouch for a path
                continue
            fn = self._record_fn
            missing = unmatched_paths(missing, recs if fn is None else (r for r in map(fn, recs) if r is not None))
        if missing:
            name, path = next(iter(missing.items()))
            raise TaskSpecError(f"{self.spec_path or self.name}: field '{name}': path {path!r} matches nothing in any "
                                f"record of {where} (a typo? paths: docs/adding-a-task.md)")

    @cached_property
    def prompt_variables(self) -> set[str]:
        """Names the prompt templates use: a null there would be rendered as the text "None"."""
        import jinja2
        from jinja2 import meta

        from glotbench.prompts import sandbox

        p = self.spec.prompt
        env = sandbox.environment()
        names: set[str] = set()
        for src in (p.system, p.user, p.plain, self.spec.fewshot.answer, *(p.turns or ())):
            if src:
                try:
                    names |= meta.find_undeclared_variables(env.parse(src))
                except jinja2.TemplateSyntaxError:
                    pass  # reported with its line when the template is rendered
        return names

    @cached_property
    def printed_paths(self) -> set[tuple]:
        """``name.key`` paths the prompt templates print as they are (``{{ meta.level }}``): a null
        there is refused when the items are read, as a null top-level field is."""
        from glotbench.prompts.sandbox import printed_paths

        p = self.spec.prompt
        out: set[tuple] = set()
        for src in (p.system, p.user, p.plain, self.spec.fewshot.answer, *(p.turns or ()), *self.extra_templates()):
            if src and "{" in src:
                out |= printed_paths(src)
        return out

    def extra_templates(self) -> list[str]:
        """Other templates an item's values fill (a judged task's grading prompt)."""
        return []

    def _check_printed_nulls(self, values: dict, index: int, where: str) -> None:
        for path in self.printed_paths:
            if path[0] not in values:
                continue
            cur: Any = values[path[0]]
            for key in path[1:]:
                if isinstance(cur, dict) and key in cur:
                    cur = cur[key]
                elif isinstance(cur, list) and isinstance(key, int) and -len(cur) <= key < len(cur):
                    cur = cur[key]
                else:
                    break  # not there: the render names it (StrictUndefined)
            else:
                if cur is None:
                    shown = path[0] + "".join(f".{k}" if isinstance(k, str) else f"[{k}]" for k in path[1:])
                    raise DataError(f"{where}: record {index}: '{shown}' (field '{self.spec.fields.get(path[0], path[0])}') "
                                    f"is null but the prompt prints it (it would be sent as the text \"None\"); fix the "
                                    f"record or print it through a default (`{{{{ {shown} or '' }}}}`)")

    def _field_getters(self) -> tuple[tuple[str, str, Any], ...]:
        """``(name, path, getter)`` per mapped field (data/fields.getter), made once per ``spec.fields``."""
        cached = self.__dict__.get("_getters")
        fields = self.spec.fields
        if cached is None or cached[0] is not fields:
            cached = (fields, tuple((name, path, _getter_or_raise(path)) for name, path in fields.items()))
            self.__dict__["_getters"] = cached
        return cached[1]

    def build_sample(self, rec: dict, index: int, where: str) -> Sample:
        values: dict[str, Any] = {}
        defaults = self.spec.default
        for name, path, get in self._field_getters():
            try:
                value = get(rec)
            except FieldDecodeError as err:
                raise DataError(f"{where}: record {index}: {err}") from None
            except MissingField:
                if name in defaults:
                    values[name] = defaults[name]
                    continue
                if name in self.spec.required_fields or name in ("target", "choices"):
                    raise DataError(f"{where}: record {index}: missing field '{path}' (for {name})") from None
                value = None
            if value is None:
                if name in defaults:
                    value = defaults[name]
                if value is None and name in self.prompt_variables:
                    raise DataError(f"{where}: record {index}: field '{path}' (for {name}) is missing or null but the "
                                    f"prompt uses it; fix the record or give a value under 'default: {{{name}: ...}}' "
                                    f"in the task file")
            values[name] = value
        if self.printed_paths:
            self._check_printed_nulls(values, index, where)
        sid = values.pop("id", None)
        sid = str(index) if sid is None else str(sid)
        choices = values.get("choices")
        labels = values.get("labels")
        if self.spec.output_type == "multiple_choice":
            if not isinstance(choices, list) or not choices:
                raise DataError(f"{where}: record {index}: field '{self.spec.fields.get('choices')}' must be a non-empty list")
            if None in choices and any(c is None for c in choices):  # (`in` first: no generator per item)
                k = next(k for k, c in enumerate(choices) if c is None)
                raise DataError(f"{where}: record {index}: field '{self.spec.fields.get('choices')}': option {k} is null")
            if len(choices) == 1:
                self.load_warnings.append(f"{where}: record {index}: only one option: the item scores 100% for any "
                                          f"model that answers it")
            if labels is None:
                default = self.spec.default_labels or [chr(ord("A") + k) for k in range(len(choices))]
                labels = default[: len(choices)]
            labels = [str(x) for x in labels]
            values["labels"] = labels
            values["choices_block"] = choices_block(labels, [str(c) for c in choices], self.spec.prompt.choice_format,
                                                    self.spec.prompt.choice_separator, task=self.name)
            values["labels_text"] = ", ".join(labels[:-1]) + (f" {self.spec.options.get('or_word', 'or')} " if len(labels) > 1 else "") + labels[-1]
        if self.spec.output_type == ROLLING and not isinstance(values.get("text"), str):
            raise DataError(f"{where}: record {index}: field '{self.spec.fields.get('text', 'text')}' (for text) must be "
                            f"a string: output_type {ROLLING} scores that text (map it under fields: text: ...)")
        target = values.get("target")
        if self.spec.output_type == "multiple_choice" and str(target) not in (labels or []):
            raise DataError(f"{where}: record {index}: field '{self.spec.fields.get('target')}': answer {target!r} is not one of the labels {labels}")
        metadata = {k: values.get(k) for k in self.spec.slice_by}
        return Sample(task=self.name, id=sid, index=index, vars=values, target=target, choices=choices,
                      labels=labels, metadata=metadata)

    @cached_property
    def _fewshot_pool(self) -> list[Sample]:
        fs = self.spec.fewshot
        if not fs.split:  # the pool is built on first use, so `--num-fewshot` works even when n is 0
            return []
        return self.samples(fs.split)

    def check_fewshot(self, n: int | None = None) -> None:
        """:class:`DataError` when ``n`` few-shot examples (default: the task's) cannot be drawn
        without repeats (n=50 from 3 training items used to give 3, silently)."""
        n = self.spec.fewshot.n if n is None else n
        if n <= 0 or not self.spec.fewshot.split:
            return
        have = len(self._fewshot_pool) - (1 if self.spec.fewshot.split == self.spec.dataset.eval_split else 0)
        if n > have:
            raise DataError(f"task {self.name}: {n} few-shot examples per prompt asked for, but the few-shot split "
                            f"{self.spec.fewshot.split!r} has only {have} to draw from; use --num-fewshot {max(have, 0)} or fewer")

    def fewshot_for(self, sample: Sample, n: int | None = None) -> list[Sample]:
        n = self.spec.fewshot.n if n is None else n
        if n <= 0:
            return []
        self.check_fewshot(n)
        same = self.spec.fewshot.split == self.spec.dataset.eval_split
        pool = [s for s in self._fewshot_pool if not (same and s.id == sample.id)]
        rng = random.Random(f"{self.spec.fewshot.seed}:{self.name}:{sample.id}")
        return rng.sample(pool, min(n, len(pool)))

    # ---------------------------------------------------------------- prompts
    def _vars(self, sample: Sample) -> dict:
        return {**sample.vars, "target": sample.target, "lang": self.spec.language}

    def render_user(self, sample: Sample) -> str:
        """The (first) user turn: ``prompt.user``, or ``prompt.turns[0]`` in a multi-turn task."""
        if self.spec.prompt.turns:
            return self.render_turn(sample, 0)
        return render(self.spec.prompt.user, self._vars(sample), task=self.name, record=sample.id, field="prompt.user")

    # ---------------------------------------------------------------- multi-turn (prompt.turns)
    @property
    def n_turns(self) -> int:
        """User turns per item: ``len(prompt.turns)``, else 1. An item's outputs are its turns' answers in
        order (per Best-of-N chain: ``n_turns`` outputs each), the engine sending turn k+1 after turn k."""
        return len(self.spec.prompt.turns or ()) or 1

    def render_turn(self, sample: Sample, k: int) -> str:
        return render(self.spec.prompt.turns[k], self._vars(sample), task=self.name, record=sample.id,
                      field=f"prompt.turns[{k}]")

    @staticmethod
    def fed_back(out: GenResult) -> str:
        """An answer as it goes back into the dialogue: its text without a thinking trace (a chat
        template drops the reasoning of earlier turns too)."""
        from glotbench.extract.thinking import strip_thinking

        return strip_thinking(out.text or "")[0].strip()

    def dialogue(self, sample: Sample, answers: list[str]) -> list[dict]:
        """The item's user turns with ``answers`` between them (no system prompt, no solved examples)."""
        from glotbench.prompts import dialogue

        turns = [self.render_turn(sample, k) for k in range(min(self.n_turns, len(answers) + 1))]
        return dialogue.messages(turns, answers[:len(turns)])

    def turn_request(self, sample: Sample, answers: list[str], *, chat: bool, settings: RequestSettings,
                     sample_index: int = 0) -> GenRequest:
        """The request for turn ``len(answers) + 1``: what turn 1's request holds, then each earlier
        answer as the assistant's message and the next user turn (plain models: the same as one text,
        each earlier turn with its answer on the next line)."""
        common, template = self._sampling(settings)
        if chat:
            later = self.dialogue(sample, answers)[1:]  # answer 1, turn 2, ...
            msgs = self.chat_messages(sample, settings.num_fewshot, settings.system_prompt) + later
            return template.attach(GenRequest(messages=settings.with_system(msgs), **common, sample_index=sample_index))
        p = self.spec.prompt
        system = settings.system_prompt
        if system is None and p.system:
            system = render(p.system, self._vars(sample), task=self.name, record=sample.id, field="prompt.system")
        shots = [(self.render_user(s), self.render_answer(s)) for s in self.fewshot_for(sample, settings.num_fewshot)]
        from glotbench.prompts.dialogue import plain_shots

        pairs, last = plain_shots(self.dialogue(sample, answers))
        return template.attach(GenRequest(prompt=plain_from_chat(system, shots + pairs, last, p.answer_cue), **common,
                                          sample_index=sample_index))

    def render_answer(self, sample: Sample) -> str:
        return render(self.spec.fewshot.answer, self._vars(sample), task=self.name, record=sample.id, field="fewshot.answer")

    def chat_messages(self, sample: Sample, num_fewshot: int | None = None, system: str | None = None) -> list[dict]:
        """``system``: a run's --system-prompt, replacing the task's own."""
        msgs: list[dict] = []
        if system is not None:
            msgs.append({"role": "system", "content": system})
        elif self.spec.prompt.system:
            text = constant_text(self.spec.prompt.system)  # a system prompt without placeholders: the same every item
            if text is None:
                text = render(self.spec.prompt.system, self._vars(sample), task=self.name, record=sample.id,
                              field="prompt.system")
            msgs.append({"role": "system", "content": text})
        for shot in self.fewshot_for(sample, num_fewshot):
            msgs.append({"role": "user", "content": self.render_user(shot)})
            msgs.append({"role": "assistant", "content": self.render_answer(shot)})
        msgs.append({"role": "user", "content": self.render_user(sample)})
        return msgs

    def plain_layout(self, num_fewshot: int | None = None, system: str | None = None) -> str | None:
        """How :meth:`plain_prompt` lays the chat prompt out as one text, for the note a run prints once
        when its model reads plain text; None when there is nothing to lay out (the task writes its own
        ``prompt.plain``, or the prompt is one user message)."""
        p = self.spec.prompt
        if p.plain:
            return None
        n = self.spec.fewshot.n if num_fewshot is None else num_fewshot
        cue = f" {p.answer_cue!r}" if p.answer_cue else ""
        parts = ["the system prompt"] if (p.system or system is not None) else []
        if n > 0 and self.spec.fewshot.split:
            parts.append(f"{n} solved example(s) (question, then{cue} and the answer)")
        if not parts and not cue:
            return None
        parts.append(f"the question{', then the answer cue' + cue if cue else ''}")
        return ", ".join(parts) + " in one text, separated by blank lines (prompt.plain in the task file sets another)"

    def plain_prompt(self, sample: Sample, num_fewshot: int | None = None, system: str | None = None) -> str:
        """``system``: a run's --system-prompt, replacing the task's own."""
        p = self.spec.prompt
        if p.plain:
            shots = [{"question": self.render_user(s), "answer": self.render_answer(s)} for s in self.fewshot_for(sample, num_fewshot)]
            return render(p.plain, {**self._vars(sample), "fewshot": shots, "system": (p.system or "") if system is None else system},
                          task=self.name, record=sample.id, field="prompt.plain")
        if system is None and p.system:
            system = constant_text(p.system)
            if system is None:
                system = render(p.system, self._vars(sample), task=self.name, record=sample.id, field="prompt.system")
        shots = [(self.render_user(s), self.render_answer(s)) for s in self.fewshot_for(sample, num_fewshot)]
        return plain_from_chat(system, shots, self.render_user(sample), p.answer_cue)

    def gold_option(self, sample: Sample) -> int | None:
        """The gold option's position among the sample's options (lm-eval's ``target`` of a
        ``multiple_choice`` doc), or None when the gold is not one of the labels."""
        labels = [str(x) for x in sample.labels or []]
        return labels.index(str(sample.target)) if str(sample.target) in labels else None

    # ---------------------------------------------------------------- requests
    def ll_options(self, sample: Sample) -> list[str]:
        """The option strings ``--mode loglikelihood`` scores, one per option (each is sent after
        :data:`LL_DELIMITER`): the labels, or the option texts with ``ll_continuation: text``."""
        conts = sample.labels if self.spec.prompt.ll_continuation == "label" else sample.choices
        return [str(c) for c in conts]

    def requests(self, sample: Sample, *, mode: str, chat: bool, settings: RequestSettings) -> list[Request]:
        """The first requests of an item (a multi-turn task: turn 1's; the engine asks :meth:`turn_request`
        for the next turns)."""
        if self.spec.prompt.turns and mode != "generate":
            raise TaskSpecError(f"{self.spec_where}: field 'prompt.turns': a multi-turn task is answered by generation, "
                                f"not in --mode {mode}")
        if mode == ROLLING:  # log P(text): an empty context (glotbench.models.rolling)
            return [LoglikelihoodRequest(context="", continuation=sample.vars["text"])]
        if mode == "loglikelihood":
            if self.spec.output_type != "multiple_choice":
                raise TaskSpecError(f"task {self.name}: loglikelihood scoring needs a multiple_choice task")
            context = self.plain_prompt(sample, settings.num_fewshot, settings.system_prompt)
            return [LoglikelihoodRequest(context=context, continuation=LL_DELIMITER + c) for c in self.ll_options(sample)]
        common, template = self._sampling(settings)
        if chat:
            base = dict(messages=settings.with_system(self.chat_messages(sample, settings.num_fewshot, settings.system_prompt)))
        else:
            base = dict(prompt=self.plain_prompt(sample, settings.num_fewshot, settings.system_prompt))
        return [template.request(base.get("messages"), base.get("prompt"), k) for k in range(settings.samples)]

    def _sampling(self, settings: RequestSettings) -> tuple[dict, KeyTemplate]:
        """``settings.sampling(spec.generation)`` made once per settings (the same objects in every
        request: a request's keyed JSON is then the template's head + its messages + tail)."""
        cached = self.__dict__.get("_sampling_for")
        if cached is None or cached[0] is not settings or cached[1] is not self.spec.generation:
            common = settings.sampling(self.spec.generation)
            cached = (settings, self.spec.generation, common, KeyTemplate(common))
            self.__dict__["_sampling_for"] = cached
        return cached[2], cached[3]

    # ---------------------------------------------------------------- scoring
    @cached_property
    def pack(self):
        from glotbench.languages import get_pack

        return get_pack(self.spec.language)

    @staticmethod
    def generation_reads_pack(spec: TaskSpec) -> bool:
        """Whether a task of this class written as ``spec`` reads the language pack to score generated text
        (checked when the task file is read: names.check_names)."""
        return True

    def reads_pack(self, mode: str) -> bool:
        """Whether scoring in ``mode`` reads the language pack: generated text is parsed with it
        (answer words, option labels); option log-likelihoods and a text's log-likelihood are not."""
        return mode == "generate"

    def language_pack(self, mode: str):
        """The language pack the task is scored with in ``mode``, resolved before any request: a
        language without a pack is a TaskSpecError naming the task file's field ``language`` when
        scoring reads the pack, and None when it does not (that language needs none)."""
        from glotbench.languages.pack import UnknownLanguageError

        try:
            return self.pack
        except UnknownLanguageError as err:
            if self.reads_pack(mode):
                raise TaskSpecError(f"{self.spec_where}: field 'language': {err}") from None
            return None

    @property
    def spec_where(self) -> str:
        """How messages name this task's file."""
        return str(self.spec_path or self.name)

    @cached_property
    def extractor(self):
        from glotbench.extract import get_extractor

        return get_extractor(self.spec.extractor.name, where=f"{self.spec_where}: field 'extractor.name'")

    @cached_property
    def scorer(self):
        from glotbench.scoring.scorers import get_scorer

        return get_scorer(self.spec.scorer, where=f"{self.spec_where}: field 'scorer'")

    def extract(self, text: str, sample: Sample) -> Any:
        return self.explain_extraction(text, sample).value

    @cached_property
    def _explain(self):
        from glotbench.extract import explainer

        return explainer(self.extractor)  # glotbench.extract.explain's choice, made once per task

    def explain_extraction(self, text: str, sample: Sample):
        """The extracted answer and the rule that produced it (:class:`glotbench.extract.Extraction`)."""
        sample_view = {**sample.vars, "labels": sample.labels, "choices": sample.choices}
        return self._explain(text, sample=sample_view, pack=self.pack, **self.spec.extractor.options)

    def score(self, sample: Sample, outputs: list[Output], *, mode: str) -> Scored:
        if mode == ROLLING:
            return score_text(sample.vars["text"], outputs[0])
        if mode == "loglikelihood":
            return score_loglikelihood(sample, outputs, self.ll_options(sample))
        first: GenResult = outputs[self.n_turns - 1]  # a multi-turn task: the answer to the last turn
        extraction = self.explain_extraction(first.text, sample)
        extracted = extraction.value
        pred, values = self.scorer.fn(extracted, sample.target, sample=sample, pack=self.pack, **self.spec.scorer_options)
        return Scored(pred=pred, values=values, extracted=extracted, rule=extraction.rule)

    # ---------------------------------------------------------------- judging
    # Tasks graded by an LLM judge set needs_judge and override the three methods below; the
    # engine sends judge requests through the journal like model requests (cached, resumable).
    needs_judge: bool = False

    def check_run_mode(self, mode: str) -> None:
        """Raise a one-line TaskSpecError when the task cannot be scored in ``mode`` (the run's plan
        calls it before any request). Default: every mode the engine gives it is fine."""

    def check_ready(self) -> None:
        """Raise a one-line GlotbenchError if a file the task needs besides its data (a grading or
        prompt file) cannot be read. A run calls it before the model is loaded, so a judged task
        never finds its grader missing after every model request. Default: the scorer's own
        ``check_ready(where, **scorer_options)`` when its function has one (a local encoder it needs); one
        that takes ``task_fields`` also gets the names the task maps (and defaults)."""
        ready = getattr(self.scorer.fn, "check_ready", None)
        if callable(ready):
            import inspect

            kw = dict(self.spec.scorer_options)
            if "task_fields" in inspect.signature(ready).parameters:  # a scorer that reads an item's field by name
                kw["task_fields"] = set(self.spec.fields) | set(self.spec.default)
            ready(f"{self.spec_where}: field 'scorer_options'", **kw)

    # `glotbench analyze thinking --judge`: how a reasoning trace is cut into thoughts
    # ("fib_split": the judge splits it; "shift_expression": the judge names thought-shift phrases)
    thinking_segmenting: str = "fib_split"

    def judge_requests(self, sample: Sample, outputs: list[GenResult]) -> list[GenRequest]:
        """One judge request per model output (Best-of-N items have several)."""
        raise NotImplementedError

    def parse_judgment(self, sample: Sample, index: int, judge_text: str) -> dict:
        """The judge's verdict on output ``index`` as a JSON-able dict (keep the raw text)."""
        raise NotImplementedError

    def score_judged(self, sample: Sample, outputs: list[GenResult], verdicts: list[dict]) -> Scored:
        raise NotImplementedError

    def recorded_verdict(self, grade: str | None, source: str) -> dict:
        """The verdict for a grade that came with the answers (``--model recorded:FILE -M grade=COL``
        without ``--judge``): CORRECT / INCORRECT / NOT_ATTEMPTED as a judge would have given it; a row
        without a grade is a judge error (counted, out of the denominators). ``source``: the file's judge id."""
        if grade is None:
            return {"grade": "JUDGE_ERROR", "reason": "no grade in the file", "source": "recorded", "judge": source}
        return {"grade": grade, "reason": "grade from file", "source": "recorded", "judge": source}

    def extra_summary(self, records: list["SampleRecord"], out_dir: Path | None, *, n_boot: int = 1000,
                      seed: int = 0) -> dict:
        """Task-level analyses beyond the metric table (calibration, Best-of-N, per-category
        tables...), merged into the task's entry in results.json. ``records`` are the scored
        :class:`~glotbench.sample_record.SampleRecord` s; ``out_dir`` is where plots go; ``n_boot``
        and ``seed`` are the run's bootstrap settings, which any interval here must use (as the
        metric table's do). Default: the scorer's own ``run_summary(**scorer_options)`` when its
        function has one (the BERTScore encoder a run used)."""
        summary = getattr(self.scorer.fn, "run_summary", None)
        return dict(summary(**self.spec.scorer_options)) if callable(summary) else {}

    def metric_names(self, mode: str) -> list[str]:
        if mode == "loglikelihood":
            return list(LL_METRICS)
        if mode == ROLLING and "metrics" not in self.spec.model_fields_set:
            return list(ROLLING_METRICS)
        return list(self.spec.metrics)


def score_text(text: str, result: LoglikelihoodResult) -> Scored:
    """A text's log-likelihood as per-item values the perplexity metrics sum (glotbench.scoring.perplexity):
    ``nll`` (nats), ``n_tokens``, ``n_bytes`` (UTF-8) and ``n_words`` (whitespace-separated, as lm-eval splits)
    of the part the backend scored (an echo server leaves the first token out: ``unscored_chars``)."""
    import re

    scored = text[result.unscored_chars:]
    values = {"nll": -float(result.logprob), "n_tokens": float(result.n_tokens),
              "n_bytes": float(len(scored.encode("utf-8"))), "n_words": float(len(re.split(r"\s+", scored)))}
    return Scored(pred=round(float(result.logprob), 6), values=values,
                  extracted={"logprob": result.logprob, "unscored_chars": result.unscored_chars})


def ll_norm_predictions(logprobs: list[float], options: list[str], n_tokens: list[int]) -> dict[str, int]:
    """The index each rule picks (the first on a tie, as ``np.argmax``).

    ``norm`` is lm-eval's ``acc_norm``: the log-probability divided by the number of characters of
    the option as scored (``len(choice)`` of ``doc_to_choice``: the delimiter space is not counted);
    ``norm_bytes`` divides by its UTF-8 bytes, ``norm_tokens`` by the continuation's token count as
    the backend scored it (tokenizer-dependent). A zero length counts as 1.
    """
    def pick(lengths: list[int]) -> int:
        return max(range(len(logprobs)), key=lambda k: logprobs[k] / max(1, lengths[k]))

    return {
        "raw": max(range(len(logprobs)), key=lambda k: logprobs[k]),
        "norm": pick([len(o) for o in options]),
        "norm_bytes": pick([len(o.encode("utf-8")) for o in options]),
        "norm_tokens": pick(n_tokens),
    }


def score_loglikelihood(sample: Sample, outputs: list[LoglikelihoodResult], options: list[str]) -> Scored:
    """Pick the option with the highest log-probability, raw and length-normalised
    (:func:`ll_norm_predictions`). ``options``: the strings scored, one per label, without the
    delimiter (:meth:`Task.ll_options`). Each option's softmax probability over the raw
    log-likelihoods is kept as ``values["ll_p:<label>"]`` (the calibration metrics read it:
    glotbench.scoring.ll_calibration)."""
    if len(options) != len(outputs) or len(outputs) != len(sample.labels or []):
        raise ValueError(f"task {sample.task}: item {sample.id}: {len(outputs)} log-likelihoods for "
                         f"{len(options)} options and {len(sample.labels or [])} labels")
    lps = [o.logprob for o in outputs]
    picks = ll_norm_predictions(lps, options, [o.n_tokens for o in outputs])
    gold = str(sample.target)
    preds = {rule: sample.labels[k] for rule, k in picks.items()}
    values = {"correct": float(preds["raw"] == gold)}
    from glotbench.scoring.ll_calibration import PROB_PREFIX, softmax

    for label, p in zip(sample.labels, softmax(lps)):
        values[PROB_PREFIX + str(label)] = p
    extracted = {"logprobs": lps}
    for rule in ("norm", "norm_bytes", "norm_tokens"):
        values[f"correct_{rule}"] = float(preds[rule] == gold)
        extracted[f"pred_{rule}"] = preds[rule]
    return Scored(pred=preds["raw"], values=values, extracted=extracted)
