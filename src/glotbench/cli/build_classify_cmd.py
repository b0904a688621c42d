"""`glotbench build classify --labels FILE|NAME`: one label per item from a judge model
(:mod:`glotbench.build.classify`), through the build journal (a rerun sends nothing answered).

Every item is written to ``--output`` with its label in the set's field (None when the reply named
no label: ``unparsed``, counted, never guessed; or when the call failed: ``error``); ``--unparsed
drop`` (``--set unparsed=drop``) sends those to ``<output>.dropped.jsonl`` instead. ``--dry-run`` counts the calls."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Optional

import typer

from glotbench.cli.build_app import build_app
from glotbench.cli.build_qa_cmd import (MAX_TOKENS_HELP, OUT_HELP, UNPARSED_HELP, _items, _write, hidden_input,
                                        items_argument, judge_step, one_input)
from glotbench.cli.option_groups import Flags, JournalOptions, one, options, setting_option
from glotbench.settings import CallOptions, JudgeOptions, RunSettings


@build_app.command("classify")
@options((Flags, "dry_run"), (RunSettings, "output"), jo=JudgeOptions, co=CallOptions, journal=JournalOptions,
         about={"output": OUT_HELP})
def classify_cmd(
    source: Optional[Path] = items_argument(),
    input: Optional[Path] = hidden_input(),
    labels: Optional[str] = typer.Option(None, "--labels", help="The label set; the command's description says in which form (a file, a shipped name, or comma-separated labels) and its default."),
    compare_field: Optional[str] = setting_option(None, "--compare-field", help="An item field holding known labels (e.g. the "
                                                  "data's own category): agreement of the judge's labels with it (Cohen's "
                                                  "kappa, 95% bootstrap interval, and the share equal)."),
    unparsed: str = setting_option("keep", "--unparsed", help=UNPARSED_HELP + "."),
    max_tokens: int = setting_option(200, "--max-tokens", help=MAX_TOKENS_HELP + "."),
    *, jo: JudgeOptions, co: CallOptions, journal: JournalOptions, output: Optional[Path] = None,
    dry_run: bool = False,
) -> None:
    """Label every item with one of a label set's labels (OpenHuEval C.3, Chinese SimpleQA's topics).

    --labels (required): a label set file (YAML: labels, prompt per language) or a shipped one's name (the benchmark
    packages ship OpenHuEval's 8 dimensions, Chinese SimpleQA's 6 topics, HuLU §3.3's 10 HuCB markers); --labels
    list names them."""
    from glotbench.build import classify as cl
    from glotbench.build.provenance import add_step, drop, prompt_sha256
    from glotbench.errors import GlotbenchError

    if not labels:
        raise GlotbenchError("build classify: give --labels FILE|NAME (--labels list names the shipped sets)")
    if labels == "list":
        for name, path in sorted(cl.builtin_sets().items()):
            ls = cl.load_label_set(path)
            typer.echo(f"{name}: {len(ls.labels)} labels -> field '{ls.field}' · {ls.spec.source or ''}")
        return
    on_unparsed = unparsed or "keep"  # label None, counted
    if on_unparsed not in ("keep", "drop"):
        raise GlotbenchError(f"build classify: unparsed must be keep or drop, got {on_unparsed!r}")
    judge, judge_base_url = one(jo.judge, "--judge"), one(jo.judge_base_url, "--judge-base-url")
    if not judge or (source is None and input is None) or output is None:
        raise GlotbenchError("build classify: give the items (argument), --output and --judge")
    input = one_input("classify", source, input)
    ls = cl.load_label_set(cl.resolve(labels))
    items = _items(input)
    calls = cl.classify_calls(items, input, ls, max_tokens)  # every item checked, every prompt rendered
    sent = judge_step("classify", calls, judge, judge_base_url, jo.judge_args, co, journal, output, dry_run,
                      f"items {len(items)} · labels {len(ls.labels)}")
    if sent is None:
        return
    m, replies, rep = sent
    kept, dropped, tally = [], [], Counter()
    for it, c in zip(items, calls):
        if c.item not in replies:
            label, status, extra = None, "error", {"error": rep.errors.get(c.item, "?")}
        else:
            label = ls.parse(replies[c.item])
            status, extra = ("labelled" if label is not None else "unparsed"), {"reply": replies[c.item][:400]}
        tally[label if label is not None else f"({status})"] += 1
        it[ls.field] = label
        it.setdefault("classify", {})[ls.name] = {"status": status, "label": label, "prompt_sha256": c.prompt_sha256, **extra}
        add_step(it, "classify", source=it.get("passage_id"), model=m.model_id, label_set=ls.name, field=ls.field,
                 label_set_sha256=prompt_sha256(ls.text), unparsed=on_unparsed)
        if label is None and on_unparsed == "drop":
            dropped.append(drop(it, f"classify:{ls.name}", "the judge's reply names no label" if status == "unparsed"
                                else f"judge call failed: {extra['error']}"))
        else:
            kept.append(it)
    typer.echo(f"classify {ls.name} -> {ls.field}: " + " · ".join(f"{k} {v}" for k, v in sorted(tally.items(), key=lambda kv: -kv[1])))
    if compare_field:
        _compare(items, ls.field, compare_field)
    _write("classify", output, kept, dropped, f" · unparsed {tally['(unparsed)']} · {rep.line()}")


def _compare(items: list[dict], field: str, known: str) -> None:
    """The judge's labels against the items' known ones (items with both; unparsed ones left out, counted)."""
    from glotbench.build.human_ratings import bootstrap, statistic

    pairs = [(str(it[known]), it[field]) for it in items if it.get(known) not in (None, "") and it.get(field) is not None]
    left = sum(1 for it in items if it.get(known) not in (None, "") and it.get(field) is None)
    if not pairs:
        typer.echo(f"classify vs {known}: no item has both labels ({left} without the judge's)")
        return
    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    k = statistic("label", a, b)
    lo, hi, _ = bootstrap("label", a, b)
    same = sum(x == y for x, y in pairs) / len(pairs)
    shown = "undefined" if k != k else (f"{k:.3f} [95% CI {lo:.3f}, {hi:.3f}]" if lo is not None else f"{k:.3f}")
    typer.echo(f"classify vs {known}: Cohen's kappa {shown} · equal {same:.1%} over {len(pairs)} items "
               f"({left} without the judge's label left out)")
