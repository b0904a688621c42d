"""Convert an lm-eval task YAML into a glotbench task YAML (``glotbench tasks import-lm-eval``).

The converted task uses :class:`glotbench.tasks.lm_eval_task.LmEvalTask`, which applies lm-eval's
``doc_to_text`` / ``doc_to_target`` / ``doc_to_choice`` and its prompt construction as lm-eval does.
Mapped: ``task``, ``dataset_path`` / ``dataset_name`` / ``dataset_kwargs.revision`` (or ``revision``),
the splits (``test_split`` else ``validation_split`` is evaluated, as lm-eval's ``eval_docs``;
``fewshot_split`` else ``training_split`` else ``validation_split`` gives the shots),
``num_fewshot``, ``output_type`` (``multiple_choice``: log-likelihood ranking in lm-eval, so run the
task with ``--mode loglikelihood``; ``generate_until``), ``generation_kwargs`` (``until``,
``max_gen_toks``, ``temperature``), ``target_delimiter``, ``fewshot_delimiter``, ``description``,
``metadata.version`` and the ``acc`` / ``acc_norm`` / ``exact_match`` metrics. Everything else
(``process_docs``, ``filter_list``, ``!function`` hooks, ``include``, metric options such as
``ignore_case``, ...) is listed in the returned problems, one line each, and left out (a line
starting with ``note:`` is advice, not a loss).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from glotbench.errors import TaskSpecError
from glotbench.yamlfile import expanded_size

# lm-eval keys that have no effect on the numbers or that are mapped below
MAPPED = {"task", "dataset_path", "dataset_name", "dataset_kwargs", "revision", "output_type", "training_split",
          "validation_split", "test_split", "fewshot_split", "doc_to_text", "doc_to_target", "doc_to_choice",
          "num_fewshot", "generation_kwargs", "target_delimiter", "fewshot_delimiter", "description", "metadata",
          "metric_list", "repeats"}
IGNORED = {"group", "tag", "should_decontaminate", "doc_to_decontamination_query", "task_alias", "group_alias"}
METRICS = {"acc": "accuracy", "acc_norm": "accuracy_norm", "exact_match": "exact_match"}
GEN_KEYS = {"until", "max_gen_toks", "do_sample", "temperature"}


class _Function(str):
    """An lm-eval ``!function module.name`` hook (Python in lm-eval's task folder): not convertible."""


def _loader():
    class Loader(yaml.SafeLoader):
        pass

    def function(loader, node):
        return _Function(f"!function {loader.construct_scalar(node)}")

    Loader.add_constructor("!function", function)
    return Loader


def read_lm_eval_yaml(path: Path) -> dict:
    try:
        text = Path(path).read_text(encoding="utf-8")
        doc = yaml.load(text, Loader=_loader())  # noqa: S506 - SafeLoader subclass
        if "*" in text:
            expanded_size(doc)  # an alias bomb is refused, not walked (yamlfile.py)
    except (OSError, yaml.YAMLError) as err:
        raise TaskSpecError(f"{path}: cannot read the lm-eval task: {err}") from None
    if not isinstance(doc, dict) or "task" not in doc:
        raise TaskSpecError(f"{path}: not an lm-eval task YAML (no 'task' key)")
    return doc


def convert(src: dict, *, language: str, name: str | None = None, data_dir: str | None = None,
            data_format: str = "jsonl") -> tuple[dict, list[str]]:
    """``(glotbench task dict, problems)``. ``data_dir``: read the splits from local files
    ``DATA_DIR/<task>_<split>.<format>`` in the dataset's own record format instead of the Hub."""
    problems: list[str] = []
    task = str(src["task"])
    out: dict[str, Any] = {"name": name or f"lm_eval.{task}", "version": str((src.get("metadata") or {}).get("version", "0")),
                           "language": language,
                           "description": f"Converted from lm-eval's task {task} by glotbench tasks import-lm-eval."}
    for key in sorted(set(src) - MAPPED - IGNORED):
        problems.append(f"{key}: no glotbench equivalent; left out")
    for key in ("doc_to_text", "doc_to_target", "doc_to_choice", "description"):
        if isinstance(src.get(key), _Function):
            problems.append(f"{key}: {src[key]} is Python in lm-eval's task folder: not converted")
    if "doc_to_text" not in src or "doc_to_target" not in src:
        problems.append("doc_to_text / doc_to_target: missing (the task may use 'include'): the converted task cannot run")
    # ---- dataset and splits
    splits = {k: src.get(f"{k}_split") for k in ("training", "validation", "test", "fewshot")}
    eval_split = splits["test"] or splits["validation"]
    if not eval_split:
        problems.append("test_split / validation_split: none given: nothing to evaluate")
        eval_split = "test"
    shot_split = splits["fewshot"] or splits["training"] or splits["validation"] or splits["test"]
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
        out["dataset"] = {"format": "hf", "hf": hf, "splits": {s: s for s in names}, "eval_split": eval_split}
    # ---- type, prompt, shots
    otype = src.get("output_type", "generate_until")
    options: dict[str, Any] = {k: src[k] for k in ("doc_to_text", "doc_to_target", "doc_to_choice", "target_delimiter",
                                                   "fewshot_delimiter", "description") if k in src and not isinstance(src[k], _Function)}
    if otype == "multiple_choice":
        out["output_type"] = "multiple_choice"
        metrics = ["accuracy", "accuracy_norm"]
        problems.append("note: output_type multiple_choice: lm-eval ranks the options by log-likelihood: run it with "
                        "--mode loglikelihood (generate mode asks for the option index instead)")
    elif otype == "generate_until":
        out["output_type"] = "generate"
        metrics = ["exact_match"]
        out["scorer"] = "exact_match"
        out["extractor"] = {"name": "text"}
    else:
        problems.append(f"output_type {otype}: not supported (only multiple_choice and generate_until)")
        out["output_type"] = "generate"
        metrics = ["exact_match"]
    for m in src.get("metric_list") or []:
        mname = m.get("metric") if isinstance(m, dict) else m
        if mname not in METRICS:
            problems.append(f"metric_list: {mname}: not converted")
        extra = sorted(set(m) - {"metric", "aggregation", "higher_is_better"}) if isinstance(m, dict) else []
        if extra:
            problems.append(f"metric_list: {mname}: options {', '.join(extra)} not converted "
                            f"(glotbench's {METRICS.get(mname, mname)} rule applies)")
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
    out["task_class"] = "glotbench.tasks.lm_eval_task:LmEvalTask"
    out["options"] = options
    return out, problems


def dump(task: dict, origin: str) -> str:
    head = f"# Converted from the lm-eval task {origin} by `glotbench tasks import-lm-eval`.\n"
    return head + yaml.safe_dump(task, sort_keys=False, allow_unicode=True, width=1000)
