"""A task written as an lm-eval task YAML describes it (``glotbench tasks import-lm-eval``).

``options`` carries lm-eval's own prompt fields, applied as lm-eval 0.4.13 applies them
(``ConfigurableTask.doc_to_text`` / ``doc_to_target`` / ``doc_to_choice``, ``fewshot_context``,
``build_qa_turn``), restated here: the fields, the plain prompt, the few-shot samplers and the labels
are described in docs/adding-a-task.md "From an lm-eval task YAML".
"""

from __future__ import annotations

import ast
import random
from dataclasses import replace
from functools import cached_property
from typing import Any

from glotbench.errors import DataError, TaskSpecError
from glotbench.extract import bounded_regex
from glotbench.tasks.lm_eval_filters import apply_filter, exact_match, lm_eval_filter_list, metric_keys
from glotbench.tasks.task import ROLLING, LoglikelihoodRequest, Sample, Scored, Task, score_text

DEFAULTS = {"target_delimiter": " ", "fewshot_delimiter": "\n\n", "description": ""}
# lm-eval's loglikelihood_rolling metrics -> the per-item count each divides by (api/task.py process_results)
ROLLING_COUNTS = {"word_perplexity": "n_words", "byte_perplexity": "n_bytes", "bits_per_byte": "n_bytes"}
NOT_GREEDY = "(not the greedy continuation)"


def _needs_delimiter(before: str, after: str) -> bool:
    """lm-eval's ``requires_delimiter``: neither side has whitespace where they join (and there is a before)."""
    return before != "" and not (before[-1].isspace() or after[0].isspace())


def _joined(prefix: str | None, answer: str) -> str:
    """lm-eval's ``maybe_delimit(prefix, answer, " ")``: the answer after its prefix, a space between
    them unless either has whitespace where they join."""
    if not prefix or not answer:
        return prefix or answer
    return f"{prefix}{' ' if _needs_delimiter(prefix, answer) else ''}{answer}"


def _regex_replace(string, pattern, repl, count: int = 0):
    # the pattern comes from the task file: time-bounded (extract/bounded_regex.py)
    return bounded_regex.sub(pattern, repl, string, count=count)


