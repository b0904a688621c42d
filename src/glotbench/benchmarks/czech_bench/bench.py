"""``CzechBenchTask``: the one class all 27 Czech-Bench tasks share (``task_class`` in their YAML).

The YAML holds the benchmark: the reference prompt (``prompt.system`` = the task text plus the
five fixed exemplars, ``prompt.user`` = the request), the scored subset (``options.subset``),
the parse rule (``options.parse``), the metrics. This class only does what YAML cannot:

* data: a Hub snapshot in a local folder read through ``datasets.load_dataset(folder)`` from a
  cache keyed by the folder's content (:mod:`glotbench.data.hub_folder`), or an
  offline copy read by a named reader (``options.reader``, see :mod:`glotbench.benchmarks.czech_bench.records`);
  absent data is one line ``data missing: <hf id>@<rev>; put it at <path>``;
* prompts rendered exactly as the reference's LangChain templates: plain = system + user with
  no whitespace trimmed (the prompt ends in ``"...:\\n"``); chat = one system message (task +
  exemplars) and one user message (the request), like the reference's ``CHAT_PROMPT``;
* scoring: the reference's parse rule and denominator (``cb_*`` values, the headline) next to
  glotbench's extractor and scorer (``accuracy``, ``macro_f1``...: unparseable counted wrong).
"""

from __future__ import annotations

import dataclasses
from functools import cached_property
from pathlib import Path
from typing import Any

import jinja2

from glotbench.benchmarks.czech_bench import metrics as reference_rules, subsets
from glotbench.benchmarks.czech_bench.records import READERS
from glotbench.data.hub_folder import folder_sha256, load_hub_folder, require_hub
from glotbench.errors import DataError, TaskSpecError
from glotbench.prompts import sandbox
from glotbench.tasks.task import Output, Sample, Scored, Task

# Like glotbench's prompt renderer, but keeping every character: the reference's templates end
# in a newline and its exemplar blocks in a blank line.
_ENV = sandbox.environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True, autoescape=False)


def render_exact(source: str, variables: dict, *, task: str, field: str) -> str:
    try:
        return _ENV.from_string(source).render(**variables)
    except jinja2.TemplateSyntaxError as err:
        raise TaskSpecError(f"task {task}: field '{field}': template syntax error line {err.lineno}: {err.message}") from None
    except jinja2.UndefinedError as err:
        raise TaskSpecError(f"task {task}: field '{field}': {err.message}") from None
    except sandbox.SecurityError as err:
        raise TaskSpecError(f"task {task}: field '{field}': refused by the template sandbox: {err}") from None


def hub_layout(folder: Path, config: str | None, split: str, older: list[dict] | None, where: str) -> tuple[str | None, str]:
    """The (config, split) to read: the task's own (today's layout of the Hub repo), else the first
    of ``options.hf_older_layouts`` whose config the folder's ``README.md`` declares (a snapshot
    taken before the repo was reorganised; Belebele until 2024-08: one config, a split per language)."""
    if not older:
        return config, split
    require_hub(where)
    import datasets

    try:
        names = datasets.get_dataset_config_names(str(folder))
    except Exception as err:  # noqa: BLE001 - datasets raises many types
        raise DataError(f"{where}: {folder}: cannot read its configs: {str(err).splitlines()[0]}") from None
    for layout in [{"config": config, "split": split}, *older]:
        if (layout.get("config") or "default") in names:
            return layout.get("config"), layout["split"]
    wanted = ", ".join(repr(x.get("config") or "default") for x in [{"config": config}, *older])
    raise DataError(f"{where}: {folder}: has none of the configs {wanted} (it has: {', '.join(names)})")


