"""The OpenHuEval tasks as engine :class:`~glotbench.tasks.task.Task` subclasses.

The YAML files in ``benchmarks/openhueval/tasks/`` name these classes. Prompts come from the
benchmark's own prompt files (``openhueval/prompts/``, shipped in the package's files/), built by the task
modules (:mod:`.matching_fib`, :mod:`.standard_fib`, :mod:`.proverb_rea`, :mod:`.wildbench`);
the YAML carries the data file, generation settings, metrics, slices and ``options``:

* ``prompt_lang`` (``en`` | ``hu``): default prompt variant; ``--prompt-lang`` overrides it;
* ``reference_regex`` (FIB): read the answer with the reference's ``\\{.*?\\}`` regex instead
  of the first balanced JSON object;
* ``judge_max_tokens`` (OE, WildBench; for WildBench it overrides its judge file's ``max_tokens``),
  ``judge_reference`` (OE: ``correct_option`` | ``en_expl``), ``lenient_score`` (WildBench: also accept
  an unquoted ``"score": 8``).

Each task also says how one of its scored records maps to CORRECT / INCORRECT /
NOT_ATTEMPTED (:meth:`OpenHuEvalTask.thinking_outcome`), for ``glotbench analyze thinking``.
"""

from __future__ import annotations

import math
from functools import cached_property
from pathlib import Path

from glotbench.data.loaders import file_sha256
from glotbench.errors import TaskSpecError
from glotbench.models.base import GenRequest, GenResult
from glotbench.benchmarks.openhueval import matching_fib, proverb_rea, standard_fib, wildbench
from glotbench.benchmarks.openhueval.common import PROMPT_DIR, strip_think
from glotbench.paths import benchmark_file
from glotbench.prompts import dialogue
from glotbench.prompts.render import plain_from_chat
from glotbench.sample_record import SampleRecord
from glotbench.scoring.metrics import ScoredItem
from glotbench.tasks.request_settings import RequestSettings
from glotbench.tasks.task import Output, Sample, Scored, Task

PROMPT_LANGS = ("en", "hu")


# The metrics these tasks feed (blank_accuracy, question_accuracy, accuracy_2cq, wb_score ...)
# are declared in glotbench.benchmarks.openhueval.metrics, registered by the package itself.


# ---------------------------------------------------------------- shared base

