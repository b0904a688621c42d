"""`glotbench analyze thinking RUN_DIR`: reasoning-trace statistics of a finished run.

Per task and outcome (CORRECT / INCORRECT / NOT_ATTEMPTED): mean trace length (approximate
tokens), mean number of thoughts, and the share of thought segments with explicit translation
insertion (OpenHuEval §4; :mod:`glotbench.benchmarks.openhueval.thinking`). Traces are a response's separate
reasoning field or its ``<think>`` block. Thoughts are split at the language pack's reflection
markers, or with ``--judge`` by the benchmark's own splitting prompts (HuSimpleQA: find and
confirm thought shifts; other tasks: the HuMatchingFIB segment split), sent through the run's
journal so a repeated analysis costs no judge calls.

A task says how its records map to outcomes with ``thinking_outcome(record)`` (the OpenHuEval
tasks do); otherwise a judge grade in ``pred`` (SimpleQA-style tasks) or a per-item
``correct`` / ``exact_match`` value is used, an unparseable answer counting as NOT_ATTEMPTED.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections import defaultdict
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from glotbench.cli.analyze_cmd import analyze_app, load_run_records
from glotbench.cli.option_groups import JournalOptions, one, options, setting_option
from glotbench.settings import CallOptions, JudgeOptions
from glotbench.errors import DataError
from glotbench.sample_record import SampleRecord

OUTCOMES = ("CORRECT", "INCORRECT", "NOT_ATTEMPTED")


# ---------------------------------------------------------------- reading the run


def _task_object(name: str):
    from glotbench.tasks.registry import resolve

    try:
        return resolve([name])[0]
    except Exception:  # noqa: BLE001 - a task defined in a file no longer around: use the generic rule
        return None


def generic_outcome(record: SampleRecord) -> str | None:
    pred = record.pred
    if isinstance(pred, str) and pred.strip().upper() in OUTCOMES:
        return pred.strip().upper()
    values = record.value_map
    for key in ("correct", "exact_match", "question_correct"):
        if values.get(key) is not None:
            if pred is None:
                return "NOT_ATTEMPTED"
            return "CORRECT" if values[key] == 1.0 else "INCORRECT"
    return None


def outcome_of(record: SampleRecord, task) -> str | None:
    fn = getattr(task, "thinking_outcome", None)
    return fn(record) if fn is not None else generic_outcome(record)


def _question(record: SampleRecord) -> str:
    prompt = record.prompt
    if isinstance(prompt, list):
        users = [m.get("content", "") for m in prompt if isinstance(m, dict) and m.get("role") == "user"]
        return users[-1] if users else ""
    return str(prompt or "")


def responses_by_task(records: list[SampleRecord], tasks: list[str] | None) -> tuple[dict[str, list[dict]], dict[str, int]]:
    """task -> analysis records ({outcome, response, reasoning, question, lang}), one per output;
    and task -> number of items without a defined outcome."""
    by_task: dict[str, list[dict]] = defaultdict(list)
    no_outcome: dict[str, int] = defaultdict(int)
    objs: dict[str, object] = {}
    for rec in records:
        name = rec.task
        if tasks and name not in tasks:
            continue
        if name not in objs:
            objs[name] = _task_object(name)
        outcome = outcome_of(rec, objs[name])
        if outcome not in OUTCOMES:
            no_outcome[name] += 1
            continue
        for k, out in enumerate(rec.output_list):
            by_task[name].append({"id": f"{rec.sample_id}#{k}", "outcome": outcome, "response": out.get("text") or "",
                                  "reasoning": out.get("reasoning"), "question": _question(rec), "lang": rec.lang,
                                  "gold": rec.gold, "pred": rec.pred, "sample_id": rec.sample_id})
    return dict(by_task), dict(no_outcome)


# ---------------------------------------------------------------- judge-based splitting

def _add_options(name: str, rows: list[dict]) -> None:
    """The item's option list (HuMatchingFIB), for the four-dimension tagging prompt."""
    task = _task_object(name)
    if task is None or not rows:
        return
    try:
        by_id = {s.id: s for s in task.samples()}
    except Exception:  # noqa: BLE001 - data gone since the run: tag without options
        return
    for r in rows:
        s = by_id.get(str(r.get("sample_id")))
        rec = (s.vars.get("record") if s is not None else None) or {}
        r["options"] = list(rec.get("options") or [])