def topic_configs(folder: Path, topics: list[str], split: str, where: str) -> list[dict]:
    """A repository with one config per subject (CIIRC-NLP/mmlu-cs: ``<subject>/<split>-*.parquet``,
    the README's ``configs:`` naming each, no default): every subject the reference reports, read
    config by config, each row's ``subject`` its config (kept when the row has one). A snapshot in
    the older layout (one config, ``default`` or ``all``, with a ``subject`` column) is read as it is; a folder lacking
    some subject's config is one line naming them."""
    try:
        import datasets
    except ImportError:
        raise DataError(f"{where}: reading a Hugging Face dataset folder needs the `datasets` package (a glotbench dependency: `pip install 'datasets>=2.18'`)") from None
    try:
        names = datasets.get_dataset_config_names(str(folder))
    except Exception as err:  # noqa: BLE001 - datasets raises many types
        raise DataError(f"{where}: {folder}: cannot read its configs: {str(err).splitlines()[0]}") from None
    if not any(t in names for t in topics) and len(names) == 1:
        return load_hub_folder(folder, names[0], split, where)  # the older layout: one config, a subject column
    missing = [t for t in topics if t not in names]
    if missing:
        shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        raise DataError(f"{where}: {folder}: no config for {len(missing)} of the {len(topics)} subjects the reference "
                        f"reports ({shown}); it has: {', '.join(names[:8])}{' ...' if len(names) > 8 else ''}")
    rows: list[dict] = []
    for topic in topics:
        rows += [{**r, "subject": r.get("subject") or topic} for r in load_hub_folder(folder, topic, split, where)]
    return rows


