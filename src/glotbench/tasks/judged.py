"""The task a YAML file with a ``judge:`` declaration and no ``task_class`` runs: the model answers
the task's prompt, the declared judge grades each answer (docs/adding-a-task.md, "A judged task").

The judge's prompt sees ``question`` (the field mapped as ``question``, else the model's user turn),
``reference`` (= ``target``, the gold), ``answer`` (the model's reply without a thinking trace),
``prompt`` (the model's user turn), ``lang`` and every mapped field. Judge requests go through the
journal like every judge call (cached by request, resumable; a rerun sends nothing).

A multi-turn task (``prompt.turns``, docs/multi-turn.md) gets one judge request per turn's answer, as
MT-Bench grades each turn: ``question``/``prompt`` are that turn's user message, ``answer`` its answer,
``turn`` its number (1-based), ``dialogue`` the whole dialogue up to that answer and ``history`` the
turns before it (``"USER: ..."`` / ``"ASSISTANT: ..."`` blocks, glotbench.prompts.dialogue). Each turn's
values come as ``<value>_turn<k>``; the item's own value is the mean over its turns (None when a turn has
none: an excluded reply is never averaged as a number).
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path

from glotbench.errors import TaskSpecError
from glotbench.extract.thinking import strip_thinking
from glotbench.tasks.judging.declaration import PROMPT_VARIABLES, template_variables
from glotbench.tasks.judging.declared import SCORE_KEY, DeclaredJudge, metric_names
from glotbench.models.base import GenRequest, GenResult
from glotbench.tasks.spec import TaskSpec
from glotbench.tasks.request_settings import RequestSettings
from glotbench.tasks.task import Sample, Scored, Task

_MC_VARIABLES = ("labels", "choices", "choices_block", "labels_text")


class JudgedTask(Task):
    needs_judge = True

    def __init__(self, spec: TaskSpec, spec_path: Path | None = None):
        super().__init__(spec, spec_path)
        if spec.judge is None:
            raise TaskSpecError(f"{self.spec_where}: field 'judge': a judged task needs a judge declaration")
        self.judge = DeclaredJudge(spec.judge)
        self._prompt_lang: str | None = None
        self._check_judge_variables()

    @cached_property
    def _judge_template_variables(self) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for lang, turns in (self.spec.judge.prompt or {}).items():
            for part in ("system", "user"):
                src = getattr(turns, part)
                if src is not None:
                    field = f"judge.prompt.{lang}.{part}"
                    out[field] = template_variables(src, self.spec_where, field)
        return out

    def _check_judge_variables(self) -> None:
        """A name the grading prompt uses that no field, default or judge variable gives: one line."""
        known = set(PROMPT_VARIABLES) | set(self.spec.fields) | set(self.spec.default)
        if self.spec.output_type == "multiple_choice":
            known |= set(_MC_VARIABLES)
        pf = self.spec.judge.prompt_file
        checks = dict(self._judge_template_variables)
        if pf is not None:
            checks["judge.prompt_file.placeholders"] = set(pf.placeholders)
        for field, names in checks.items():
            unknown = sorted(names - known)
            if unknown:
                raise TaskSpecError(f"{self.spec_where}: field '{field}': unknown variable {unknown[0]!r} "
                                    f"(known: {', '.join(sorted(known))})")

    def extra_templates(self) -> list[str]:
        return [getattr(t, part) for t in (self.spec.judge.prompt or {}).values() for part in ("system", "user")
                if getattr(t, part)]

    @cached_property
    def prompt_variables(self) -> set[str]:
        judge_names: set[str] = set().union(*self._judge_template_variables.values()) if self._judge_template_variables else set()
        return super().prompt_variables | judge_names

    def check_ready(self) -> None:
        if self.spec.judge.prompt_file is not None:  # the grading prompt's file, read before any model call
            from glotbench.tasks.judging.prompts import _load_file_prompt

            _load_file_prompt(self.spec.judge)

    # ---------------------------------------------------------------- requests and judging
    def requests(self, sample: Sample, *, mode: str, chat: bool, settings: RequestSettings) -> list:
        self._prompt_lang = settings.prompt_lang
        return super().requests(sample, mode="generate", chat=chat, settings=settings)

    def reads_pack(self, mode: str) -> bool:
        return False  # scored from the judge's verdicts, not by parsing the answer

    def answer_of(self, out: GenResult) -> str:
        return strip_thinking(out.text or "")[0].strip()

    def judge_variables(self, sample: Sample, out: GenResult, earlier: list[GenResult] = ()) -> dict:
        """``earlier``: a multi-turn item's answers to the turns before ``out``'s (its chain's)."""
        if self.n_turns > 1:
            from glotbench.prompts.dialogue import transcript

            said = self.dialogue(sample, [self.fed_back(o) for o in [*earlier, out]])[:2 * (len(earlier) + 1)]
            turn = self.render_turn(sample, len(earlier))
            return {**self._vars(sample), "question": turn, "prompt": turn, "reference": sample.target,
                    "target": sample.target, "answer": self.answer_of(out), "turn": len(earlier) + 1,
                    "dialogue": transcript(said), "history": transcript(said[:-2])}
        prompt = self.render_user(sample)
        question = sample.vars.get("question")
        answer = self.answer_of(out)  # the dialogue variables yield to a mapped field of that name
        return {"turn": 1, "dialogue": transcript_of(prompt, answer), "history": "", **self._vars(sample),
                "question": prompt if question is None else question, "prompt": prompt,
                "reference": sample.target, "target": sample.target, "answer": answer}

    def judge_requests(self, sample: Sample, outputs: list[GenResult]) -> list[GenRequest]:
        """One per output; a multi-turn item's outputs are each chain's turns in order (engine.runner)."""
        lang = self.judge.prompt_language(self._prompt_lang, self.spec.language)
        d = self.spec.judge
        n = self.n_turns
        return [GenRequest(messages=tuple(self.judge.messages(
                    self.judge_variables(sample, o, outputs[k - k % n:k]), lang, task=self.name)),
                           max_tokens=d.max_tokens, temperature=d.temperature) for k, o in enumerate(outputs)]

    def parse_judgment(self, sample: Sample, index: int, judge_text: str) -> dict:
        return self.judge.read(judge_text)

    def recorded_verdict(self, grade: str | None, source: str) -> dict:
        return self.judge.verdict_from_grade(grade, source)

    def score_judged(self, sample: Sample, outputs: list[GenResult], verdicts: list[dict]) -> Scored:
        first = verdicts[0]
        values = self.judge.values(first) if self.n_turns == 1 else per_turn_values(
            [self.judge.values(v) for v in verdicts[:self.n_turns]])
        excluded = first.get("counted_as") == "excluded"
        pred = None if excluded else (first.get("grade") if self.spec.judge.grades is not None else first.get("score"))
        detail = {"judge": self.spec.judge.name, "judge_version": first.get("judge_version"),
                  "grades": [v.get("grade") for v in verdicts], "scores": [v.get("score") for v in verdicts],
                  "judge_reasons": [v.get("reason") for v in verdicts],
                  "unreadable": [bool(v.get("unreadable")) for v in verdicts]}
        if self.n_turns > 1:  # the item's grade is its turns' mean score (a number, or None)
            pred = values.get(SCORE_KEY)
        return Scored(pred=pred, values=values, extracted=self.answer_of(outputs[self.n_turns - 1]), detail=detail)

    def metric_names(self, mode: str) -> list[str]:
        """The task's ``metrics`` when it lists them, else those the judge declaration feeds."""
        if "metrics" in self.spec.model_fields_set:
            return list(self.spec.metrics)
        names = metric_names(self.spec.judge)
        if self.n_turns > 1 and "judge_score" in names:  # MT-Bench's per-turn scores beside the overall one
            names += [f"mean:{SCORE_KEY}_turn{k}" for k in range(1, self.n_turns + 1)]
        return names


def transcript_of(prompt: str, answer: str) -> str:
    """A one-turn dialogue as :func:`glotbench.prompts.dialogue.transcript` lays it out."""
    from glotbench.prompts.dialogue import transcript

    return transcript([{"role": "user", "content": prompt}, {"role": "assistant", "content": answer}])


def per_turn_values(turns: list[dict[str, float | None]]) -> dict[str, float | None]:
    """A multi-turn item's values: each turn's as ``<key>_turn<k>`` (1-based), and each key's mean over
    the turns, None when any turn has None there (an invalid score never enters an average as a number)."""
    out: dict[str, float | None] = {}
    for k, vals in enumerate(turns, 1):
        out.update({f"{key}_turn{k}": v for key, v in vals.items()})
    for key in turns[0]:
        got = [t.get(key) for t in turns]
        out[key] = None if any(v is None for v in got) else sum(got) / len(got)
    return out
