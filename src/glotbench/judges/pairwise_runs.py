"""A finished (or killed) run's answers, read from its journal, for pairwise judging.

An item is (task, item id). Its question is the prompt the model saw without the system turn: the
last user message of a chat prompt (few-shot turns before it are left out), or the whole text of a
plain prompt. Its answer is the first output's text with any thinking trace taken out. Items whose
record is an error, or whose answer is empty, count as unanswered. A multi-turn item (its record's
``detail.dialogue``, docs/multi-turn.md) is judged as a whole dialogue, as MT-Bench's multi-turn pairwise
prompt shows it: the question is its user turns, each answer the model's whole dialogue
(``"USER: ..."`` / ``"ASSISTANT: ..."`` blocks); one whose last answer is empty counts as unanswered.

A journal can hold the same task under several run keys (the folder was reused with other
settings): the key results.json names for the task is taken; without one, the task is refused
with one line naming the keys.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from glotbench.engine.journal import Journal
from glotbench.errors import GlotbenchError
from glotbench.extract.thinking import strip_thinking

JOURNAL_NAME = "journal.sqlite"
ItemKey = tuple[str, str]  # (task, item id)


@dataclass(frozen=True)
class Answer:
    question: str
    text: str
    lang: str | None


@dataclass
class RunAnswers:
    path: Path
    label: str
    model_id: str
    answers: dict[ItemKey, Answer] = field(default_factory=dict)
    unanswered: set[ItemKey] = field(default_factory=set)


def _text(content) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts: the text ones
        return "".join(p.get("text", "") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return "" if content is None else str(content)


def question_of(prompt) -> str:
    """The question the model was asked (see the module docstring)."""
    if isinstance(prompt, list):
        users = [m for m in prompt if isinstance(m, dict) and m.get("role") == "user"]
        return _text(users[-1].get("content")) if users else ""
    if isinstance(prompt, dict):
        return _text(prompt.get("prompt", prompt.get("content")))
    return _text(prompt)


def _answer_text(record: dict) -> str:
    outputs = record.get("outputs") or []
    first = outputs[0] if outputs and isinstance(outputs[0], dict) else {}
    return strip_thinking(_text(first.get("text")))[0].strip()


def _dialogue(record: dict) -> list[dict] | None:
    """A multi-turn record's dialogue (user and assistant messages), or None."""
    said = (record.get("detail") or {}).get("dialogue") if isinstance(record.get("detail"), dict) else None
    if not isinstance(said, list) or not said or not all(isinstance(m, dict) for m in said):
        return None
    return [{"role": m.get("role"), "content": _text(m.get("content"))} for m in said]


def _answer_of(record: dict) -> Answer | None:
    """The record's question and answer (see the module docstring); None when unanswered."""
    said = _dialogue(record) if record.get("status") == "scored" else None
    if said is not None:
        from glotbench.prompts.dialogue import transcript

        if said[-1]["role"] != "assistant" or not said[-1]["content"].strip():
            return None
        return Answer(question=transcript([m for m in said if m["role"] == "user"]).strip(),
                      text=transcript(said).strip(), lang=record.get("lang"))
    text = _answer_text(record) if record.get("status") == "scored" else ""
    return Answer(question=question_of(record.get("prompt")), text=text, lang=record.get("lang")) if text else None


def _results(run_dir: Path) -> dict:
    path = run_dir / "results.json"
    try:
        obj = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (OSError, json.JSONDecodeError):
        return {}
    return obj if isinstance(obj, dict) else {}


def _current_keys(run_dir: Path, results: dict) -> dict[str, str]:
    """task -> the run key results.json names for it."""
    out = {}
    for task, res in (results.get("tasks") or {}).items():
        fp = res.get("fingerprint") if isinstance(res, dict) else None
        if isinstance(fp, dict) and isinstance(fp.get("id"), str):
            out[task] = fp["id"]
    return out


def read_run(run_dir: Path, tasks: list[str] | None = None) -> RunAnswers:
    """The answered and unanswered items of one run directory (``tasks``: only these)."""
    run_dir = Path(run_dir)
    path = run_dir / JOURNAL_NAME
    if not path.is_file():
        raise GlotbenchError(f"{run_dir}: not a glotbench run directory (no {JOURNAL_NAME})")
    results = _results(run_dir)
    model = results.get("model") if isinstance(results.get("model"), dict) else {}
    journal = Journal(path)
    try:
        cfg = journal.get_meta("config") or {}
        rows_by_task: dict[str, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
        every_task: set[str] = set()
        for row in journal.iter_samples():
            every_task.add(row["task"])
            if tasks and row["task"] not in tasks:
                continue
            rows_by_task[row["task"]][row["run_key"]].append(row)
    finally:
        journal.close()
    if tasks and not rows_by_task:
        raise GlotbenchError(f"{run_dir}: the run has none of the tasks {', '.join(tasks)} (it has: "
                             f"{', '.join(sorted(every_task)) or 'no items at all'})")
    named = _current_keys(run_dir, results)
    run = RunAnswers(path=run_dir, label=run_dir.name or str(run_dir),
                     model_id=str(model.get("model_id") or (cfg.get("model") if isinstance(cfg, dict) else None) or "?"))
    for task, by_key in rows_by_task.items():
        if len(by_key) > 1 and named.get(task) not in by_key:
            raise GlotbenchError(f"{path}: task {task} has items from {len(by_key)} different settings (run keys "
                                 f"{', '.join(sorted(by_key))}) and results.json names none of them; judge a run "
                                 f"folder that holds one setting")
        rows = by_key[named[task]] if len(by_key) > 1 else next(iter(by_key.values()))
        for row in rows:
            key = (task, str(row["sample_id"]))
            answer = _answer_of(row)
            if answer is None:
                run.unanswered.add(key)
                continue
            run.answers[key] = answer
    return run


def read_runs(run_dirs: list[Path], tasks: list[str] | None = None) -> list[RunAnswers]:
    """:func:`read_run` of each; each run is labelled with its folder's name, or with the path as
    given where two folders share a name. The same folder twice is refused."""
    seen: dict[Path, Path] = {}
    for d in run_dirs:
        real = Path(d).resolve()
        if real in seen:
            raise GlotbenchError(f"{d}: the same run is given twice (also as {seen[real]}); give each run once")
        seen[real] = Path(d)
    runs = [read_run(Path(d), tasks) for d in run_dirs]
    names = [r.label for r in runs]
    for r in runs:
        if names.count(r.label) > 1:
            r.label = str(r.path)
    return runs
