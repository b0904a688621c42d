"""The task class behind the six HuLU YAML files.

What it adds to the default :class:`~glotbench.tasks.task.Task`:

* **Fixed or per-record options.** ``options.values`` lists the dataset's label strings in the
  order the options are shown; ``options.texts`` gives the (Hungarian) option text for each
  (HuSST: pozitív / semleges / negatív), or ``options.choice_fields`` names the record fields
  holding them (HuCoPA: ``choice1``, ``choice2``). The option labels are ``default_labels``
  (A, B, C by default; HuCoPA uses 1, 2).
* **The gold stays the dataset's label.** ``sample.target`` is the record's own label string;
  the option label of the gold is the template variable ``answer_label`` (for few-shot answers),
  and ``option_values`` maps each option label to its dataset label for the ``option_value``
  scorer. Predictions are therefore dataset labels too, in both generate and loglikelihood mode.
* **Unlabelled splits.** HuLU hides most test labels. A split where *no* record has the target
  field loads with ``target = None`` (a split where only some records lack it is a DataError);
  scoring then stores predictions only and the task reports the ``answered`` rate instead of
  its metrics. Few-shot material must be labelled.
"""

from __future__ import annotations

import dataclasses
from functools import cached_property
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from glotbench.data.fields import MissingField, get_path
from glotbench.errors import DataError, TaskSpecError
from glotbench.prompts.render import choices_block
from glotbench.tasks.task import LL_METRICS, Output, Sample, Scored, Task, score_loglikelihood