def jinja_env():
    import jinja2

    from glotbench.prompts import sandbox

    env = sandbox.environment(loader=jinja2.BaseLoader(), undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    env.filters["regex_replace"] = _regex_replace
    return env


class LmEvalTask(Task):
    generates_with_task_score = True  # score() adds lm-eval's loglikelihood types; generation is Task's (names.py)

    @cached_property
    def opts(self) -> dict[str, Any]:
        return {**DEFAULTS, **self.spec.options}

    @cached_property
    def _env(self):
        return jinja_env()

    @cached_property
    def _hooks(self) -> dict[str, Any]:
        """lm-eval's own functions the task delegates to (``options.lm_eval_hooks``), imported with
        lm-eval's own loader from the folder each was written in."""
        refs = self.opts.get("lm_eval_hooks") or {}
        if not refs:
            return {}
        try:
            import lm_eval
            from lm_eval.tasks._yaml_loader import _import_func_in_yml
        except ImportError:
            raise TaskSpecError(f"task {self.name}: delegates {', '.join(refs)} to lm-eval's code: pip install --no-deps "
                                f"lm-eval (converted with lm-eval {self.opts.get('lm_eval_version')})") from None
        from pathlib import Path

        root = Path(lm_eval.__file__).parent
        out = {}
        for key, ref in refs.items():
            base = root / ref["lm_eval_dir"] if "lm_eval_dir" in ref else Path(ref["dir"])
            try:
                out[key] = _import_func_in_yml(ref["qual"], base)
            except Exception as err:  # noqa: BLE001 - one line naming the hook
                raise TaskSpecError(f"task {self.name}: options.lm_eval_hooks.{key}: cannot import {ref['qual']} from "
                                    f"{base}: {type(err).__name__}: {err}") from None
        return out

    def _source_records(self, split: str) -> list[dict]:
        """A Hub dataset the data layer fetched (``source.fetch`` kind hf: its snapshot folder under
        the data root, pulled at the locked commit) is read from that folder through ``datasets``;
        local files as any task reads them."""
        ds = self.spec.dataset
        if ds.format == "hf" and self.spec.source.fetch and ds.splits:
            from glotbench.data.hub_folder import load_hub_folder

            return load_hub_folder(self.split_path(split), ds.hf.config if ds.hf else None, split, f"task {self.name}")
        return super().raw_records(split)

    def raw_records(self, split: str) -> list[dict]:
        fn = self._hooks.get("process_docs")
        if fn is None:
            return self._source_records(split)
        cache = self.__dict__.setdefault("_processed", {})
        if split not in cache:
            import datasets

            records = self._source_records(split)
            try:
                cache[split] = [dict(r) for r in fn(datasets.Dataset.from_list(records))]
            except Exception as err:  # noqa: BLE001 - lm-eval's code failing on these records: one line
                raise DataError(f"task {self.name}: split {split}: lm-eval's process_docs failed: "
                                f"{type(err).__name__}: {err}") from None
        return cache[split]

    def _hook(self, key: str, doc: dict, where: str, *args: Any) -> Any:
        try:
            return self._hooks[key](doc, *args)
        except Exception as err:  # noqa: BLE001 - names the record and the hook
            raise DataError(f"{where}: {key} (lm-eval's {self.opts['lm_eval_hooks'][key]['qual']}): "
                            f"{type(err).__name__}: {err}") from None

    def _apply(self, template: str, doc: dict, what: str, where: str) -> str:
        try:
            return self._env.from_string(template).render(**doc)
        except Exception as err:  # noqa: BLE001 - a template error names its record and field
            raise DataError(f"{where}: {what}: {type(err).__name__}: {err}") from None

    def _source(self, key: str, shot: bool) -> tuple[str | None, Any]:
        """(the delegated hook's key, or None; else the field's value) of a doc_to_* field: a shot's
        from ``fewshot_config`` when it names one (lm-eval's FewshotConfig), else the task's."""
        fmt = self.opts.get("fewshot_format") or {}
        if shot and f"fewshot_{key}" in self._hooks:
            return f"fewshot_{key}", None
        if shot and key in fmt:
            return None, fmt[key]
        return (key, None) if key in self._hooks else (None, self.opts.get(key))

    def doc_to_text(self, doc: dict, where: str = "", shot: bool = False) -> str:
        hook, t = self._source("doc_to_text", shot)
        if hook:
            text = self._hook(hook, doc, where)
            if not isinstance(text, (str, int)) or isinstance(text, bool):
                raise DataError(f"{where}: doc_to_text gave {type(text).__name__} {text!r}, not a text")
            return text
        if isinstance(t, str) and t in doc:
            return str(doc[t])
        text = self._apply(str(t), doc, "doc_to_text", where)
        # lm-eval: a digit text of a task with choices is an index (its multiple-input form)
        return ast.literal_eval(text) if text.isdigit() and self.opts.get("doc_to_choice") is not None else text

    def doc_to_choice(self, doc: dict, where: str = "", shot: bool = False) -> list[str] | None:
        hook, c = self._source("doc_to_choice", shot)
        if hook:
            return [str(x) for x in self._hook(hook, doc, where)]
        if c is None:
            return None
        if isinstance(c, list):
            return [str(x) for x in c]
        if isinstance(c, dict):
            return [str(x) for x in c.values()]
        if c in doc:
            return [str(x) for x in doc[c]]
        text = self._apply(c, doc, "doc_to_choice", where)
        try:
            return [str(x) for x in ast.literal_eval(text)]
        except (SyntaxError, ValueError):
            raise DataError(f"{where}: doc_to_choice: {text!r} is not a list") from None

    def doc_to_target(self, doc: dict, where: str = "", shot: bool = False) -> Any:
        hook, t = self._source("doc_to_target", shot)
        if hook:
            return self._hook(hook, doc, where)
        if isinstance(t, (int, list)):
            return t
        if t in doc:
            return doc[t]
        text = self._apply(t, doc, "doc_to_target", where)
        if text.isdigit() and self.opts.get("doc_to_choice") is not None:
            return ast.literal_eval(text)
        if len(text) >= 2 and text[0] == "[" and text[-1] == "]":
            try:
                return ast.literal_eval(text)
            except (SyntaxError, ValueError):
                return text
        return text

    def gen_prefix(self, doc: dict, where: str = "", shot: bool = False) -> str | None:
        """lm-eval's ``gen_prefix``: the start of the answer turn, written after the item's text (a field
        of the record when it names one, else a template over the record); a shot's from ``fewshot_config``
        when it names one. None: the task has none (or it renders empty)."""
        fmt = self.opts.get("fewshot_format") or {}
        t = fmt["gen_prefix"] if shot and "gen_prefix" in fmt else self.opts.get("gen_prefix")
        if not t:
            return None
        text = str(doc[t]) if t in doc else self._apply(str(t), doc, "gen_prefix", where)
        return text or None

    @property
    def prefills_answer(self) -> bool:
        """Whether the task's generation prompt ends with the start of the answer (``gen_prefix``): a
        chat model must continue that assistant turn (engine/run_checks.check_prefill)."""
        return bool(self.opts.get("gen_prefix")) and self.spec.output_type == "generate"

    # ---------------------------------------------------------------- data
    def build_sample(self, rec: dict, index: int, where: str) -> Sample:
        at = f"{where}: record {index}"
        text = self.doc_to_text(rec, at)
        target = self.doc_to_target(rec, at)
        choices = self.doc_to_choice(rec, at)
        sid = str(rec.get(self.spec.fields["id"])) if "id" in self.spec.fields and rec.get(self.spec.fields["id"]) is not None else str(index)
        multiple_input = isinstance(text, int)
        if multiple_input and self.spec.output_type != "multiple_choice":
            raise DataError(f"{at}: doc_to_text gave the number {text}, not a text")
        if multiple_input:  # lm-eval's multiple input: one context per choice, the same continuation; the
            # text is the gold choice's index (a shot is written with that choice and the continuation)
            if not choices or not 0 <= text < len(choices):
                raise DataError(f"{at}: doc_to_text gave the choice index {text}, out of range for {choices}")
            labels = [str(i) for i in range(len(choices))]
            answer, gold, text = target[0] if isinstance(target, list) else target, labels[text], choices[text]
        elif self.spec.output_type == "multiple_choice":
            if not choices:
                raise DataError(f"{at}: doc_to_choice gave no options")
            if isinstance(target, str) and not target.isdigit():
                if target not in choices:
                    raise DataError(f"{at}: target {target!r} is not one of the choices {choices}")
                target = choices.index(target)
            k = int(target[0] if isinstance(target, list) else target)
            if not 0 <= k < len(choices):
                raise DataError(f"{at}: target index {k} is out of range for {len(choices)} choices")
            labels = [str(i) for i in range(len(choices))]
            answer = choices[k]
            gold: Any = labels[k]
        else:
            labels = None
            answer = target[0] if isinstance(target, list) else target
            gold = [str(x) for x in target] if isinstance(target, list) else str(target)
        values = {"text": text, "answer_text": str(answer), "choices": choices, "labels": labels,
                  "_multiple_input": multiple_input}
        if self.opts.get("gen_prefix"):
            values["gen_prefix"] = self.gen_prefix(rec, at)
        if self.spec.output_type == ROLLING:  # lm-eval scores doc_to_target's text (doc_to_text is not sent)
            values["text"] = str(answer)
            if "process_results" in self._hooks:
                values["lm_eval_counts"] = self._rolling_counts(rec, at)
        elif self.delegates_results or self._delegated_filters:  # lm-eval's code reads the record at scoring
            values["_lm_eval_doc"] = rec
        return Sample(task=self.name, id=sid, index=index, vars=values, target=gold, choices=choices, labels=labels,
                      metadata={})

    # ---------------------------------------------------------------- few-shot: lm-eval's sampler
    def _shot_pool(self) -> tuple[list[Sample], list[dict]]:
        """The few-shot pool and its records as lm-eval has them: ``fewshot_config.samples`` when the
        task fixes its exemplars, else the few-shot split."""
        fixed = self.opts.get("fewshot_samples")
        if fixed:
            pool, raws = [self.build_sample(dict(r), i, "fewshot_config.samples") for i, r in enumerate(fixed)], list(fixed)
        else:
            split_raws = self.raw_records(self.spec.fewshot.split)
            pool = self._fewshot_pool
            raws = [split_raws[s.index] for s in pool]
        if self.opts.get("fewshot_format") or any(k.startswith("fewshot_") for k in self._hooks):
            pool = [self._as_shot(s, r) for s, r in zip(pool, raws)]
        return pool, raws

    def _as_shot(self, sample: Sample, doc: dict) -> Sample:
        """The shot written with fewshot_config's own fields, as lm-eval's fewshot_context writes it:
        its doc_to_text, its doc_to_target read as an index into its doc_to_choice (the task's when it
        names none), the first of a list, or the text itself."""
        where = f"few-shot record {sample.id}"
        a = self.doc_to_target(doc, where, shot=True)
        c = self.doc_to_choice(doc, where, shot=True) if isinstance(a, int) else None
        answer = c[a] if c and isinstance(a, int) and 0 <= a < len(c) else a[0] if isinstance(a, list) and a else a
        text = self.doc_to_text(doc, where, shot=True)
        values = {**sample.vars, "text": text, "answer_text": "" if answer is None else str(answer)}
        if "gen_prefix" in (self.opts.get("fewshot_format") or {}):
            values["gen_prefix"] = self.gen_prefix(doc, where, shot=True)
        return replace(sample, vars=values)

    def _shots_in_order(self, n: int) -> dict[str, list[Sample]]:
        key = ("_lm_eval_shots", n)
        cache = self.__dict__.setdefault("_shot_cache", {})
        if key not in cache:
            rnd = random.Random(self.spec.fewshot.seed)
            pool, pool_raws = self._shot_pool()
            exclude = self.opts.get("fewshot_excludes_item", self.spec.fewshot.split == self.spec.dataset.eval_split)
            first_n = self.opts.get("fewshot_sampler") == "first_n"
            eval_split = self.spec.dataset.eval_split
            raws = self.raw_records(eval_split) if exclude else []
            out: dict[str, list[Sample]] = {}
            for s in self.samples(eval_split):
                # lm-eval leaves out of the shots the records equal to the item (``x != doc``), by value
                doc = raws[s.index] if exclude else None
                if first_n:  # lm-eval's FirstNSampler: the pool in order
                    drawn = [p for p, r in zip(pool, pool_raws) if doc is None or r != doc][:n]
                elif exclude:  # ContextSampler: n + 1 drawn, then the item's equals removed
                    idx = rnd.sample(range(len(pool)), min(n + 1, len(pool)))
                    drawn = [pool[i] for i in idx if pool_raws[i] != doc][:n]
                else:
                    drawn = rnd.sample(pool, min(n, len(pool)))
                if len(drawn) < n:
                    raise DataError(f"task {self.name}: {n} few-shot examples asked for, but the few-shot pool "
                                    f"has only {len(drawn)} for item {s.id}")
                out[s.id] = drawn
            cache[key] = out
        return cache[key]

    def check_fewshot(self, n: int | None = None) -> None:
        if self.opts.get("fewshot_samples"):
            n = self.spec.fewshot.n if n is None else n
            if n > len(self.opts["fewshot_samples"]):
                raise DataError(f"task {self.name}: {n} few-shot examples per prompt asked for, but fewshot_config."
                                f"samples has {len(self.opts['fewshot_samples'])}")
            return
        super().check_fewshot(n)

    def fewshot_for(self, sample: Sample, n: int | None = None) -> list[Sample]:
        n = self.spec.fewshot.n if n is None else n
        if n <= 0 or not (self.spec.fewshot.split or self.opts.get("fewshot_samples")):
            return []
        shots = self._shots_in_order(n).get(sample.id)
        if shots is None:  # an item outside the evaluation split (another --split): a draw of its own
            return super().fewshot_for(sample, n)
        return shots

    # ---------------------------------------------------------------- prompts
    def render_user(self, sample: Sample) -> str:
        return sample.vars["text"]

    def render_answer(self, sample: Sample) -> str:
        return sample.vars["answer_text"]

    def plain_prompt(self, sample: Sample, num_fewshot: int | None = None, system: str | None = None) -> str:
        return f"{self._plain_head(sample, num_fewshot, system)}{self._final_turn(sample, self.render_user(sample))}"

    def _final_turn(self, sample: Sample, text: str, delimiter: str | None = None) -> str:
        """The item's turn as plain text: its text, then its ``gen_prefix`` (lm-eval's build_qa_turn: the
        target delimiter between them unless either side has whitespace there)."""
        gp = sample.vars.get("gen_prefix")
        if not gp:
            return text
        delim = self.opts["target_delimiter"] if delimiter is None else delimiter
        return f"{text}{delim if _needs_delimiter(text, gp) else ''}{gp}"

    def _plain_shot(self, shot: Sample, fmt: dict) -> str:
        """One shot as lm-eval's build_qa_turn writes it in plain text: the text, the target delimiter and
        the answer (after the shot's ``gen_prefix``), the few-shot delimiter; a shot whose answer is
        empty gets neither delimiter nor answer (its ``gen_prefix`` alone, when it has one)."""
        q, a, gp = self.render_user(shot), self.render_answer(shot), shot.vars.get("gen_prefix")
        if not gp:
            return f"{q}{fmt['target_delimiter']}{a}{fmt['fewshot_delimiter']}" if a != "" else q
        head = f"{q}{fmt['target_delimiter'] if _needs_delimiter(q, gp) else ''}"
        return f"{head}{_joined(gp, a)}{fmt['fewshot_delimiter']}" if a != "" else f"{head}{gp}"

    def _plain_head(self, sample: Sample, num_fewshot: int | None = None, system: str | None = None) -> str:
        """The plain prompt before the item's own text: the description and the shots."""
        o = self.opts
        head = o["description"] if system is None else system
        fmt = {**o, **(o.get("fewshot_format") or {})}  # a shot's delimiters: fewshot_config's, else the task's
        shots = "".join(self._plain_shot(s, fmt) for s in self.fewshot_for(sample, num_fewshot))
        return f"{head}{shots}"

    def chat_messages(self, sample: Sample, num_fewshot: int | None = None, system: str | None = None) -> list[dict]:
        """lm-eval's chat prompt with ``--fewshot_as_multiturn``: a user turn per shot and its answer turn
        (after the shot's ``gen_prefix``), the item's user turn, and its ``gen_prefix`` as an assistant
        turn the model continues (lm-eval: ``add_generation_prompt=False``)."""
        msgs: list[dict] = []
        head = self.opts["description"] if system is None else system
        if head:
            msgs.append({"role": "system", "content": head})
        for shot in self.fewshot_for(sample, num_fewshot):
            msgs.append({"role": "user", "content": self.render_user(shot)})
            answer, gp = self.render_answer(shot), shot.vars.get("gen_prefix")
            if answer != "" or gp:  # lm-eval: no answer turn for an empty answer (its gen_prefix alone, if any)
                msgs.append({"role": "assistant", "content": _joined(gp, answer)})
        msgs.append({"role": "user", "content": self.render_user(sample)})
        if gp := sample.vars.get("gen_prefix"):
            msgs.append({"role": "assistant", "content": gp})
        return msgs

    @staticmethod
    def generation_reads_pack(spec) -> bool:
        """lm-eval's filters and exact_match score the generated text (no language pack is read): a task in a
        language glotbench has no pack for runs as lm-eval runs it."""
        return not spec.options.get("filters")

    def reads_pack(self, mode: str) -> bool:
        return mode == "generate" and self.generation_reads_pack(self.spec)

    def check_run_mode(self, mode: str) -> None:
        if mode == "generate" and self.spec.output_type == "multiple_choice":
            raise TaskSpecError(f"{self.spec_where}: task {self.name}: lm-eval's multiple_choice task ranks its options "
                                "by log-likelihood; its prompt shows no options to answer in generate mode: run it with "
                                "--mode loglikelihood (a backend that scores log-probabilities)")

    def ll_options(self, sample: Sample) -> list[str]:
        return list(sample.choices or [])

    def _rolling_counts(self, doc: dict, where: str) -> dict[str, float]:
        """The word and byte counts a delegated ``process_results`` divides a rolling task's
        log-likelihood by (wikitext counts the page before detokenising): lm-eval's function returns
        ``{metric: (loglikelihood, count)}``; it is called with a log-likelihood of 0 to read the counts."""
        out = self._hook("process_results", doc, where, (0.0,))
        counts: dict[str, float] = {}
        for metric, value in (out or {}).items():
            key = ROLLING_COUNTS.get(metric)
            if key is None or not (isinstance(value, tuple) and len(value) == 2):
                raise DataError(f"{where}: process_results gave {metric}: {value!r}; only (loglikelihood, count) pairs "
                                f"of {', '.join(ROLLING_COUNTS)} are read for a loglikelihood_rolling task")
            if counts.get(key, value[1]) != value[1]:
                raise DataError(f"{where}: process_results gave two {key} counts: {counts[key]} and {value[1]}")
            counts[key] = float(value[1])
        return counts

    def requests(self, sample: Sample, *, mode: str, chat: bool, settings) -> list:
        if self.spec.output_type == "loglikelihood":  # lm-eval: (context, doc_to_target), no delimiter added
            context = self.plain_prompt(sample, settings.num_fewshot, settings.system_prompt)
            return [LoglikelihoodRequest(context=context, continuation=sample.vars["answer_text"])]
        if mode == "loglikelihood":
            if self.spec.output_type != "multiple_choice":
                raise TaskSpecError(f"task {self.name}: loglikelihood scoring needs a multiple_choice task")
            delim = self.opts["target_delimiter"]
            if sample.vars.get("_multiple_input"):  # lm-eval: (head + choice, delimiter + target) per choice
                head = self._plain_head(sample, settings.num_fewshot, settings.system_prompt)
                return [LoglikelihoodRequest(context=head + self._final_turn(sample, c, ""),
                                             continuation=delim + sample.vars["answer_text"])
                        for c in self.ll_options(sample)]
            context = self.plain_prompt(sample, settings.num_fewshot, settings.system_prompt)
            return [LoglikelihoodRequest(context=context, continuation=delim + c) for c in self.ll_options(sample)]
        return super().requests(sample, mode=mode, chat=chat, settings=settings)

    def score(self, sample: Sample, outputs: list, *, mode: str) -> Scored:
        if self.spec.output_type == "loglikelihood":  # lm-eval: acc = is_greedy, perplexity from the log-likelihood
            [res] = outputs
            gold = sample.vars["answer_text"]
            return Scored(pred=gold if res.is_greedy else NOT_GREEDY,
                          values={"nll": -float(res.logprob), "n_items": 1.0, "correct": float(res.is_greedy)},
                          extracted={"logprob": res.logprob, "is_greedy": res.is_greedy})
        if mode == "loglikelihood" and self.delegates_results:  # lm-eval's process_results on (ll, is_greedy)s
            scored = super().score(sample, outputs, mode=mode)
            scored.values.update(self._delegated_values(sample, [(o.logprob, o.is_greedy) for o in outputs]))
            return scored
        if mode == "generate" and self.opts.get("filters"):  # lm-eval's filters and exact_match
            return self._score_filtered(sample, outputs[0].text)
        if mode == ROLLING:
            scored = score_text(sample.vars["text"], outputs[0])
            scored.values.update(sample.vars.get("lm_eval_counts") or {})  # lm-eval's own counts, when delegated
            return scored
        return super().score(sample, outputs, mode=mode)

    @cached_property
    def _delegated_filters(self) -> bool:
        return any(st.get("lm_eval") for f in self.opts.get("filters") or [] for st in f["steps"])

    def _lm_eval_filter(self, step: dict):
        """lm-eval's own Filter for a delegated step: its registered class by name, or the ``!function``
        class the task file names (``ref``); a ``{"ref": ...}`` option is imported the same way."""
        try:
            import lm_eval.filters  # noqa: F401 - registers lm-eval's filters
            from lm_eval.api.registry import get_filter
        except ImportError:
            raise TaskSpecError(f"task {self.name}: its filters run as lm-eval's own classes: pip install --no-deps "
                                f"lm-eval (converted with lm-eval {self.opts.get('lm_eval_version')})") from None
        kwargs = {k: self._import_ref(v["ref"]) if isinstance(v, dict) and set(v) == {"ref"} else v
                  for k, v in step.items() if k not in ("function", "lm_eval", "ref")}
        cls = self._import_ref(step["ref"]) if "ref" in step else get_filter(step["function"])
        return cls(**kwargs)

    def _import_ref(self, ref: dict):
        import lm_eval
        from lm_eval.tasks._yaml_loader import _import_func_in_yml
        from pathlib import Path

        base = Path(lm_eval.__file__).parent / ref["lm_eval_dir"] if "lm_eval_dir" in ref else Path(ref["dir"])
        return _import_func_in_yml(ref["qual"], base)

    @property
    def delegates_results(self) -> bool:
        return "process_results" in (self.opts.get("lm_eval_hooks") or {}) and self.spec.output_type != ROLLING

    def _delegated_values(self, sample: Sample, results: list, suffix: str = "") -> dict[str, float]:
        """lm-eval's own ``process_results(doc, results)``: the values of the metrics it averages."""
        where = f"task {self.name}: item {sample.id}"
        out = self._hook("process_results", sample.vars["_lm_eval_doc"], where, results)
        values = {}
        for m in self.opts.get("lm_eval_metrics") or []:
            v = out.get(m) if isinstance(out, dict) else None
            try:
                if isinstance(v, (str, bytes)):
                    raise TypeError
                values[m + suffix] = float(v)
            except (TypeError, ValueError):
                raise DataError(f"{where}: process_results gave {m}: {v!r}; a number is needed (averaged by mean)") from None
        return values

    def _score_filtered(self, sample: Sample, text: str) -> Scored:
        """Every filter pipeline of the task on the output (the first gives ``exact_match``, the others
        ``exact_match_<name>``), each compared with lm-eval's gold: ``doc_to_choice[target]`` when the
        task has choices, any of the targets when doc_to_target is a list, else the target's text."""
        gold = sample.target if isinstance(sample.target, list) else [sample.vars["answer_text"]]
        if sample.choices is not None and str(sample.target).isdigit() and int(sample.target) < len(sample.choices):
            gold = [sample.choices[int(sample.target)]]
        values, picked = {}, {}
        for i, f in enumerate(self.opts["filters"]):
            picked[f["name"]] = answer = apply_filter(f["steps"], text, sample.vars.get("_lm_eval_doc"),
                                                      self._lm_eval_filter)
            if self.delegates_results:
                values.update(self._delegated_values(sample, [answer], "" if i == 0 else f"_{f['name']}"))
                continue
            values["exact_match" if i == 0 else f"exact_match_{f['name']}"] = exact_match(
                answer, gold, self.opts.get("exact_match") or {})
        first = picked[self.opts["filters"][0]["name"]]
        return Scored(pred=None if first is None else str(first), values=values, extracted=picked,
                      rule=f"lm-eval filter {self.opts['filters'][0]['name']}")

    def extra_summary(self, records: list, out_dir: Any, *, n_boot: int = 1000, seed: int = 0) -> dict:
        """Adds ``lm_eval``: each metric's lm-eval ``[metric, filter name]`` and the ``filter_list``, so
        ``export --format lm-eval`` keys them as lm-eval does (``exact_match,strict-match``)."""
        out = super().extra_summary(records, out_dir, n_boot=n_boot, seed=seed)
        filters = self.opts.get("filters") or []
        if self.spec.output_type in ("loglikelihood", ROLLING) or not (filters or self.delegates_results):
            return out
        keys = metric_keys(filters, self.opts.get("lm_eval_metrics") or [] if self.delegates_results else None)
        out["lm_eval"] = {"metrics": {m: list(k) for m, k in keys.items() if m in self.spec.metrics},
                          "filter_list": lm_eval_filter_list(filters)}
        return out

    def metric_names(self, mode: str) -> list[str]:
        if self.spec.output_type in ("loglikelihood", ROLLING) or self.delegates_results:
            return list(self.spec.metrics)
        return super().metric_names(mode)
