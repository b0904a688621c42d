"""Convert an lm-eval task YAML into a glotbench task YAML (``glotbench tasks import-lm-eval``).

The converted task uses :class:`glotbench.tasks.lm_eval_task.LmEvalTask`, which applies lm-eval's
``doc_to_*`` and prompt construction as lm-eval does. What is mapped (read as lm-eval 0.4.13's
``load_yaml`` reads it, ``include:`` chains and ``fewshot_config`` included), what is left out with a
line each, and what is refused: docs/adding-a-task.md "From an lm-eval task YAML". A refusal starts
with ``cannot run:``; :func:`cannot_run` collects those and the command writes nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from glotbench.errors import TaskSpecError
from glotbench.tasks.lm_eval_filters import EXACT_MATCH_OPTIONS, NO_FILTER, metric_keys, read_filter_list
from glotbench.yamlfile import expanded_size

# lm-eval keys that have no effect on the numbers or that are mapped below
MAPPED = {"task", "dataset_path", "dataset_name", "dataset_kwargs", "revision", "output_type", "training_split",
          "validation_split", "test_split", "fewshot_split", "doc_to_text", "doc_to_target", "doc_to_choice",
          "num_fewshot", "generation_kwargs", "target_delimiter", "fewshot_delimiter", "description", "metadata",
          "metric_list", "repeats", "filter_list", "gen_prefix"}
IGNORED = {"should_decontaminate", "doc_to_decontamination_query", "task_alias", "group_alias"}
# keys whose effect the converted task could not have: the conversion is refused
FATAL_KEYS = {"process_docs": "process_docs (lm-eval's Python that rewrites the records)",
              "process_results": "process_results (lm-eval's Python that scores)",
              "class": "class (a Python task class)", "use_prompt": "use_prompt (a promptsource template)",
              "doc_to_image": "doc_to_image",
              "doc_to_audio": "doc_to_audio", "multiple_target": "multiple_target"}
# fewshot_config's own prompt fields: how a shot is written, when not as the item (lm-eval's FewshotConfig)
FEWSHOT_FORMAT = ("doc_to_text", "doc_to_target", "doc_to_choice", "target_delimiter", "fewshot_delimiter", "gen_prefix")
FEWSHOT_KEYS = {"sampler", "samples", "split", *FEWSHOT_FORMAT}
SAMPLERS = ("default", "first_n")
CANNOT = "cannot run: "
METRICS = {"acc": "accuracy", "acc_norm": "accuracy_norm", "exact_match": "exact_match"}
# lm-eval's metrics of its log-likelihood output types (api/task.py process_results), by output type;
# the first list is lm-eval's default when the file has no metric_list
LL_TYPES = {"loglikelihood": {"perplexity": "continuation_perplexity", "acc": "accuracy"},
            "loglikelihood_rolling": {"word_perplexity": "word_perplexity", "byte_perplexity": "byte_perplexity",
                                      "bits_per_byte": "bits_per_byte"}}
GEN_KEYS = {"until", "max_gen_toks", "do_sample", "temperature"}


class _Function(str):
    """An lm-eval ``!function module.name`` hook (Python in lm-eval's task folder): not convertible.
    ``base`` is the folder of the YAML file that names it (lm-eval imports ``module`` from there)."""

    base: Path | None = None


def _loader(base: Path | None = None):
    class Loader(yaml.SafeLoader):
        pass

    def function(loader, node):
        f = _Function(f"!function {loader.construct_scalar(node)}")
        f.base = base
        return f

    Loader.add_constructor("!function", function)
    return Loader


def _read_one(path: Path) -> dict:
    try:
        text = Path(path).read_text(encoding="utf-8")
        doc = yaml.load(text, Loader=_loader(Path(path).resolve().parent))  # noqa: S506 - SafeLoader subclass
        if "*" in text:
            expanded_size(doc)  # an alias bomb is refused, not walked (yamlfile.py)
    except (OSError, yaml.YAMLError) as err:
        raise TaskSpecError(f"{path}: cannot read the lm-eval task: {err}") from None
    if not isinstance(doc, dict):
        raise TaskSpecError(f"{path}: not an lm-eval task YAML (not a mapping)")
    return doc


def load_lm_eval_yaml(path: Path, _chain: tuple[Path, ...] = ()) -> dict:
    """An lm-eval YAML with its ``include:`` chain merged as lm-eval 0.4.13's ``tasks/_yaml_loader.
    load_yaml`` merges it: the included files (each relative to the file naming it, recursively; a
    list is applied in order, so later entries win; an included file's ``task_list`` is dropped), then
    the file's own keys on top."""
    path = Path(path)
    here = path.resolve()
    if here in _chain:
        raise TaskSpecError(f"{path}: include loop: {' -> '.join(str(p) for p in (*_chain, here))}")
    doc = _read_one(path)
    include = doc.pop("include", None)
    if include is None:
        return doc
    merged: dict = {}
    for inc in ([include] if isinstance(include, str) else list(include)):
        inc_path = Path(str(inc))
        if not inc_path.is_absolute():
            inc_path = path.parent / inc_path
        if not inc_path.is_file():
            raise TaskSpecError(f"{path}: include: {inc}: no such file ({inc_path})")
        inc_doc = load_lm_eval_yaml(inc_path, (*_chain, here))
        inc_doc.pop("task_list", None)
        merged.update(inc_doc)
    merged.update(doc)
    return merged


def read_lm_eval_yaml(path: Path) -> dict:
    doc = load_lm_eval_yaml(path)
    if "task" not in doc and "group" not in doc:
        raise TaskSpecError(f"{path}: not an lm-eval task YAML (no 'task' key)")
    return doc


def is_group(doc: dict) -> bool:
    """A group file: ``group: NAME`` with ``task:`` a list of tasks (no dataset of its own)."""
    return "group" in doc and not isinstance(doc.get("task"), str)


def cannot_run(problems: list[str]) -> list[str]:
    """The problems that keep the converted task from running as lm-eval's task runs."""
    return [p[len(CANNOT):] for p in problems if p.startswith(CANNOT)]


def suites_of(src: dict) -> list[str]:
    """``tag`` and ``group`` names of a task file as glotbench suites (``lm_eval.<name>``)."""
    names: list[str] = []
    for key in ("tag", "group"):
        v = src.get(key)
        for n in ([v] if isinstance(v, str) else list(v or [])):
            if isinstance(n, str) and f"lm_eval.{n}" not in names:
                names.append(f"lm_eval.{n}")
    return names


def _fewshot_config(src: dict, problems: list[str], delegated: dict) -> dict:
    """``fewshot_config`` -> the options LmEvalTask reads (``fewshot_sampler``, ``fewshot_samples``,
    ``fewshot_format``: the shots' own doc_to_* and delimiters; a ``!function`` one is in ``delegated``
    as ``fewshot_<key>`` when --lm-eval-hooks, else the conversion is refused)."""
    fc = src.get("fewshot_config")
    if fc is None:
        return {}
    if not isinstance(fc, dict):
        problems.append(f"{CANNOT}fewshot_config: not a mapping")
        return {}
    out: dict[str, Any] = {}
    fmt = {k: fc[k] for k in FEWSHOT_FORMAT if k in fc and not isinstance(fc[k], _Function)}
    if fmt:
        out["fewshot_format"] = fmt
    for k in FEWSHOT_FORMAT:
        if isinstance(fc.get(k), _Function) and f"fewshot_{k}" not in delegated:
            problems.append(f"{CANNOT}fewshot_config.{k}: {fc[k]} is Python in lm-eval's task folder")
    for k in sorted(set(fc) - FEWSHOT_KEYS):
        problems.append(f"{CANNOT}fewshot_config.{k}: not converted")
    sampler = fc.get("sampler", "default")
    if sampler not in SAMPLERS:
        problems.append(f"{CANNOT}fewshot_config.sampler {sampler}: not converted (only {', '.join(SAMPLERS)})")
    elif sampler != "default":
        out["fewshot_sampler"] = sampler
    samples = fc.get("samples")
    if isinstance(samples, _Function):
        problems.append(f"{CANNOT}fewshot_config.samples: {samples} is Python in lm-eval's task folder")
    elif samples is not None and fc.get("split") is None and src.get("fewshot_split") is None:
        if not isinstance(samples, list) or not all(isinstance(x, dict) for x in samples):
            problems.append(f"{CANNOT}fewshot_config.samples: not a list of records")
        else:
            out["fewshot_samples"] = samples
    return out


HOOK_KEYS = ("process_docs", "doc_to_text", "doc_to_target", "doc_to_choice")


def hook_ref(f: str) -> dict[str, str]:
    """Where an lm-eval ``!function`` hook lives: its ``qual`` (``module.name``, as the YAML writes it)
    and the folder it is imported from (relative to the installed ``lm_eval`` package when it is one
    of lm-eval's own task folders, so the converted task does not name this machine's paths)."""
    base = Path(getattr(f, "base", None) or ".")
    ref = {"qual": f[len("!function "):]}
    try:
        import lm_eval

        ref["lm_eval_dir"] = base.resolve().relative_to(Path(lm_eval.__file__).resolve().parent).as_posix()
    except (ImportError, ValueError):
        ref["dir"] = str(base.resolve())
    return ref


def lm_eval_version() -> str | None:
    try:
        from importlib.metadata import version

        import lm_eval  # noqa: F401 - importable, not only installed

        return version("lm-eval")
    except Exception:  # noqa: BLE001 - absent or broken: no version
        return None


def delegated_metrics(metric_list: Any) -> tuple[list[str], list[str]]:
    """The metrics a delegated ``process_results`` feeds (``metric_list`` names averaged with lm-eval's
    ``mean``, explicitly or as the metric's registered default), and why others cannot be."""
    if not isinstance(metric_list, list) or not metric_list:
        return [], ["process_results without a metric_list: which of its values lm-eval averages is not said"]
    from lm_eval.api.metrics import mean
    from lm_eval.api.registry import get_metric_aggregation

    names, why = [], []
    for m in metric_list:
        name = m.get("metric") if isinstance(m, dict) else m
        agg = m.get("aggregation") if isinstance(m, dict) else None
        if agg is None and isinstance(name, str):
            try:
                agg = "mean" if get_metric_aggregation(name) is mean else "its default"
            except Exception:  # noqa: BLE001 - lm-eval knows no default for it
                agg = "none"
        if agg == "mean" and isinstance(name, str):
            names.append(name)
        else:
            why.append(f"metric_list.{name}: aggregation {agg} of a delegated process_results not converted (only mean)")
    return names, why


def convert(src: dict, *, language: str, name: str | None = None, data_dir: str | None = None,
            data_format: str = "jsonl", hooks: bool = False) -> tuple[dict, list[str]]:
    """``(glotbench task dict, problems)``. ``data_dir``: read the splits from local files
    ``DATA_DIR/<task>_<split>.<format>`` in the dataset's own record format instead of the Hub.
    ``hooks``: delegate ``process_docs`` and ``!function`` doc_to_* hooks to lm-eval's own code (the
    ``lm_eval`` package must be importable here and where the task runs; its version is recorded)."""
    problems: list[str] = []
    delegated: dict[str, dict] = {}
    if hooks:
        version = lm_eval_version()
        if version is None:
            problems.append(f"{CANNOT}--lm-eval-hooks: the lm_eval package is not importable here "
                            "(pip install --no-deps lm-eval)")
        else:
            delegated = {k: hook_ref(src[k]) for k in (*HOOK_KEYS, "process_results") if isinstance(src.get(k), _Function)}
            fc = src.get("fewshot_config") if isinstance(src.get("fewshot_config"), dict) else {}
            delegated.update({f"fewshot_{k}": hook_ref(fc[k]) for k in ("doc_to_text", "doc_to_target", "doc_to_choice")
                              if isinstance(fc.get(k), _Function)})
            src = {k: v for k, v in src.items() if k not in delegated}
    task = str(src["task"]) if isinstance(src.get("task"), str) else str(src.get("group"))
    out: dict[str, Any] = {"name": name or f"lm_eval.{task}", "version": str((src.get("metadata") or {}).get("version", "0")),
                           "language": language,
                           "description": f"Converted from lm-eval's task {task} by glotbench tasks import-lm-eval."}
    if is_group(src):
        problems.append(f"{CANNOT}a group file ({src.get('group')}: tasks {src.get('task')}): convert its tasks "
                        f"(tasks import-lm-eval --all DIR makes the group a suite)")
    for key in sorted(set(src) - MAPPED - IGNORED - set(FATAL_KEYS) - {"fewshot_config", "group", "tag"}):
        problems.append(f"{key}: no glotbench equivalent; left out")
    for key in sorted(set(src) & set(FATAL_KEYS)):
        if src[key] is not None:
            problems.append(f"{CANNOT}{FATAL_KEYS[key]}: {src[key]}" if isinstance(src[key], _Function)
                            else f"{CANNOT}{FATAL_KEYS[key]}")
    for key in ("doc_to_text", "doc_to_target", "doc_to_choice", "description", "gen_prefix"):
        if isinstance(src.get(key), _Function):
            problems.append(f"{CANNOT}{key}: {src[key]} is Python in lm-eval's task folder")
    for key in ("doc_to_text", "doc_to_target"):
        if src.get(key) is None and key not in delegated:
            problems.append(f"{CANNOT}{key}: missing")
    if (src.get("output_type", "generate_until") == "multiple_choice" and src.get("doc_to_choice") is None
            and "doc_to_choice" not in delegated):
        problems.append(f"{CANNOT}doc_to_choice: missing for output_type multiple_choice")
    # ---- dataset and splits
    splits = {k: src.get(f"{k}_split") for k in ("training", "validation", "test", "fewshot")}
    eval_split = splits["test"] or splits["validation"]
    if not eval_split:
        problems.append(f"{CANNOT}test_split / validation_split: none given: nothing to evaluate")
        eval_split = "test"
    fc = src.get("fewshot_config") if isinstance(src.get("fewshot_config"), dict) else {}
    shot_split = fc.get("split") or splits["fewshot"] or splits["training"] or splits["validation"] or splits["test"]
    names = sorted({s for s in (eval_split, shot_split) if s})
    kwargs = src.get("dataset_kwargs") or {}
    revision = kwargs.get("revision") or src.get("revision")
    for k in set(kwargs) - {"revision"}:
        problems.append(f"dataset_kwargs.{k}: not converted")
    if data_dir is not None:
        out["dataset"] = {"format": data_format, "splits": {s: f"{data_dir}/{task}_{s}.{data_format}" for s in names},
                          "eval_split": eval_split, "encoding": "utf-8"}
    else:
        if not revision:
            problems.append("dataset revision: lm-eval's task pins none; set dataset.hf.revision to a commit "
                            "(written as 'main' meanwhile)")
        hf = {"id": src.get("dataset_path"), "revision": str(revision or "main")}
        if src.get("dataset_name"):
            hf["config"] = str(src["dataset_name"])
        # the data layer fetches the repository's snapshot (`data pull`, or the run's own fetch), pinned by
        # `data lock`; the task reads that folder (one per repository, shared by its configs)
        folder = f"lm_eval/{src.get('dataset_path')}"
        out["source"] = {"name": f"lm-eval {task}", "url": f"https://huggingface.co/datasets/{src.get('dataset_path')}",
                         "revision": hf["revision"],
                         "fetch": [{"kind": "hf", "repo": str(src.get("dataset_path")), "revision": hf["revision"],
                                    **({"config": hf["config"]} if "config" in hf else {}), "splits": names,
                                    "to": folder}]}
        out["dataset"] = {"format": "hf", "hf": hf, "splits": {s: folder for s in names}, "eval_split": eval_split}
    # ---- type, prompt, shots
    otype = src.get("output_type", "generate_until")
    options: dict[str, Any] = {k: src[k] for k in ("doc_to_text", "doc_to_target", "doc_to_choice", "target_delimiter",
                                                   "fewshot_delimiter", "description", "gen_prefix")
                               if src.get(k) is not None and not isinstance(src[k], _Function)}
    if src.get("gen_prefix") is not None and otype == "loglikelihood_rolling":
        options.pop("gen_prefix", None)
        problems.append("gen_prefix: left out (lm-eval scores a loglikelihood_rolling text alone, without a prompt)")
    elif options.get("gen_prefix") is not None:
        options["gen_prefix"] = str(options["gen_prefix"])
        if otype == "generate_until":
            problems.append("note: gen_prefix: the prompt ends with the start of the answer; a chat model must continue "
                            "that assistant turn (hf:, the embedded model and llamacpp: do, a vLLM server with -M "
                            "continue_final_message=true; other chat backends are refused: run them with -M chat=false, "
                            "the text prompt lm-eval builds without --apply_chat_template)")
    options.update(_fewshot_config(src, problems, delegated))
    if delegated:
        options["lm_eval_hooks"] = delegated
        options["lm_eval_version"] = lm_eval_version()
        problems.append(f"note: {', '.join(delegated)} delegated to lm-eval {options['lm_eval_version']}'s own code "
                        "(the task needs the lm_eval package where it runs)")
    # lm-eval leaves the evaluated record out of its shots when the few-shot split is the test split
    # (ConfigurableTask.fewshot_context: ``eval_doc=doc if fewshot split == test_split``)
    options["fewshot_excludes_item"] = (fc.get("split") or splits["fewshot"]) == splits["test"]
    if otype == "multiple_choice":
        out["output_type"] = "multiple_choice"
        metrics = ["accuracy", "accuracy_norm"]
        problems.append("note: output_type multiple_choice: lm-eval ranks the options by log-likelihood: run it with "
                        "--mode loglikelihood (generate mode is refused: the prompt shows no options)")
    elif otype == "generate_until":
        out["output_type"] = "generate"
        out["scorer"] = "exact_match"
        out["extractor"] = {"name": "text"}
        delegate = hook_ref if hooks and lm_eval_version() else None
        filters, why = (read_filter_list(src["filter_list"], delegate) if src.get("filter_list") is not None
                        else (NO_FILTER, []))
        problems.extend(f"{CANNOT}{w}" for w in why)
        options["filters"] = filters
        if any(st.get("lm_eval") for f in filters for st in f["steps"]):
            options["lm_eval_version"] = lm_eval_version()
            problems.append(f"note: filters delegated to lm-eval {options['lm_eval_version']}'s own classes "
                            "(the task needs the lm_eval package where it runs)")
        metrics = list(metric_keys(filters))
    elif otype in LL_TYPES:  # a target continuation (lambada) or a whole text (wikitext): log-likelihood only
        out["output_type"] = otype
        named = [m.get("metric") if isinstance(m, dict) else m for m in src.get("metric_list") or []]
        metrics = [LL_TYPES[otype][m] for m in named if m in LL_TYPES[otype]] or list(LL_TYPES[otype].values())
        problems.extend(f"metric_list: {m}: not converted (output_type {otype} has {', '.join(LL_TYPES[otype])})"
                        for m in named if m not in LL_TYPES[otype])
    if otype != "generate_until" and src.get("filter_list") is not None:
        steps = [s.get("function") if isinstance(s, dict) else s for f in src["filter_list"] if isinstance(f, dict)
                 for s in f.get("filter") or []]
        if steps != ["take_first"] * len(steps):  # lm-eval's default, a no-op on one answer
            problems.append(f"{CANNOT}filter_list: filters of a {otype} task not converted")
    if otype not in ("multiple_choice", "generate_until", *LL_TYPES):
        problems.append(f"{CANNOT}output_type {otype}: not converted (only multiple_choice, generate_until, "
                        f"{', '.join(LL_TYPES)})")
        out["output_type"] = "generate"
        metrics = ["exact_match"]
    for m in src.get("metric_list") or []:
        mname = m.get("metric") if isinstance(m, dict) else m
        if otype in LL_TYPES or "process_results" in delegated:  # lm-eval's process_results gives the values
            continue
        if mname not in METRICS:
            problems.append(f"metric_list: {mname}: not converted")
        extra = sorted(set(m) - {"metric", "aggregation", "higher_is_better"}) if isinstance(m, dict) else []
        if mname == "exact_match" and otype == "generate_until":  # lm-eval's options, applied (lm_eval_filters.py)
            options["exact_match"] = {k: m[k] for k in extra if k in EXACT_MATCH_OPTIONS}
            extra = [k for k in extra if k not in EXACT_MATCH_OPTIONS]
        if extra:
            problems.append(f"metric_list: {mname}: options {', '.join(extra)} not converted "
                            f"(glotbench's {METRICS.get(mname, mname)} rule applies)")
    if "process_results" in delegated and otype in ("multiple_choice", "generate_until"):
        names, why = delegated_metrics(src.get("metric_list"))
        problems.extend(f"{CANNOT}{w}" for w in why)
        options["lm_eval_metrics"] = names
        metrics = list(metric_keys(options.get("filters") or [], names))
    elif "process_results" in delegated and otype == "loglikelihood":
        problems.append(f"{CANNOT}process_results of a loglikelihood task: not delegated")
    out["metrics"] = metrics
    gen = src.get("generation_kwargs") or {}
    if otype == "generate_until":
        until = gen.get("until", [src.get("fewshot_delimiter", "\n\n")])
        out["generation"] = {"max_tokens": int(gen.get("max_gen_toks", 256)),
                             "temperature": float(gen.get("temperature", 0.0)) if gen.get("do_sample") else 0.0,
                             "stop": [until] if isinstance(until, str) else list(until)}
        for k in sorted(set(gen) - GEN_KEYS):
            problems.append(f"generation_kwargs.{k}: not converted")
    n = int(src.get("num_fewshot") or 0)
    out["fewshot"] = {"split": shot_split, "n": n, "seed": 1234}
    if int(src.get("repeats") or 1) != 1:
        problems.append(f"repeats {src['repeats']}: not converted (use --samples)")
    if suites := suites_of(src):
        out["suites"] = suites
    out["task_class"] = "glotbench.tasks.lm_eval_task:LmEvalTask"
    out["options"] = options
    return out, problems


def dump(task: dict, origin: str) -> str:
    head = f"# Converted from the lm-eval task {origin} by `glotbench tasks import-lm-eval`.\n"
    return head + yaml.safe_dump(task, sort_keys=False, allow_unicode=True, width=1000)


# ---------------------------------------------------------------- a whole task tree (--all)
def _group_members(doc: dict) -> tuple[list[str], list[str]]:
    """A group file's member names, and the inline members (task configs written inside the group
    file) that are not converted."""
    names, inline = [], []
    for m in doc.get("task") or []:
        if isinstance(m, str):
            names.append(m)
        elif isinstance(m, dict) and isinstance(m.get("task"), str) and set(m) <= {"task"}:
            names.append(m["task"])
        elif isinstance(m, dict):
            inline.append(str(m.get("task") or m.get("group") or "?"))
    return names, inline


def convert_tree(root: Path, *, language: str, data_dir: str | None = None,
                 hooks: bool = False) -> tuple[dict[str, dict], list[tuple[str, str, str, str]]]:
    """Every lm-eval task file below ``root``: ``(converted {task name: glotbench task}, rows)``, one
    row ``(file, lm-eval name, "converted" | "refused" | "group", why)`` per YAML file. A group file
    (``group:`` + a task list) and every ``tag:`` become a suite ``lm_eval.<name>`` of the converted
    tasks they reach (through groups of groups); a task that could not run as lm-eval runs it is
    refused with its reasons, and left out of its suites."""
    root = Path(root)
    rows: list[tuple[str, str, str, str]] = []
    converted: dict[str, dict] = {}
    groups: dict[str, list[str]] = {}
    for path in sorted(root.rglob("*.yaml")):
        rel = path.relative_to(root).as_posix()
        try:
            src = load_lm_eval_yaml(path)
        except TaskSpecError as err:
            rows.append((rel, "?", "refused", str(err).replace(f"{path}: ", "")))
            continue
        if is_group(src):
            members, inline = _group_members(src)
            group = str(src.get("group"))
            groups.setdefault(group, []).extend(members)
            why = f"suite lm_eval.{group} ({len(members)} members)"
            if inline:
                why += f"; inline task configs not converted: {', '.join(inline)}"
            rows.append((rel, group, "group", why))
            continue
        if not isinstance(src.get("task"), str):
            rows.append((rel, "?", "refused", "not an lm-eval task file (no 'task' name)"))
            continue
        name = src["task"]
        task, problems = convert(src, language=language, data_dir=data_dir, hooks=hooks)
        if fatal := cannot_run(problems):
            rows.append((rel, name, "refused", "; ".join(fatal)))
        elif name in converted:
            rows.append((rel, name, "refused", f"task name {name} taken by {converted[name]['_file']}"))
        else:
            task["_file"] = rel
            converted[name] = task
            losses = [p for p in problems if not p.startswith("note: ") and not p.startswith("dataset revision")]
            rows.append((rel, name, "converted", "; ".join(losses)))
    # groups of groups: every converted task a group reaches gets the group's suite
    def reach(name: str, seen: frozenset = frozenset()) -> set[str]:
        if name in converted:
            return {name}
        if name in seen:
            return set()
        out: set[str] = set()
        for m in groups.get(name, []):
            out |= reach(m, seen | {name})
        for t, spec in converted.items():  # a tag names tasks directly
            if f"lm_eval.{name}" in spec.get("suites", []) and name not in groups:
                out.add(t)
        return out

    for group in groups:
        for t in reach(group):
            suites = converted[t].setdefault("suites", [])
            if f"lm_eval.{group}" not in suites:
                suites.append(f"lm_eval.{group}")
    for spec in converted.values():
        spec.pop("_file", None)
    return converted, rows


def package_files(name: str, tasks: dict[str, dict], origin: dict[str, str]) -> dict[str, str]:
    """The files of a benchmark package holding ``tasks``: relative path -> text (docs/adding-a-benchmark.md)."""
    files = {
        "pyproject.toml": (f'[project]\nname = "{name}"\nversion = "0.1.0"\ndependencies = ["glotbench"]\n\n'
                           f'[project.entry-points."glotbench.benchmarks"]\n{name} = "{name}:register"\n\n'
                           f'[tool.setuptools.package-data]\n{name} = ["tasks/*.yaml"]\n'),
        f"src/{name}/__init__.py": ('"""lm-eval tasks converted by `glotbench tasks import-lm-eval --all`."""\n\n'
                                    "from pathlib import Path\n\n\ndef register(bench) -> None:\n"
                                    '    bench.tasks(Path(__file__).parent / "tasks")\n'),
    }
    for task_name, spec in tasks.items():
        files[f"src/{name}/tasks/{task_name}.yaml"] = dump(spec, origin.get(task_name, task_name))
    return files
