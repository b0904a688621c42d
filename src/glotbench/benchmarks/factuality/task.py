"""SimpleQA-style short-answer factuality graded by an LLM judge (Chinese SimpleQA, HuSimpleQA,
or any dataset with a question and a gold answer: see docs/factuality.md).

The model answers each question (optionally N times, ``--samples N``); the judge grades every
answer CORRECT / INCORRECT / NOT_ATTEMPTED with the benchmark's own grading prompt. A judge reply
that cannot be read is a JUDGE_ERROR: counted and reported, never folded into NOT_ATTEMPTED.
The item's grade (its first answer's) is the ``pred`` the metrics read; the others feed Best-of-N.
"""

from __future__ import annotations

import ast
import hashlib
from functools import cached_property
from pathlib import Path
from typing import Any

from glotbench.errors import DataError
from glotbench.extract.thinking import strip_thinking
from glotbench.benchmarks.factuality.options import SimpleQAOptions, parse_options, where_of
from glotbench.benchmarks.factuality.prompts import FileTemplate, load_template
from glotbench.benchmarks.factuality import metrics_strict as strict_metrics  # noqa: F401  (registers the *_strict metrics)
from glotbench.tasks.judging.parse import parse_judge_output
from glotbench.tasks.judging.reference_parse import reference_grade
from glotbench.tasks.judging.prompts import GraderPrompt, load_grader
from glotbench.models.base import GenRequest, GenResult
from glotbench.extract.confidence import parse_stated_answer
from glotbench.scoring.grades import JUDGE_ERROR, grade_indicators, to_grade
from glotbench.tasks.spec import TaskSpec
from glotbench.tasks.request_settings import RequestSettings
from glotbench.tasks.task import Sample, Scored, Task


