"""The option-order analysis (Chinese SimpleQA App. C) for any short-answer task: the same
questions as multiple choice, as multiple choice with the options shuffled, and open-ended.

A task YAML names the short-answer task it is built from::

    task_class: glotbench.benchmarks.factuality.option_order:OptionOrderTask
    options:
      base_task: chinese_simpleqa   # any task whose samples have a question and a short gold answer
      format: mc                    # mc | mc_shuffled
      n_options: 4
      seed: 1234
      answer_type_field: null       # a record field holding the answer type (else the heuristic)

Distractors are other items' gold answers **of the same answer type** (dates with dates, persons with
persons; :mod:`glotbench.benchmarks.factuality.answer_types`), drawn with a seed per item, never equal to the
gold. ``mc`` places the gold at a seeded position; ``mc_shuffled`` shows the same options in another
order in which the gold sits elsewhere. The open-ended accuracy is the base task itself (judged).
``glotbench analyze option-order RUN`` prints the three accuracies and the drops.
"""

from __future__ import annotations

import random
from functools import cached_property
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from glotbench.errors import DataError, TaskSpecError
from glotbench.benchmarks.factuality.answer_types import answer_type
from glotbench.prompts.render import choices_block
from glotbench.tasks.task import Sample, Task


class OptionOrderOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    base_task: str
    format: Literal["mc", "mc_shuffled"] = "mc"
    n_options: int = 4
    seed: int = 1234
    answer_type_field: str | None = None
    or_word: str = "or"  # joins the last two labels in {{ labels_text }}


class OptionOrderTask(Task):
    @cached_property
    def opts(self) -> OptionOrderOptions:
        try:
            return OptionOrderOptions.model_validate(self.spec.options)
        except ValidationError as err:
            first = err.errors()[0]
            loc = ".".join(str(p) for p in first["loc"])
            msg = "unknown field" if first["type"] == "extra_forbidden" else first["msg"]
            raise TaskSpecError(f"{self.spec_path or self.name}: field 'options.{loc}': {msg}") from None

    @cached_property
    def base(self) -> Task:
        from glotbench.tasks.registry import resolve

        return resolve([self.opts.base_task])[0]

    def data_fingerprint(self, split: str | None = None) -> str:
        return self.base.data_fingerprint(split)

    def split_path(self, split: str):
        return self.base.split_path(split)

    @cached_property
    def _pool(self) -> list[tuple[Sample, str]]:
        """Every base item with its answer type (the whole split: distractors come from all of it)."""
        field = self.opts.answer_type_field
        out = []
        for s in self.base.samples():
            given = s.vars.get(field) if field else None
            out.append((s, answer_type(str(s.vars.get("question") or ""), str(s.target), given)))
        return out

    def samples(self, split: str | None = None, limit: int | None = None) -> list[Sample]:
        pool = self._pool
        by_type: dict[str, list[str]] = {}
        for s, t in pool:
            by_type.setdefault(t, []).append(str(s.target).strip())
        k = self.opts.n_options
        labels = [str(x) for x in (self.spec.default_labels or [chr(ord("A") + i) for i in range(k)])][:k]
        out = []
        for s, atype in pool[: limit if limit is not None else len(pool)]:
            gold = str(s.target).strip()
            rng = random.Random(f"{self.opts.seed}:{self.opts.base_task}:{s.id}")
            cands = sorted({a for a in by_type[atype] if a and a != gold})
            if len(cands) < k - 1:  # too few of this type: fill from every other answer
                cands = sorted({str(x.target).strip() for x, _ in pool if str(x.target).strip() not in ("", gold)})
            if len(cands) < k - 1:
                raise DataError(f"task {self.name}: item {s.id}: fewer than {k - 1} distractor answers in {self.opts.base_task}")
            options = [gold, *rng.sample(cands, k - 1)]
            rng.shuffle(options)
            if self.opts.format == "mc_shuffled":
                srng = random.Random(f"{self.opts.seed}:shuffled:{s.id}")
                shuffled = list(options)
                while shuffled.index(gold) == options.index(gold):  # another order, the gold elsewhere
                    srng.shuffle(shuffled)
                options = shuffled
            target = labels[options.index(gold)]
            vars_ = {**s.vars, "choices": options, "labels": labels, "answer_type": atype, "gold_text": gold,
                     "choices_block": choices_block(labels, options, self.spec.prompt.choice_format,
                                                    self.spec.prompt.choice_separator, task=self.name),
                     "labels_text": ", ".join(labels[:-1]) + f" {self.opts.or_word} " + labels[-1]}
            meta = {f: (atype if f == "answer_type" else s.metadata.get(f, s.vars.get(f))) for f in self.spec.slice_by}
            out.append(Sample(task=self.name, id=s.id, index=s.index, vars=vars_, target=target, choices=options,
                              labels=labels, metadata=meta))
        return out
