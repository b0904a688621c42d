"""Difficulty filter (Chinese SimpleQA §3.3: a question every strong model answers is dropped):
run N model settings on the items through the normal engine and keep items at most ``max_correct``
of them answer correctly.

The items become a task YAML (:mod:`glotbench.build.taskfile`) that :func:`glotbench.evaluate` runs
like any task, one run directory per model setting under ``<work>/runs/<n>`` (runs are journaled
and resume as `glotbench run` does). With a judge the task is SimpleQA-style and an item is correct
when the judge grades it CORRECT; without one, the reply is read for the answer: correct when the
answer (after ``rapidfuzz.utils.default_process``) occurs in the reply as whole words. A failed item
or an unreadable judge reply is recorded as unknown (``null``) and does not count as correct.

A model setting is a model spec, optionally with run settings after ``;``:
``embedded;max_tokens=16;temperature=0.7`` (any ``glotbench.settings.RunSettings`` field).
"""

from __future__ import annotations

import json
from pathlib import Path

from rapidfuzz import utils

from glotbench.build import taskfile
from glotbench.errors import GlotbenchError


def parse_setting(text: str) -> tuple[str, dict]:
    spec, *rest = [p.strip() for p in text.split(";")]
    settings: dict = {}
    for part in rest:
        if not part:
            continue
        key, sep, val = part.partition("=")
        if not sep:
            raise GlotbenchError(f"--model {text!r}: expected SPEC;NAME=VALUE;..., got {part!r}")
        try:
            settings[key.strip()] = json.loads(val)
        except json.JSONDecodeError:
            settings[key.strip()] = val.strip()
    return spec, settings


def reply_matches(reply: str, answer: str) -> bool:
    a, r = utils.default_process(str(answer)), utils.default_process(reply or "")
    return bool(a) and f" {a} " in f" {r} "


def _field(sample, name: str):
    """A sample record's field by attribute (the typed SampleRecord), else from its raw dict."""
    value = getattr(sample, name, None)
    if value is None and isinstance(getattr(sample, "raw", None), dict):
        value = sample.raw.get(name)
    return value


def correct_by_item(result, judged: bool) -> dict[str, bool | None]:
    """``{item id: correct?}`` from an :class:`glotbench.api.EvalResult` (None: the item failed)."""
    out: dict[str, bool | None] = {}
    for s in result.samples:
        sid = str(_field(s, "sample_id") or _field(s, "id"))
        if _field(s, "status") != "scored":
            out[sid] = None
        elif judged:
            grades = (_field(s, "detail") or {}).get("grades") or []
            # a judge reply with no grade in it: unknown (None), not "answered wrongly"
            out[sid] = None if not grades or grades[0] == "JUDGE_ERROR" else grades[0] == "CORRECT"
        else:
            outputs = _field(s, "outputs") or []
            out[sid] = bool(outputs) and reply_matches(outputs[0].get("text") or "", str(_field(s, "gold")))
    return out


def run_settings(items: list[dict], models: list[str], work: Path, *, language: str, judge: str | None,
                 judge_base_url: str | None = None, base_url: str | None = None, name: str = "build_difficulty",
                 evaluate=None, model_args: list[dict] | None = None,
                 common: dict | None = None) -> list[tuple[str, dict[str, bool | None], str]]:
    """``[(setting, {item: correct?}, run dir)]`` for each model setting (``common``: run settings of
    every model unless its own setting names them: concurrency, judge_args ...)."""
    if evaluate is None:
        from glotbench.api import evaluate
    work = Path(work)
    if judge:
        yaml_path = taskfile.judged_task(items, work / "task", name=name, language=language)
    else:
        yaml_path = taskfile.match_task(items, work / "task", name=name, language=language)
    out = []
    for n, setting in enumerate(models):
        spec, settings = parse_setting(setting)
        if base_url and "base_url" not in settings:
            settings["base_url"] = base_url
        if model_args and model_args[n]:  # -M: backend options, as glotbench run takes them
            settings["model_args"] = {**model_args[n], **settings.get("model_args", {})}
        if judge:
            settings.setdefault("judge", judge)
            if judge_base_url:
                settings.setdefault("judge_base_url", judge_base_url)
        for key, value in (common or {}).items():
            settings.setdefault(key, value)
        run_dir = work / "runs" / str(n)
        result = evaluate(spec, [str(yaml_path)], output=str(run_dir), **settings)
        out.append((setting, correct_by_item(result, bool(judge)), str(run_dir)))
    return out