class OpenHuEvalTask(Task):
    """Records are read and checked by the task module's ``load``; the whole record rides in
    ``sample.vars["record"]`` and the spec's ``slice_by`` fields become the sample metadata."""

    module = None  # the task module (load, REQUIRED, PROMPT_FILE)
    id_field = "qid"
    target_field = "answer"
    prompt_files: tuple[str, ...] = ()

    def check_ready(self) -> None:
        from glotbench.benchmarks.openhueval.common import load_prompts

        for name in self.prompt_files:
            load_prompts(name)

    # -- data
    def raw_records(self, split: str) -> list[dict]:
        return self.module.load(str(self.split_path(split)))

    def build_sample(self, rec: dict, index: int, where: str) -> Sample:
        sid = rec.get(self.id_field)
        return Sample(task=self.name, id=str(index if sid is None else sid), index=index, vars={"record": rec},
                      target=rec.get(self.target_field), metadata=self.metadata_of(rec))

    def metadata_of(self, rec: dict) -> dict:
        return {f: rec.get(f) for f in self.spec.slice_by}

    def data_fingerprint(self, split: str | None = None) -> str:
        """The data file's hash plus the benchmark prompt files' (shipped with glotbench: paths.benchmark_file)."""
        parts = [super().data_fingerprint(split)]
        for name in self.prompt_files:
            p = benchmark_file(f"{PROMPT_DIR}/{name}")
            parts.append(file_sha256(p)[:8] if p.is_file() else f"missing:{name}")
        return "+".join(parts)

    # -- prompts
    def prompt_lang(self, settings: RequestSettings | None) -> str:
        lang = (settings.prompt_lang if settings is not None else None) or self.spec.options.get("prompt_lang", "en")
        if lang not in PROMPT_LANGS:
            raise TaskSpecError(f"task {self.name}: prompt language {lang!r} is not one of {', '.join(PROMPT_LANGS)} (--prompt-lang)")
        return lang

    def plain_layout(self, num_fewshot: int | None = None, system: str | None = None) -> str | None:
        return None  # one user message: its text is the plain prompt

    def gen_request(self, text: str, *, chat: bool, settings: RequestSettings) -> GenRequest:
        common = settings.sampling(self.spec.generation)
        if chat:
            return GenRequest(messages=settings.with_system(({"role": "user", "content": text},)), **common)
        return GenRequest(prompt=text, **common)

    def judge_request(self, messages: list[dict]) -> GenRequest:
        """Judge limits as the reference configs set them (``judge_max_tokens``, ``judge_temperature``
        in the YAML; docs/openhueval.md lists the values and where they come from)."""
        return GenRequest(messages=tuple(messages), max_tokens=int(self.spec.options.get("judge_max_tokens", 8192)),
                          temperature=float(self.spec.options.get("judge_temperature", 0.0)))

    @property
    def reference_regex(self) -> bool:
        return bool(self.spec.options.get("reference_regex", True))

    @staticmethod
    def record(sample: Sample) -> dict:
        return sample.vars["record"]

    # -- thinking analysis
    def thinking_outcome(self, record: SampleRecord) -> str | None:
        """CORRECT / INCORRECT / NOT_ATTEMPTED for a scored sample record (None: not defined)."""
        return None


# ---------------------------------------------------------------- FIB

class _FibTask(OpenHuEvalTask):
    """The headline numbers read the answer with ``options.reference_regex`` (default true: the
    reference's ``\\{.*?\\}`` + strict ``json.loads``); the repairing reader (first balanced
    object, quotes and trailing commas fixed) is scored beside it as ``*_repaired``."""

    def score(self, sample: Sample, outputs: list[Output], *, mode: str) -> Scored:
        rec, text = self.record(sample), outputs[0].text
        item = self.module.score(rec, text, reference_regex=self.reference_regex)
        repaired = item if not self.reference_regex else self.module.score(rec, text, reference_regex=False)
        values = {**item.values,
                  "blank_correct_repaired": repaired.values["blank_correct"],
                  "question_correct_repaired": repaired.values["question_correct"]}
        return Scored(pred=item.pred, values=values, extracted=item.pred,
                      detail={"blanks": item.metadata["blanks"], "n_returned": item.metadata["n_returned"],
                              "reader": "reference" if self.reference_regex else "repairing",
                              "blanks_repaired": repaired.metadata["blanks"]})

    def thinking_outcome(self, record: SampleRecord) -> str | None:
        if record.pred is None:
            return "NOT_ATTEMPTED"
        return "CORRECT" if record.value_map.get("question_correct") == 1.0 else "INCORRECT"


class MatchingFIBTask(_FibTask):
    """HuMatchingFIB: one option letter per ``#k#`` blank; blank- and question-level accuracy."""

    module = matching_fib
    prompt_files = (matching_fib.PROMPT_FILE,)

    def requests(self, sample: Sample, *, mode: str, chat: bool, settings: RequestSettings) -> list[GenRequest]:
        text = matching_fib.build_prompt(self.record(sample), self.prompt_lang(settings))
        return [self.gen_request(text, chat=chat, settings=settings)]


class StandardFIBTask(_FibTask):
    """HuStandardFIB: open blanks, fuzzy-matched (ratio > 70 for every accepted variant)."""

    module = standard_fib
    target_field = "answers"
    prompt_files = (standard_fib.PROMPT_FILE,)

    def requests(self, sample: Sample, *, mode: str, chat: bool, settings: RequestSettings) -> list[GenRequest]:
        text = standard_fib.build_prompt(self.record(sample), self.prompt_lang(settings))
        return [self.gen_request(text, chat=chat, settings=settings)]