class HuluOptions(BaseModel):
    """``options:`` of a HuLU task YAML."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    values: list[str]  # the dataset's label strings, in the order the options are shown
    texts: list[str] | None = None  # the option text shown for each value
    choice_fields: list[str] | None = None  # or: record fields holding the option texts
    or_word: str = "or"  # joins the last two labels in {{ labels_text }}
    target_is_text: bool = False  # the target field holds the right option's TEXT (HuWS's CorrectAnswer)

    @model_validator(mode="after")
    def _one_source(self):
        if (self.texts is None) == (self.choice_fields is None):
            raise ValueError("give exactly one of 'texts' and 'choice_fields'")
        n = len(self.texts if self.texts is not None else self.choice_fields)
        if n != len(self.values):
            raise ValueError(f"{n} option texts/fields for {len(self.values)} values")
        if len(set(self.values)) != len(self.values):
            raise ValueError("'values' repeats a label")
        return self


class HuluTask(Task):
    @cached_property
    def opts(self) -> HuluOptions:
        where = self.spec_path or self.name
        if self.spec.output_type != "multiple_choice":
            raise TaskSpecError(f"{where}: field 'output_type': HuLU tasks are multiple_choice")
        try:
            opts = HuluOptions.model_validate(self.spec.options)
        except ValidationError as err:
            first = err.errors()[0]
            loc = ".".join(str(p) for p in first["loc"])
            msg = "unknown field" if first["type"] == "extra_forbidden" else first["msg"]
            raise TaskSpecError(f"{where}: field 'options{'.' + loc if loc else ''}': {msg}") from None
        labels = self.option_labels(opts)
        if len(labels) < len(opts.values):
            raise TaskSpecError(f"{where}: field 'default_labels': {len(labels)} labels for {len(opts.values)} options")
        return opts

    def option_labels(self, opts: HuluOptions | None = None) -> list[str]:
        opts = opts or self.opts
        default = self.spec.default_labels or [chr(ord("A") + k) for k in range(len(opts.values))]
        return [str(x) for x in default[: len(opts.values)]]

    # ---------------------------------------------------------------- data
    def __init__(self, spec, spec_path=None):
        super().__init__(spec, spec_path)
        self._labelled: dict[str, bool] = {}  # split -> whether its records carry the target

    def samples(self, split: str | None = None, limit: int | None = None) -> list[Sample]:
        split = split or self.spec.dataset.eval_split
        out = super().samples(split, limit)
        missing = [s for s in out if s.target is None]
        if missing and len(missing) != len(out):
            where = self.spec.dataset.splits.get(split, split)
            first = missing[0]
            raise DataError(f"{where}: record {first.index}: missing field '{self.spec.fields.get('target')}' "
                            f"(for target; {len(out) - len(missing)} other records of the split have it)")
        self._labelled[split] = not missing
        return out

    @property
    def scores_split(self) -> bool:
        """False once an unlabelled split was loaded (then only predictions can be produced)."""
        return all(self._labelled.values())

    def build_sample(self, rec: dict, index: int, where: str) -> Sample:
        opts = self.opts
        values: dict[str, Any] = {}
        for name, path in self.spec.fields.items():
            try:
                values[name] = get_path(rec, path)
            except MissingField:
                if name in self.spec.required_fields:
                    raise DataError(f"{where}: record {index}: missing field '{path}' (for {name})") from None
                values[name] = None
        sid = values.pop("id", None)
        sid = str(index) if sid is None else str(sid)
        if opts.texts is not None:
            texts = list(opts.texts)
        else:
            texts = []
            for f in opts.choice_fields:
                if not isinstance(rec.get(f), str) or not rec[f].strip():
                    raise DataError(f"{where}: record {index}: field '{f}' must be a non-empty string (an option text)")
                texts.append(rec[f])
        labels = self.option_labels()
        option_values = dict(zip(labels, opts.values))
        target = values.get("target")
        answer_label = answer_text = None
        if target is not None and opts.target_is_text:
            if str(target) not in texts:
                raise DataError(f"{where}: record {index}: field '{self.spec.fields.get('target')}': "
                                f"{target!r} is none of the option texts")
            if texts.count(str(target)) > 1:
                raise DataError(f"{where}: record {index}: field '{self.spec.fields.get('target')}': "
                                f"{target!r} is the text of more than one option")
            target = opts.values[texts.index(str(target))]
        if target is not None:
            target = str(target)
            if target not in opts.values:
                raise DataError(f"{where}: record {index}: field '{self.spec.fields.get('target')}': "
                                f"label {target!r} is not one of {opts.values}")
            k = opts.values.index(target)
            answer_label, answer_text = labels[k], texts[k]
        values.update(
            target=target,
            labels=labels,
            choices=texts,
            option_values=option_values,
            answer_label=answer_label,
            answer_text=answer_text,
            choices_block=choices_block(labels, texts, self.spec.prompt.choice_format,
                                        self.spec.prompt.choice_separator, task=self.name),
            labels_text=(", ".join(labels[:-1]) + f" {opts.or_word} " + labels[-1]) if len(labels) > 1 else labels[0],
        )
        metadata = {k: values.get(k) for k in self.spec.slice_by}
        return Sample(task=self.name, id=sid, index=index, vars=values, target=target, choices=texts,
                      labels=labels, metadata=metadata)

    @cached_property
    def _fewshot_pool(self) -> list[Sample]:
        pool = super()._fewshot_pool
        if any(s.target is None for s in pool):
            raise DataError(f"task {self.name}: few-shot split {self.spec.fewshot.split!r} has no labels")
        return pool

    # ---------------------------------------------------------------- scoring
    def score(self, sample: Sample, outputs: list[Output], *, mode: str) -> Scored:
        if mode != "loglikelihood":
            return super().score(sample, outputs, mode=mode)  # the YAML's scorer: option_value
        # score_loglikelihood compares option labels: give it the gold's option label, then map back.
        values = sample.vars["option_values"]
        scored = score_loglikelihood(dataclasses.replace(sample, target=sample.vars["answer_label"]), outputs,
                                     self.ll_options(sample))
        scored.pred = values[scored.pred]
        for key in ("pred_norm", "pred_norm_bytes", "pred_norm_tokens"):
            scored.extracted[key] = values[scored.extracted[key]]
        # the option probabilities under the dataset's labels too, as the gold is (calibration metrics)
        prefix = "ll_p:"
        scored.values = {(prefix + str(values[k[len(prefix):]]) if k.startswith(prefix) else k): v
                         for k, v in scored.values.items()}
        if sample.target is None:
            scored.values = {}
        return scored

    def gold_option(self, sample: Sample) -> int | None:
        label = sample.vars.get("answer_label")  # the gold stays the dataset's label: its option label
        return sample.labels.index(label) if label is not None and label in (sample.labels or []) else None

    def metric_names(self, mode: str) -> list[str]:
        if not self.scores_split:
            return ["answered"]
        names = list(self.spec.metrics)
        if mode == "loglikelihood":
            names = list(LL_METRICS) + [m for m in names if m != "accuracy"]
        return names
