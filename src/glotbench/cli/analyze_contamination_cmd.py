"""`glotbench analyze contamination TASK --corpus FILE...`: n-gram overlap of each item of a task with a
corpus (13-grams as lm-eval's decontamination, and a length-aware variant for short items); the corpus
is streamed, so it may be larger than memory (docs/trust-a-number.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from glotbench.cli.analyze_cmd import analyze_app
from glotbench.settings import RunSettings
from glotbench.cli.option_groups import options, setting_option
from glotbench.errors import DataError


def item_texts(task_name: str, split: Optional[str], fields: list[str]) -> list[tuple[str, str]]:
    """``(item id, text)`` per item of the task's split: the rendered prompt (the text lm-eval's
    ``doc_to_decontamination_query`` defaults to, ``doc_to_text``), or the named fields joined by a space."""
    from glotbench.tasks.registry import resolve

    [task] = resolve([task_name])
    split = split or task.spec.dataset.eval_split
    out = []
    for s in task.samples(split):
        if not fields:
            out.append((s.id, task.render_user(s)))
            continue
        parts = []
        for f in fields:
            value = s.vars.get(f, (s.metadata or {}).get(f))
            if value is None:
                known = ", ".join(sorted(k for k in s.vars if not k.startswith("_"))[:20])
                raise DataError(f"task {task.name}: record {s.id}: field {f!r} (--text-field) is not in the item "
                                f"(its fields: {known})")
            parts.append(" ".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value))
        out.append((s.id, " ".join(parts)))
    return out


def _run_flags_path(run: Path, task: str) -> Path:
    """Where ``--run RUN`` stores the flags; one line when RUN is not a run directory holding the task."""
    from glotbench.report.contamination_split import flags_path
    from glotbench.report.runs import load_run

    tasks = load_run(run, with_samples=False).tasks
    if task not in tasks:
        raise DataError(f"--run {run}: the run has no task {task} (its tasks: {', '.join(sorted(tasks)) or 'none'})")
    return flags_path(run, task)


@analyze_app.command("contamination")
@options((RunSettings, "output"), about={"output": "write one JSON line per item, then the summary line."})
def contamination(
    task: str = typer.Argument(..., help="A task name or task YAML file."),
    corpus: list[Path] = typer.Option(..., "--corpus", help="Plain UTF-8 text file(s) to check the items against "
                                      "(repeat the option; streamed, may be larger than memory)."),
    text_field: list[str] = setting_option([], "--text-field", help="Item field(s) to check, joined by a space "
                                         "(repeatable; default: the rendered prompt)."),
    run: Optional[Path] = typer.Option(None, "--run", help="Also store the per-item flags in this run's folder "
                                       "(RUN/contamination/TASK.jsonl), where compare --contamination reads them."),
    split: Optional[str] = setting_option(None, "--split", help="Split of the task to check (default: its "
                                          "evaluation split)."),
    *, output: Optional[Path],
) -> None:
    """N-gram contamination of a task's items in a corpus: 13-grams as lm-eval, and a length-aware variant."""
    out = output
    from glotbench.report.analysis.contamination import (HEADLINE, MIN_N, NGRAM_N, VARIANT, ItemIndex,
                                                         check_corpus_file, item_rows, scan, summary)

    for path in corpus:  # every file is checked before the (long) scan starts
        if (why := check_corpus_file(path)) is not None:
            raise DataError(why)
    from glotbench.tasks.registry import resolve

    [resolved] = resolve([task])
    stored = _run_flags_path(run, resolved.name) if run is not None else None  # checked before the (long) scan
    items = item_texts(task, split, text_field)
    indexes = [ItemIndex(items, HEADLINE), ItemIndex(items, VARIANT)]
    n_tokens = scan(indexes, corpus)
    head = summary(indexes, n_tokens)
    rows = [{"task": resolved.name, **row} for row in item_rows(indexes)]
    head = {**head, "task": resolved.name}
    for path in (p for p in (out, stored) if p is not None):
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            for row in rows:
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
            fh.write(json.dumps(head, ensure_ascii=False) + "\n")
    h, v = head[HEADLINE.name], head[VARIANT.name]

    def share(x):
        return "-" if x is None else f"{x:.1%}"

    typer.echo(f"{head['items']} items, {h['flagged']} contaminated ({share(h['share'])}) by lm-eval's {NGRAM_N}-grams "
               f"({sum(r['n_tokens'] < NGRAM_N for r in rows)} shorter than {NGRAM_N} tokens cannot be flagged so); length-aware variant (n = item "
               f"length from {MIN_N}, Unicode case and punctuation): {v['flagged']} of {v['checked']} checked "
               f"({share(v['share'])}); {n_tokens} corpus tokens")
    for row in rows:
        a, b = row[HEADLINE.name], row[VARIANT.name]
        if a["contaminated"] or b["contaminated"]:
            typer.echo(f"  {row['item']}: {a['matched_ngrams']} of {a['ngrams']} {NGRAM_N}-grams; length-aware "
                       f"{b['matched_ngrams']} of {b['ngrams']} {b['ngram_n']}-grams")
    for path in (p for p in (out, stored) if p is not None):
        typer.echo(f"wrote {path}")
