"""`glotbench translate`: a task's dataset in another language, the Czech-Bench way (§5.2)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from glotbench.cli.build_app import build_app
from glotbench.cli.option_groups import Flags, JournalOptions, calls_in_flight, load_model, options, retry_policy, setting_option
from glotbench.settings import CallOptions, ModelOptions, RunSettings


@build_app.command("translate")
@options((RunSettings, "output!"), (Flags, "task!"), mo=ModelOptions, calls=CallOptions,
         journal=(JournalOptions, {"only": ("wait",)}),
         about={"task": "the task whose dataset is translated.",
                "output": "Folder for journal.sqlite, data.jsonl, task.yaml, notes.jsonl."})
def translate(
    to: str = typer.Option(..., "--to", help="Target language code (cs, en, ...)."),
    fields: Optional[list[str]] = setting_option(None, "--field", help="Record fields to translate (dotted path, [*] for lists; "
                                                 "comma-separated; several --set fields=... add up). Default: the task's options.translate_fields."),
    limit: Optional[int] = setting_option(None, "--limit", "-n", help="First N records of the scored split (default: all)."),
    name: Optional[str] = setting_option(None, "--name", help="Name of the new task (default <task>.mt_<to>)."),
    prompt_from: Optional[str] = setting_option(None, "--prompt-from", help="Take the prompt of this task (e.g. the target language's own version; default: the source task's)."),
    knob: Optional[list[str]] = setting_option(None, "--knob", help="Backend generation knob NAME=VALUE, e.g. --set knob=repeat_penalty=5 (the thesis' repetition penalty; several: one --set knob=... each)."),
    raw: bool = setting_option(False, "--raw", help="Send each sentence alone, with no instruction around it: for a translation model (NLLB, M2M100, Marian; set its languages with -M tgt_lang=... / forced_bos_token=..., docs/hf-backend.md; default: false)."),
    max_tokens: int = setting_option(256, "--max-tokens", help="Output token limit per sentence (the thesis' model stopped at 200 tokens)."),
    *, mo: ModelOptions, calls: CallOptions, journal: JournalOptions, output: Path, task: str,
) -> None:
    """Translate sentence by sentence, journaled: rerunning the same command sends nothing twice."""
    import json

    from glotbench.errors import GlotbenchError
    from glotbench.tasks.registry import resolve
    from glotbench.translate.pipeline import source_records, translate_records, write_outputs

    from glotbench.translate.pipeline import language_name

    console = Console(stderr=True, soft_wrap=True)
    language_name(to)  # an unknown code is one line before the model loads
    src_task = resolve([task])[0]
    chosen = list(fields or src_task.spec.options.get("translate_fields") or [])
    if not chosen:
        raise GlotbenchError(f"translate: task {task} names no options.translate_fields; pass --set fields=PATH")
    knobs = {}
    for k in knob or []:
        key, sep, val = k.partition("=")
        if not sep:
            raise GlotbenchError(f"translate: --knob {k!r}: expected NAME=VALUE")
        try:
            knobs[key] = json.loads(val)
        except json.JSONDecodeError:
            knobs[key] = val
    other = resolve([prompt_from])[0] if prompt_from else None
    records = source_records(src_task, limit)
    m = load_model(mo, calls.timeout)
    header = (f"[bold]translate[/] {task} -> {to} · {len(records)} record(s) · fields {', '.join(chosen)} · {m.model_id} · "
              f"{'raw sentences · ' if raw else ''}{output}")
    translated, tr = translate_records(records, chosen, m, output, source_lang=src_task.spec.language, target_lang=to,
                                       max_tokens=max_tokens, knobs=knobs, concurrency=calls_in_flight(calls.concurrency, m),
                                       wait=journal.wait, policy=retry_policy(calls),
                                       on_start=lambda: console.print(header), raw=raw)
    data, yaml_path = write_outputs(src_task, translated, output, target_lang=to, name=name, prompt_from=other,
                                    model_id=m.model_id, fields=chosen)
    notes = output / "notes.jsonl"
    notes.write_text("".join(json.dumps(n, ensure_ascii=False) + "\n" for n in tr.stats.notes), encoding="utf-8")
    s, st = tr.stats, tr.caller.stats
    print(f"strings {s.strings} · kept as numbers/formulas {s.kept_numeric} · overrides {s.overrides} · sentences {s.sentences} "
          f"· surname fixes {s.surname_fixes} · repetition-guard notes {s.guard_notes}")
    print(f"requests sent {st.sent} · from the journal {st.cached} · failed {st.failed}")
    print(f"data: {data}\ntask: {yaml_path} (counterpart: {src_task.name})\nnotes: {notes}")