def token_counter(run_dir: Path):
    """(count function, label): the run model's own tokenizer when it is a local GGUF (embedded /
    llamacpp), else the labelled word approximation."""
    from glotbench.benchmarks.openhueval.thinking import approx_token_count

    approx = (approx_token_count, "approximate: whitespace words, CJK characters one each")
    try:
        res = json.loads((run_dir / "results.json").read_text(encoding="utf-8"))
        spec = (res.get("config") or {}).get("model") or res["model"].get("spec") or ""
    except (OSError, json.JSONDecodeError, KeyError, TypeError):
        return approx
    if not (spec in ("embedded", "default") or spec.startswith(("embedded:", "llamacpp:"))):
        return approx
    try:
        from glotbench.models.registry import load_model

        model = load_model(spec)
    except Exception:  # noqa: BLE001 - the GGUF is not on this machine: approximate, labelled
        return approx
    if model.count_tokens("x") is None:
        return approx
    return (lambda text: model.count_tokens(text) or 0), f"the model's own tokenizer ({res['model'].get('model_id', spec)})"


def split_with_judge(run_dir: Path, by_task: dict[str, list[dict]], judge_spec: str, judge_args: dict,
                     wait: bool = False, co: CallOptions | None = None) -> dict[str, int]:
    """Judge calls go into the run's journal, under the run lock (``wait``: queue behind its holder;
    ``co``: --concurrency, --timeout, --max-retries)."""
    from glotbench.cli.option_groups import calls_in_flight, retry_policy

    from glotbench.engine.caller import CachedCaller
    from glotbench.engine.journal import Journal
    from glotbench.engine.lock import journal_lock
    from glotbench.engine.journal import JOURNAL_NAME
    from glotbench.models.loading import load_judge

    co = co or CallOptions()
    judge = load_judge(judge_spec, judge_args, co.timeout)
    lock = journal_lock(run_dir / JOURNAL_NAME, wait=wait)
    journal = None
    try:
        journal = Journal(run_dir / JOURNAL_NAME)

        async def go() -> dict[str, int]:
            caller = CachedCaller(judge, journal, role="judge", policy=retry_policy(co),
                                  concurrency=calls_in_flight(co.concurrency, judge))
            try:
                from glotbench.benchmarks.openhueval.thinking_judge import analyse_rows

                for t, rows in by_task.items():
                    await analyse_rows(rows, t, caller)
                return {t: sum(1 for r in rows if r.get("judge_unreadable") and not r.get("segments"))
                        for t, rows in by_task.items()}
            finally:
                await judge.aclose()

        return asyncio.run(go())
    finally:
        if journal is not None:
            journal.close()
        lock.release()


# ---------------------------------------------------------------- the command

def _f(x, fmt: str = "{:.1f}") -> str:
    return "-" if x is None else fmt.format(x)


def report_table(task: str, report: dict, no_outcome: int, lang: str, exact_tokens: bool = False) -> Table:
    title = f"{task} · trace language {lang} vs en" + (f" · {no_outcome} item(s) without an outcome left out" if no_outcome else "")
    t = Table(title=title)
    for col in ("outcome", "with trace", "no trace", "mean tokens" + ("" if exact_tokens else "≈"), "mean thoughts", "segments", "ETI share",
                "ETI / pivot / prompt / undet."):
        t.add_column(col, justify="left" if col == "outcome" else "right")
    for outcome in (*OUTCOMES, "ALL"):
        r = report[outcome]
        counts = "/".join(str(r.get(k, "-")) for k in ("n_eti", "n_pivot_only", "n_prompt_only", "n_undetermined"))
        t.add_row(outcome, str(r["n_responses"]), str(r["n_without_trace"]), _f(r["mean_tokens"]), _f(r["mean_thoughts"], "{:.2f}"),
                  str(r["n_segments"]), _f(r.get("eti_share"), "{:.0%}"), counts if "n_eti" in r else "-")
    return t