class SimpleQATask(Task):
    thinking_segmenting = "shift_expression"  # analyze thinking: the Chinese SimpleQA paper's split
    needs_judge = True

    def __init__(self, spec: TaskSpec, spec_path: Path | None = None):
        super().__init__(spec, spec_path)
        self.where = where_of(spec_path, spec.name)
        self.options: SimpleQAOptions = parse_options(spec.options, self.where)
        self._prompt_lang: str | None = None

    # ---------------------------------------------------------------- data
    def samples(self, split: str | None = None, limit: int | None = None) -> list[Sample]:
        try:
            return super().samples(split, limit)
        except DataError as err:
            if self.options.data_hint and "not found" in str(err):
                raise DataError(f"{err}; {self.options.data_hint}") from None
            raise

    def raw_records(self, split: str) -> list[dict]:
        records = super().raw_records(split)
        if not self.options.literal_fields:
            return records
        where = self.spec.dataset.splits.get(split, split)
        out = []
        for index, rec in enumerate(records):
            for name in self.options.literal_fields:  # simple-evals' CSV: metadata="{'topic': ..., 'answer_type': ...}"
                if isinstance(rec.get(name), str):
                    try:
                        rec = {**rec, name: ast.literal_eval(rec[name])}
                    except (ValueError, SyntaxError) as err:
                        raise DataError(f"{where}: record {index}: field '{name}': not a Python literal ({err})") from None
            out.append(rec)
        return out

    def build_sample(self, rec: dict, index: int, where: str) -> Sample:
        sample = super().build_sample(rec, index, where)
        for name in ("question", "target"):
            value = sample.target if name == "target" else sample.vars.get("question")
            if value is None or (isinstance(value, str) and not value.strip()):
                path = self.spec.fields.get(name, name)
                raise DataError(f"{where}: record {index} (id {sample.id}): field '{path}' ({name}) is empty")
        if self.options.retrieval is not None and not getattr(self, "_building_pool", False):
            r = self.options.retrieval
            sample.vars["retrieved"] = [p.to_dict() for p in self.retriever.retrieve(str(sample.vars["question"]), r.k)]
        return sample

    # ---------------------------------------------------------------- retrieval and few-shot pool
    @cached_property
    def retriever(self):
        from glotbench.prompts.retrieval import load_retriever

        r = self.options.retrieval
        return load_retriever(r.retriever, r.docs, r.args, f"{self.where}: options.retrieval")

    def data_fingerprint(self, split: str | None = None) -> str:
        fp = super().data_fingerprint(split)
        if self.options.retrieval is not None:  # the retrieved documents are part of the input
            docs = getattr(self.retriever, "passages", None)
            h = hashlib.sha256(repr(docs if docs is not None else self.options.retrieval).encode()).hexdigest()[:8]
            fp += f"+rag:{h}"
        if self.options.fewshot_pool:
            fp += f"+pool:{hashlib.sha256(self._pool_path().read_bytes()).hexdigest()[:8]}"
        return fp

    def _pool_path(self) -> Path:
        p = Path(self.options.fewshot_pool)
        own = Path(__file__).with_name("pools") / p
        path = own if own.is_file() else (p if p.is_absolute() else (self.spec_path.parent / p if self.spec_path else p))
        if not path.is_file():
            raise DataError(f"{self.where}: options.fewshot_pool: {p} not found")
        return path

    @cached_property
    def _fewshot_pool(self) -> list[Sample]:
        if not self.options.fewshot_pool:
            return super()._fewshot_pool
        from glotbench.data.loaders import iter_jsonl

        path = self._pool_path()
        self._building_pool = True
        try:
            return [self.build_sample(rec, i, str(path)) for i, (_, rec) in enumerate(iter_jsonl(path, encoding="utf-8"))]
        finally:
            self._building_pool = False

    def render_user(self, sample: Sample) -> str:
        text = self._render_question(sample)
        r = self.options.retrieval
        if r is None or "retrieved" not in sample.vars:
            return text
        passages = "\n".join(f"[{k}] {p['text']}" for k, p in enumerate(sample.vars["retrieved"], 1)) or "（无）"
        return r.template.replace("{passages}", passages).replace("{question}", text)

    # ---------------------------------------------------------------- prompts
    @cached_property
    def grader(self) -> GraderPrompt:
        return load_grader(self.options.grader)

    def check_ready(self) -> None:
        from glotbench.benchmarks.factuality.prompts import _read
        from glotbench.paths import benchmark_file

        self.grader  # noqa: B018 - loads (and checks) the grading prompt
        if self.options.prompt_file:
            _read(benchmark_file(self.options.prompt_file.path))

    def template(self, prompt_lang: str | None = None) -> FileTemplate | None:
        pf = self.options.prompt_file
        return load_template(pf, prompt_lang, self.where) if pf else None

    def _render_question(self, sample: Sample) -> str:
        tpl = self.template(self._prompt_lang)
        if tpl is None:
            return super().render_user(sample)
        return tpl.fill(self._vars(sample), f"{self.where}: record {sample.index}")

    def requests(self, sample: Sample, *, mode: str, chat: bool, settings: RequestSettings) -> list:
        self._prompt_lang = settings.prompt_lang
        return super().requests(sample, mode="generate", chat=chat, settings=settings)

    # ---------------------------------------------------------------- answers
    def read_answer(self, text: str | None) -> dict[str, Any]:
        """The reply without its thinking trace; with the confidence prompt, its answer and confidence."""
        final, _trace = strip_thinking(text or "")
        view: dict[str, Any] = {"text": final.strip()}
        if self.options.confidence:
            stated = parse_stated_answer(final)
            view.update(answer=stated.answer, confidence=stated.confidence, confidence_error=stated.error,
                        confidence_scale=stated.scale)
        return view

    def judge_input(self, view: dict[str, Any]) -> str:
        if self.options.judge_sees == "answer" and view.get("answer") is not None:
            return view["answer"]
        return view["text"]

    # ---------------------------------------------------------------- judging
    def judge_requests(self, sample: Sample, outputs: list[GenResult]) -> list[GenRequest]:
        reqs = []
        for out in outputs:
            msgs = self.grader.render(sample.vars["question"], sample.target, self.judge_input(self.read_answer(out.text)))
            # Greedy and without sample_index: the same answer to the same question gets one
            # judge call (and one grade), whichever of the N answers it was.
            reqs.append(GenRequest(messages=tuple(msgs), max_tokens=self.options.judge_max_tokens, temperature=0.0))
        return reqs

    def parse_judgment(self, sample: Sample, index: int, judge_text: str) -> dict:
        """``grade`` is the headline grade: the benchmark's own reply rule (``judge_rule: reference``,
        the default) or glotbench's strict parse; both are kept (``reference_grade``, ``strict_grade``)."""
        verdict = parse_judge_output(self.grader.parser, judge_text)
        ref, ref_reason = reference_grade(self.grader.parser, judge_text)
        strict = verdict.to_dict()
        out = {**strict, "strict_grade": strict["grade"], "strict_reason": strict["reason"],
               "reference_grade": ref.value, "reference_reason": ref_reason,
               "judge_rule": self.options.judge_rule,
               "grader": self.grader.name, "grader_version": self.grader.version}
        if self.options.judge_rule == "reference":
            out.update(grade=ref.value, reason=ref_reason)
        return out

    def score_judged(self, sample: Sample, outputs: list[GenResult], verdicts: list[dict]) -> Scored:
        grades = [to_grade(v.get("grade", JUDGE_ERROR.value), f"{self.name}: item {sample.id}: verdict {k}")
                  for k, v in enumerate(verdicts)]
        views = [self.read_answer(o.text) for o in outputs]
        first = grades[0]
        values: dict[str, Any] = grade_indicators(first)
        strict = to_grade(verdicts[0].get("strict_grade", verdicts[0].get("grade", JUDGE_ERROR.value)),
                          f"{self.name}: item {sample.id}: strict verdict")
        values.update({f"strict_{k}": v for k, v in grade_indicators(strict).items()})
        detail: dict[str, Any] = {"grades": [g.value for g in grades],
                                  "judge_reasons": [v.get("reason", "") for v in verdicts],
                                  "judge_rule": verdicts[0].get("judge_rule", "strict"),
                                  "strict_grades": [v.get("strict_grade", v.get("grade")) for v in verdicts],
                                  "reference_grades": [v.get("reference_grade") for v in verdicts]}
        if "retrieved" in sample.vars:
            detail["retrieved"] = sample.vars["retrieved"]
        if self.options.confidence:
            values["confidence"] = views[0]["confidence"]
            detail["confidence"] = [v["confidence"] for v in views]
            detail["confidence_error"] = [v["confidence_error"] for v in views]
            detail["confidence_scale"] = [v["confidence_scale"] for v in views]
        return Scored(pred=None if first is JUDGE_ERROR else first.value, values=values,
                      extracted=self.judge_input(views[0]), detail=detail)

    # ---------------------------------------------------------------- summary
    def extra_summary(self, records: list["SampleRecord"], out_dir: Path | None, *, n_boot: int = 1000,
                      seed: int = 0) -> dict:
        from glotbench.benchmarks.factuality.summary import factuality_summary

        return factuality_summary(self, records, out_dir, n_boot=n_boot, seed=seed)

    def metric_names(self, mode: str) -> list[str]:
        """The YAML's metrics, then glotbench's strict-parse variants of them beside."""
        names = list(self.spec.metrics)
        return names + [f"{n}_strict" for n in names if f"{n}_strict" in strict_metrics.NAMES and f"{n}_strict" not in names]