class CzechBenchTask(Task):
    reads_through_reader = True  # `glotbench translate` writes its output for the jsonl reader
    @property
    def _opts(self) -> dict[str, Any]:
        return self.spec.options

    def missing_line(self, path: Path) -> str:
        hf = self.spec.dataset.hf
        ident = (f"{hf.id}{f' ({hf.config})' if hf.config else ''}@{hf.revision}" if hf else (self.spec.source.url or self.name))
        return f"data missing: {ident}; put it at {path}, or fetch it: glotbench data pull {self.name}"

    def split_path(self, split: str) -> Path:
        rel = self.spec.dataset.splits.get(split)
        if rel is None:
            raise DataError(f"task {self.name}: no split {split!r} (splits: {', '.join(self.spec.dataset.splits) or 'none'})")
        path = self.data_file(rel)
        if not path.exists():
            raise DataError(self.data_problem or self.missing_line(path))
        return path

    def _rows(self, split: str) -> list[dict]:
        path = self.split_path(split)
        reader = self._opts.get("reader")
        where = f"task {self.name}"
        if reader:
            if reader not in READERS:
                raise TaskSpecError(f"{self.spec_path or self.name}: field 'options.reader': unknown reader {reader!r}")
            return READERS[reader](path)
        hf = self.spec.dataset.hf
        hf_split = (self._opts.get("hf_splits") or {}).get(split, split)
        if self._opts.get("hf_configs") == "per_topic":
            return topic_configs(path, self._topics(), hf_split, where)
        config, hf_split = hub_layout(path, hf.config if hf else None, hf_split, self._opts.get("hf_older_layouts"), where)
        return load_hub_folder(path, config, hf_split, where)

    def _topics(self) -> list[str]:
        cats = (self._opts.get("mmlu") or {}).get("categories") or {}
        return [t for topics in cats.values() for t in topics]

    def build_sample(self, rec: dict, index: int, where: str) -> Sample:
        """``options.no_gold_label`` (SNLI's ``-1``: annotators did not agree): such a row is kept
        and scored as the reference scores it: its gold is that value, which no answer the prompt
        asks for matches, so it counts wrong in accuracy and is one more class in macro-F1 (why the
        thesis' SNLI macro-F1 is far below its accuracy)."""
        nogold = self._opts.get("no_gold_label")
        key = self.spec.fields.get("target", "target")
        if nogold is None or str(rec.get(key)) != str(nogold) or not rec.get("labels"):
            return super().build_sample(rec, index, where)
        sample = super().build_sample({**rec, key: rec["labels"][0]}, index, where)
        return dataclasses.replace(sample, target=rec[key], vars={**sample.vars, "target": rec[key]})

    def raw_records(self, split: str) -> list[dict]:
        rows = self._rows(split)
        mm = self._opts.get("mmlu")
        if mm:
            dev = self._rows(mm["shot_split"])
            rows = subsets.mmlu(rows, dev, mm, self._render_shot)
        rows = subsets.apply(rows, self._opts.get("subset"), f"{self.spec_path or self.name}")
        return [{**r, "_pos": pos} for pos, r in enumerate(rows)]

    def _render_shot(self, row: dict) -> str:
        return render_exact(self._opts["mmlu"]["shot"], row, task=self.name, field="options.mmlu.shot")

    def data_fingerprint(self, split: str | None = None) -> str:
        """The content hash of the files the rows are read from (:func:`folder_sha256`, the key of
        the cache they are read through): the eval split's, and the MMLU shots' split's."""
        splits = [split or self.spec.dataset.eval_split]
        mm = self._opts.get("mmlu")
        if mm and mm.get("shot_split"):
            splits.append(mm["shot_split"])
        paths = list(dict.fromkeys(self.split_path(s) for s in splits))
        return "+".join(folder_sha256(p)[:16] for p in paths)

    # ---------------------------------------------------------------- prompts (exact)
    def _exact(self, which: str, sample: Sample) -> str:
        src = getattr(self.spec.prompt, which) or ""
        return render_exact(src, self._vars(sample), task=self.name, field=f"prompt.{which}")

    def chat_messages(self, sample: Sample, num_fewshot: int | None = None, system: str | None = None) -> list[dict]:
        """The reference's system + user messages; ``system`` (a run's --system-prompt) replaces
        the reference's system text."""
        return [{"role": "system", "content": self._exact("system", sample) if system is None else system},
                {"role": "user", "content": self._exact("user", sample)}]

    def plain_layout(self, num_fewshot: int | None = None, system: str | None = None) -> str | None:
        return ("the reference's plain template: the system text (task and exemplars) directly followed by the "
                "request, as Czech-Bench's own PromptTemplate gives it to a non-chat model")

    def plain_prompt(self, sample: Sample, num_fewshot: int | None = None, system: str | None = None) -> str:
        return (self._exact("system", sample) if system is None else system) + self._exact("user", sample)

    # ---------------------------------------------------------------- scoring
    @cached_property
    def _morpho(self):
        from glotbench.languages.cs_morpho import get_morpho

        return get_morpho()

    def score(self, sample: Sample, outputs: list[Output], *, mode: str) -> Scored:
        if mode == "loglikelihood":
            return super().score(sample, outputs, mode=mode)
        text = outputs[0].text
        rule = self._opts.get("parse")
        if rule in ("sqad", "squad"):
            return self._score_qa(rule, text, sample)
        from glotbench.scoring.scorers import get_scorer

        extracted = self.extract(text, sample)
        if isinstance(extracted, float) and extracted.is_integer() and rule == "int":
            extracted = str(int(extracted))
        pred, values = get_scorer(self.spec.scorer)(extracted, sample.target, sample=sample, pack=self.pack)
        values = {**values, **reference_rules.reference_values(rule, text, sample.target)}
        nogold = self._opts.get("no_gold_label")
        if nogold is not None and str(sample.target) != str(nogold) and "cb_correct" in values:
            # glotbench's variant beside the reference's numbers: the rows that have a gold label
            values.update(cb_correct_labelled=values["cb_correct"], cb_gold_labelled=values["cb_gold"],
                          cb_pred_labelled=values["cb_pred"])
        return Scored(pred=pred, values=values, extracted=extracted)

    def _score_qa(self, rule: str, text: str, sample: Sample) -> Scored:
        from glotbench.benchmarks.czech_bench import qa_levels
        from glotbench.scoring.extractive_qa import item_values

        golds = list(sample.target or [])
        fn = qa_levels.squad_values if rule == "squad" else qa_levels.sqad_values
        values = fn(text, golds, self._morpho)
        answer = text.split("\n")[0] if rule == "squad" else text
        ours = item_values(answer, golds, lang="cs")  # glotbench's normalisation, beside the reference's
        values.update({"exact_match": ours["exact_match"], "bow_f1": ours["bow_f1"]})
        return Scored(pred=answer.strip() or None, values=values, extracted=answer)