# ---------------------------------------------------------------- HuProverbRea

class ProverbRea2CQTask(OpenHuEvalTask):
    """HuProverbRea two-choice: two requests per item (correct option first, then flipped); an
    item is right only when both orders are. ``pred`` is None when either order did not parse."""

    module = proverb_rea
    prompt_files = (proverb_rea.PROMPT_FILE,)

    def requests(self, sample: Sample, *, mode: str, chat: bool, settings: RequestSettings) -> list[GenRequest]:
        return [self.gen_request(p["prompt"], chat=chat, settings=settings)
                for p in proverb_rea.build_2cq_prompts(self.record(sample), self.prompt_lang(settings))]

    def build_sample(self, rec: dict, index: int, where: str) -> Sample:
        s = super().build_sample(rec, index, where)
        s.target = {"correct_first": "1", "flipped": "2"}
        return s

    def score(self, sample: Sample, outputs: list[Output], *, mode: str) -> Scored:
        item = proverb_rea.score_2cq(self.record(sample), dict(zip(proverb_rea.ORDERS, (o.text for o in outputs))))
        outcome = item.metadata["outcome"]
        return Scored(pred=None if outcome == proverb_rea.FAIL_PARSE else item.pred,
                      values={"correct": item.values["correct"], "fail_parse": float(outcome == proverb_rea.FAIL_PARSE)},
                      extracted=item.pred, detail={"outcome": outcome, "order_correct": item.metadata["order_correct"]})

    def thinking_outcome(self, record: SampleRecord) -> str | None:
        outcome = (record.detail or {}).get("outcome")
        return {proverb_rea.CORRECT: "CORRECT", proverb_rea.INCORRECT: "INCORRECT",
                proverb_rea.FAIL_PARSE: "NOT_ATTEMPTED"}.get(outcome)


class ProverbReaOETask(OpenHuEvalTask):
    """HuProverbRea open-ended: a one-sentence explanation, judged YES/NO against the correct
    option (or the English explanation, ``options.judge_reference: en_expl``)."""

    module = proverb_rea
    prompt_files = (proverb_rea.PROMPT_FILE,)
    needs_judge = True

    def requests(self, sample: Sample, *, mode: str, chat: bool, settings: RequestSettings) -> list[GenRequest]:
        text = proverb_rea.build_oe_prompt(self.record(sample), self.prompt_lang(settings))
        return [self.gen_request(text, chat=chat, settings=settings)]

    def build_sample(self, rec: dict, index: int, where: str) -> Sample:
        s = super().build_sample(rec, index, where)
        s.target = proverb_rea.correct_option(rec)
        return s

    def judge_requests(self, sample: Sample, outputs: list[GenResult]) -> list[GenRequest]:
        ref = self.spec.options.get("judge_reference", "correct_option")
        return [self.judge_request(proverb_rea.build_oe_judge_messages(self.record(sample), o.text, ref)) for o in outputs]

    def parse_judgment(self, sample: Sample, index: int, judge_text: str) -> dict:
        return {"verdict": proverb_rea.parse_oe_verdict(judge_text), "raw": judge_text}

    def score_judged(self, sample: Sample, outputs: list[GenResult], verdicts: list[dict]) -> Scored:
        v = verdicts[0]["verdict"]
        return Scored(pred=None if v == proverb_rea.UNCLEAR else v,
                      values={"correct": float(v == proverb_rea.CORRECT), "unclear": float(v == proverb_rea.UNCLEAR)},
                      extracted=strip_think(outputs[0].text), detail={"outcome": v})

    def thinking_outcome(self, record: SampleRecord) -> str | None:
        # An unclear judge reply says nothing about the answer: no outcome.
        return {proverb_rea.CORRECT: "CORRECT", proverb_rea.INCORRECT: "INCORRECT"}.get(
            (record.detail or {}).get("outcome"))


