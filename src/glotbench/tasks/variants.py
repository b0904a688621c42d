"""``run --prompt-variants all|N``: a task's declared prompt and the variants it lists under ``prompts:``
(docs/prompt-variants.md), each run as a task of its own.

The declared prompt keeps the task's name (and so its journal rows, fingerprint and headline); a
variant runs as ``<task>@<variant>``, a copy of the task whose ``prompt`` is the declared one with the
variant's fields over it (from the task file, or from the variant's ``file``). Its spec, and so its
fingerprint and journal rows, differ from the declared prompt's: a rerun resumes each variant. A
variant that cannot be read or whose template is broken is one line naming the file and field,
before any request."""

from __future__ import annotations

from pathlib import Path

import jinja2

from glotbench.errors import TaskSpecError
from glotbench.prompts import sandbox
from glotbench.tasks.spec import DECLARED_PROMPT, PromptSpec, PromptVariant
from glotbench.yamlfile import read_mapping

SEP = "@"  # <task>@<variant>
PROMPT_FIELDS = ("system", "user", "plain", "choice_format", "choice_separator", "answer_cue")


def variant_names(task) -> list[str]:
    return [DECLARED_PROMPT] + [v.name for v in task.spec.prompts]


def base_name(name: str) -> str:
    return name.split(SEP, 1)[0]


def how_many(which: str, task) -> int:
    """How many of ``task``'s prompts a run with ``--prompt-variants which`` takes (one line when it cannot)."""
    names = variant_names(task)
    if str(which).strip().lower() == "all":
        return len(names)
    try:
        n = int(str(which).strip())
    except ValueError:
        n = 0
    if n < 1:
        raise TaskSpecError(f"--prompt-variants {which}: give all, or a whole number of prompts >= 1")
    if n > len(names):
        raise TaskSpecError(f"--prompt-variants {which}: task {task.name} declares {len(names)} prompt(s) "
                            f"({', '.join(names)}); ask for at most {len(names)}, or all")
    return n


def _variant_prompt(task, k: int, v: PromptVariant) -> PromptSpec:
    where = f"{task.spec_path or task.name}: prompts[{k}] ({v.name})"
    fields = {f: getattr(v, f) for f in PROMPT_FIELDS if getattr(v, f) is not None}
    if v.file:
        base = Path(task.spec_path).resolve().parent if task.spec_path else Path.cwd()
        path = (base / v.file) if not Path(v.file).is_absolute() else Path(v.file)
        raw = read_mapping(path, "prompt file", TaskSpecError)
        bad = next((key for key in raw if key not in PROMPT_FIELDS), None)
        if bad is not None:
            raise TaskSpecError(f"{path}: field {bad!r}: not a prompt field (one of {', '.join(PROMPT_FIELDS)}) "
                                f"(for {where})")
        for key, val in raw.items():
            if not isinstance(val, str):
                raise TaskSpecError(f"{path}: field {key!r}: must be text, got {type(val).__name__} (for {where})")
        fields = {**raw, **fields}
        where = f"{path} (for {where})"
    env = sandbox.environment()
    for key, src in fields.items():
        try:
            env.parse(src)
        except jinja2.TemplateSyntaxError as err:
            raise TaskSpecError(f"{where}: field '{key}': template error at line {err.lineno}: {err.message}") from None
        why = sandbox.check(src)
        if why is not None:
            raise TaskSpecError(f"{where}: field '{key}': {why}")
    return task.spec.prompt.model_copy(update=fields)


def variant_tasks(task, which: str) -> list:
    """``task`` (its declared prompt) and its first variants as tasks, ``which``: all or N."""
    from glotbench.tasks.registry import make_task

    n = how_many(which, task)
    out = [task]
    for k, v in enumerate(task.spec.prompts[: n - 1]):
        spec = task.spec.model_copy(update={"name": f"{task.name}{SEP}{v.name}", "prompt": _variant_prompt(task, k, v),
                                            "prompts": []})
        t = make_task(spec, task.spec_path)
        t.data_problem, t.data_differs = task.data_problem, task.data_differs
        out.append(t)
    return out


def expand(tasks: list, which: str | None) -> list:
    """Every task of a run with ``--prompt-variants which`` (None: the tasks as they are). A task that
    declares no variant runs its own prompt; a run where no task declares any is refused."""
    if not which:
        return tasks
    if not any(t.spec.prompts for t in tasks):
        raise TaskSpecError(f"--prompt-variants {which}: no selected task declares prompt variants "
                            f"({', '.join(t.name for t in tasks[:5])}); list them under prompts: in the task file "
                            "(docs/prompt-variants.md)")
    return [x for t in tasks for x in (variant_tasks(t, which) if t.spec.prompts else [t])]