@analyze_app.command("thinking")
@options(jo=JudgeOptions, co=CallOptions, journal=(JournalOptions, {"only": ("wait",)}))
def thinking(
    run_dir: Path = typer.Argument(..., help="A run directory (holds journal.sqlite / samples.jsonl)."),
    task_old: list[str] | None = typer.Option(None, "--task", hidden=True, help="The old spelling of --tasks."),
    lang_old: str | None = typer.Option(None, "--lang", hidden=True, help="The old spelling of --language."),
    pivot: str = setting_option("en", "--pivot", help="The language a model may translate into while thinking."),
    tasks: list[str] | None = setting_option(None, "--tasks", "-t", "--suite", help="Only these tasks of the run "
                                             "(default: every task with CORRECT / INCORRECT / NOT_ATTEMPTED outcomes)."),
    language: str | None = setting_option(None, "--language", "-l", help="Language of the prompt material for "
                                          "translation detection (default: the task's)."),
    json_out: Path | None = setting_option(None, "--json", help="Write the report here (default RUN_DIR/thinking.json)."),
    *, jo: JudgeOptions, co: CallOptions, journal: JournalOptions,
) -> None:
    """Trace length, thoughts and translation insertion per outcome (CORRECT / INCORRECT / NOT_ATTEMPTED).

    With --judge, traces are split into thoughts by that judge with the benchmark's prompts."""
    from glotbench.benchmarks.openhueval.thinking import analyze

    task, lang = [*(tasks or []), *(task_old or [])] or None, language or lang_old
    judge = one(jo.judge, "--judge")
    if not run_dir.is_dir():
        raise DataError(f"{run_dir}: run directory not found")
    by_task, no_outcome = responses_by_task(load_run_records(run_dir), task)
    if not by_task:
        raise DataError(f"{run_dir}: no scored item with a CORRECT / INCORRECT / NOT_ATTEMPTED outcome"
                        + (f" in task(s) {', '.join(task)}" if task else ""))
    fallbacks: dict[str, int] = {}
    if judge:
        for name, rows in by_task.items():
            if "fib" in name.lower():
                _add_options(name, rows)
        fallbacks = split_with_judge(run_dir, by_task, judge, jo.judge_options(), wait=journal.wait, co=co)
    out = Console(width=None if sys.stdout.isatty() else 160)
    result: dict = {"run_dir": str(run_dir), "splitting": f"judge {judge}" if judge else "reflection markers",
                    "tokens": "", "tasks": {}}
    count, result["tokens"] = token_counter(run_dir)
    exact = not result["tokens"].startswith("approximate")
    for name, rows in sorted(by_task.items()):
        plang = lang or next((r["lang"] for r in rows if r.get("lang")), "hu")
        report = analyze(rows, prompt_lang=plang, pivot_lang=pivot, count_tokens=count)
        result["tasks"][name] = {"prompt_lang": plang, "n_without_outcome": no_outcome.get(name, 0),
                                 "judge_split_fallbacks": fallbacks.get(name), "by_outcome": report}
        out.print(report_table(name, report, no_outcome.get(name, 0), plang, exact))
        if judge:
            from glotbench.benchmarks.openhueval.thinking_judge import summarise
            from glotbench.benchmarks.openhueval.thinking_tables import judge_tables

            jrep = summarise(rows)
            result["tasks"][name]["judge_analysis"] = jrep
            for table in judge_tables(name, jrep):
                out.print(table)
    for name, n in sorted(no_outcome.items()):
        if name not in by_task:
            out.print(f"{name}: {n} item(s), none with a CORRECT / INCORRECT / NOT_ATTEMPTED outcome (left out)", style="yellow")
    if judge and any(fallbacks.values()):
        out.print(f"judge split unusable for {sum(fallbacks.values())} trace(s): split at reflection markers instead", style="yellow")
    out.print(f"thoughts split by {result['splitting']}; tokens are {result['tokens']}")
    path = json_out or run_dir / "thinking.json"
    path.write_text(json.dumps(result, ensure_ascii=False, indent=2), encoding="utf-8")
    out.print(f"report: {path}", soft_wrap=True)
