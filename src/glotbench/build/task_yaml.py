"""The task YAML a build step writes beside its dataset, in the MM-Eval shape (its semantics and
syntax task files): the paper's instructions with the
language's name, options "A. text", letter answer, accuracy. Checked by loading it with every name
resolved before the command reports success."""

from __future__ import annotations

from pathlib import Path

import yaml

from glotbench.yamlfile import load_yaml

INSTRUCTIONS = {
    "cloze": "Complete the sentence to make it grammatically correct and meaningful in {language}. "
             "Return only the letter of the correct option (A, B, C, or D), do not return anything else.",
    "word-order": "Select the grammatically correct sentence that follows the rules of {language} expression from "
                  "the options below, and return the corresponding letter of the option (such as A, B, C, or D), "
                  "do not return anything else.",
}


def language_name(code: str) -> str:
    from glotbench.languages import get_pack

    try:
        return get_pack(code).name
    except Exception:  # no pack for this language: its code stands in
        return code


def task_spec(kind: str, name: str, lang: str, dataset: Path, instruction: str | None = None) -> dict:
    language = language_name(lang)
    instr = instruction or INSTRUCTIONS[kind].format(language=language)
    fields = {"id": "id"}
    if kind == "cloze":
        fields["question"] = "question"
    fields.update({"choices": "choices[*].text", "labels": "choices[*].label", "target": "answerKey",
                   "instruction": "=" + instr})
    body = "{{ instruction }}\n\n{{ question }}\n\n{{ choices_block }}" if kind == "cloze" \
        else "{{ instruction }}\n\n{{ choices_block }}"
    what = "fill the blank (_) with a noun/pronoun or adjective/adverb" if kind == "cloze" \
        else "pick the original word order among four shuffles"
    return {
        "name": name, "version": "1.0", "language": lang,
        "description": f"Built by glotbench build {kind} (MM-Eval §{'3.5' if kind == 'cloze' else '3.4'} method): {what}.",
        "source": {"name": f"glotbench build {kind}",
                   "paper": "MM-Eval: A Hierarchical Benchmark for Modern Mongolian Evaluation in LLMs (Zhang et al.), "
                            + ("§3.5" if kind == "cloze" else "§3.4")},
        "dataset": {"format": "jsonl", "splits": {"test": dataset.name}, "eval_split": "test"},
        "fields": fields,
        "output_type": "multiple_choice",
        "prompt": {"system": f"You are an AI assistant proficient in {language}.", "user": body,
                   "choice_format": "{{ label }}. {{ text }}"},
        "generation": {"max_tokens": 24, "temperature": 0.0},
        "extractor": {"name": "choice"},
        "scorer": "label",
        "metrics": ["accuracy"],
    }


def write_task_yaml(path: Path, spec: dict) -> Path:
    """Write the YAML, then load it as `glotbench run` would (names resolved); return the path."""
    from glotbench.tasks.registry import make_task
    from glotbench.tasks.spec import load_spec

    path = Path(path)
    path.write_text(yaml.safe_dump(spec, allow_unicode=True, sort_keys=False, width=1000), encoding="utf-8")
    make_task(load_spec(path), path)
    return path


def yaml_path_for(dataset: Path) -> Path:
    dataset = Path(dataset)
    stem = dataset.name[: -len(".jsonl")] if dataset.name.endswith(".jsonl") else dataset.stem
    return dataset.with_name(stem + ".yaml")


def retarget(dataset_in: Path, dataset_out: Path) -> Path | None:
    """The input dataset's task YAML (``<stem>.yaml`` beside it), copied beside ``dataset_out`` and
    pointed at it (same task name), checked; None when the input has no YAML."""
    src = yaml_path_for(dataset_in)
    if not src.is_file():
        return None
    spec = load_yaml(src.read_text(encoding="utf-8"))  # aliases bounded (yamlfile.py)
    split = spec["dataset"].get("eval_split", "test")
    out = Path(dataset_out)
    target = out.name if out.resolve().parent == yaml_path_for(out).resolve().parent else str(out.resolve())
    spec["dataset"] = {**spec["dataset"], "splits": {**spec["dataset"].get("splits", {}), split: target}}
    return write_task_yaml(yaml_path_for(out), spec)