# ---------------------------------------------------------------- HuWildBench

class WildBenchTask(OpenHuEvalTask):
    """HuWildBench: the model answers the conversation; a judge scores it 1-10 against the
    item's checklist; WB-Score = mean x 10. Slices: the group of the item's primary tag;
    ``by_task_group`` in results.json counts an item in every group of its tags (reference)."""

    module = wildbench
    id_field = "session_id"
    target_field = "checklist"
    prompt_files = (wildbench.JUDGE_FILE, wildbench.GROUPS_FILE)
    needs_judge = True

    @cached_property
    def groups(self) -> dict:
        from glotbench.benchmarks.openhueval.common import load_prompts

        return load_prompts(wildbench.GROUPS_FILE)["TASK_GROUP_NEW"]

    def metadata_of(self, rec: dict) -> dict:
        meta = super().metadata_of(rec)
        if "task_group" in self.spec.slice_by:
            meta["task_group"] = self.groups.get(rec["primary_tag"], "other")
        return meta

    def requests(self, sample: Sample, *, mode: str, chat: bool, settings: RequestSettings) -> list[GenRequest]:
        rec = self.record(sample)
        common = settings.sampling(self.spec.generation)
        if chat:
            return [GenRequest(messages=settings.with_system(wildbench.build_messages(rec)), **common)]
        shots, last = dialogue.plain_shots(rec["turn"])  # the layout of a multi-turn task's later turns
        return [GenRequest(prompt=plain_from_chat(None, shots, last, ""), **common)]

    def plain_layout(self, num_fewshot: int | None = None, system: str | None = None) -> str | None:
        return ("each earlier user turn with its answer on the next line, then the last user turn, separated by "
                "blank lines")

    @cached_property
    def judge(self) -> wildbench.DeclaredJudge:
        """The checklist judge the task file names (``judge: hu_wildbench.judge.yaml``)."""
        from glotbench.tasks.judging.declared import DeclaredJudge

        return DeclaredJudge(self.spec.judge) if self.spec.judge is not None else wildbench.judge_declaration()

    def judge_requests(self, sample: Sample, outputs: list[GenResult]) -> list[GenRequest]:
        d, opts = self.judge.decl, self.spec.options  # the task's judge_max_tokens / judge_temperature win
        return [GenRequest(messages=({"role": "user", "content": wildbench.build_judge_prompt(self.record(sample), o.text,
                                                                                             self.judge)},),
                           max_tokens=int(opts.get("judge_max_tokens", d.max_tokens)),
                           temperature=float(opts.get("judge_temperature", d.temperature))) for o in outputs]

    def parse_judgment(self, sample: Sample, index: int, judge_text: str) -> dict:
        lenient = bool(self.spec.options.get("lenient_score", False))
        return {**wildbench.parse_judgement(judge_text, lenient=lenient, judge=self.judge), "raw": judge_text}

    def score_judged(self, sample: Sample, outputs: list[GenResult], verdicts: list[dict]) -> Scored:
        s = verdicts[0]["score"]
        rec = self.record(sample)
        return Scored(pred=s, values={"score": s, "wb_score": None if s is None else 10.0 * s},
                      extracted=strip_think(outputs[0].text),
                      detail={"task_groups": wildbench.task_groups(rec, self.groups),
                              "strengths": verdicts[0].get("strengths"), "weaknesses": verdicts[0].get("weaknesses")})

    def extra_summary(self, records: list[SampleRecord], out_dir: Path | None, *, n_boot: int = 1000,
                      seed: int = 0) -> dict:
        items = [ScoredItem(gold=None, pred=r.pred, values=r.value_map,
                            metadata={"task_group": (r.detail or {}).get("task_groups") or []}) for r in records]
        by_group = wildbench.summarize_by_group(items)
        return {"by_task_group": {g: {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in d.items()}
                                  for g, d in by_group.items()}}
