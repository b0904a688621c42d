"""`glotbench build` steps made without a model, and human review: cloze, word-order, review
export/import, filter --sequential (imported by build_cmd; docs/building-a-benchmark.md Part 1)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from glotbench.cli import NounGroup
from glotbench.cli.build_app import build_app  # commands decorate @build_app.command()
from glotbench.cli.option_groups import Flags, one, options, setting_option, several
from glotbench.settings import CallOptions, JudgeOptions, ModelOptions, RunSettings


def _sentences_options(kind: str, doc: str):
    cloze = kind == "cloze"
    # word-order takes no vocabulary: its --vocab and --agree stay accepted (unlisted) only to refuse them in one line
    cloze_only = (lambda default, *flags, help: typer.Option(default, *flags, hidden=True)) if not cloze else setting_option

    def command(
        source: Path = typer.Argument(..., help="Sentences: a text file (one per line) or JSONL with the field setting."),
        lang_old: Optional[str] = typer.Option(None, "--lang", hidden=True, help="The old spelling of --language."),
        vocab: Optional[Path] = (typer.Option(None, "--vocab", help="Vocabulary TSV word<TAB>pos (not needed with --language cs).")
                                 if cloze else typer.Option(None, "--vocab", hidden=True)),
        field: Optional[str] = setting_option(None, "--field", help="JSONL input: field path of the text, e.g. text or "
                                              "'evidence[*][0]' (default: the input is a text file, one sentence a line)."),
        split_sentences: bool = setting_option(False, "--split-sentences", help="Cut each text into sentences (at . ! ? before a capital)."),
        min_words: int = setting_option(3, "--min-words", help="Keep sentences of at least this many words (MM-Eval: 3)."),
        max_words: Optional[int] = setting_option(None, "--max-words", help="Drop sentences longer than this (default: no limit)."),
        limit: Optional[int] = setting_option(None, "--limit", "-n", help="Stop after this many sentences pass dedup and length (default: all)."),
        seed: int = setting_option(1234, "--seed", help="Seed of every random choice (per sentence)."),
        name: Optional[str] = setting_option(None, "--name", help="Task name in the YAML (default build.<output stem>)."),
        instruction: Optional[str] = setting_option(None, "--instruction", help="Prompt instruction (default: MM-Eval's, with the language's name)."),
        agree: bool = cloze_only(False, "--agree", help="--language cs: distractors also share the answer's number and case "
                                 "(adjectives: and gender); glotbench's variant, not the paper's (default: false)."),
        *, output: Path, dry_run: bool = False, language: Optional[str],
    ) -> None:
        from glotbench.build.items import build_items

        lang = language or lang_old
        if not lang:
            raise typer.BadParameter("the sentences' language code is required (e.g. --language cs)", param_hint="--language")
        if kind == "word-order" and (vocab is not None or agree):
            from glotbench.errors import GlotbenchError

            raise GlotbenchError("build word-order: --vocab and --agree are for cloze only")
        rep = build_items(kind, source, output, lang=lang, seed=seed, min_words=min_words, max_words=max_words,
                          limit=limit, field=field, split=split_sentences, vocab=vocab, name=name, instruction=instruction,
                          dry_run=dry_run, agree=agree)
        for line in rep.lines(kind + (" (dry run)" if dry_run else "")):
            typer.echo(line)
        if not dry_run:
            typer.echo(f"wrote {rep.output} ({rep.kept} items), {rep.dropped_file}, {rep.task_yaml}")
            typer.echo(f"run it: glotbench run --tasks {rep.task_yaml}")
    command.__doc__ = doc
    return options((RunSettings, "output!"), (Flags, "dry_run", "language"),
                   about={"output": "dataset JSONL; the task YAML and .dropped.jsonl go beside it.",
                          "language": "the sentences' language (cs: POS from MorphoDiTa); required."})(command)


build_app.command("cloze")(_sentences_options("cloze", "MM-Eval §3.5 semantics items: blank a noun/pronoun or "
                                              "adjective/adverb; three POS-matched distractors from the vocabulary."))
build_app.command("word-order")(_sentences_options("word-order", "MM-Eval §3.4 syntax items: the sentence and three "
                                                   "shuffles of its words (each checked to differ from it)."))


# ---------------------------------------------------------------- human review
review_app = typer.Typer(cls=NounGroup, help="Human review: export a sheet for annotators; import their verdicts "
                         "(Cohen's kappa, disagreements for an arbiter, final verdicts applied).", no_args_is_help=True)
build_app.add_typer(review_app, name="review")


@review_app.command("export")
@options((RunSettings, "output!"), about={"output": "Sheet to write: .csv, or .tsv (spreadsheet-friendly)."})
def review_export(
    dataset: Path = typer.Argument(..., help="Dataset JSONL (items with id and provenance)."),
    format: Optional[str] = setting_option(None, "--format", "-f", help="csv or tsv (default: by the output's extension)."),
    *, output: Path,
) -> None:
    """One row per item: id, question, options, answer, provenance, and empty verdict columns."""
    from glotbench.build.provenance import read_items
    from glotbench.build.review import export_sheet

    n = export_sheet(read_items(dataset), output, format)
    typer.echo(f"wrote {output}: {n} items; annotators fill verdict (keep/drop/fix), corrected_answer, comment")


@review_app.command("import")
@options((RunSettings, "output!"),
         about={"output": "Reviewed dataset JSONL (dropped items: .dropped.jsonl beside it)."})
def review_import(
    first: Path = typer.Argument(..., metavar="dataset", help="The dataset the sheets were exported from (with --kind: the first sheet)."),
    sheets: Optional[list[Path]] = typer.Argument(None, help="Two or more annotators' filled sheets (with --kind: any number of label/rating sheets)."),
    kind: Optional[str] = typer.Option(None, "--kind", help="label or rating: what the sheets hold (the command's description says what each does; its default too)."),
    arbiter: Optional[Path] = setting_option(None, "--arbiter", help="The arbiter's sheet: final verdicts for the disagreements "
                                             "(the second pass, once the arbiter filled the disagreements sheet)."),
    disagreements: Optional[Path] = setting_option(None, "--disagreements", help="Where the disagreements go (default <output stem>.disagreements.csv)."),
    dataset: Optional[Path] = setting_option(None, "--dataset", help="--kind: the dataset the ids belong to; its items get the aggregated label."),
    column: Optional[str] = setting_option(None, "--column", help="The sheets' column holding the human value (default: label with --kind label, rating with --kind rating)."),
    label_field: str = setting_option("label", "--label-field", help="--kind: the output items' field for the aggregated label (rating: the mean)."),
    unanimous: bool = setting_option(False, "--unanimous", help="--kind: keep only items all their annotators labelled (rated) alike (HuRTE's test set)."),
    strict_majority: bool = setting_option(False, "--strict-majority", help="--kind label: the top label needs more than half the votes (default: most votes, ties dropped)."),
    min_annotators: int = setting_option(1, "--min-annotators", help="--kind: drop items with fewer annotations."),
    scale: Optional[str] = setting_option(None, "--scale", help="--kind rating: MIN..MAX every rating must lie in, e.g. -3..3 (HuCB's 7 points; default: any)."),
    max_sd: Optional[float] = setting_option(None, "--max-sd", help="--kind rating: keep items whose ratings' SD is below this (HuCB: 1; its test set 0.5; default: all)."),
    sd: str = setting_option("sample", "--sd", help="--kind rating: sample (n-1) or population (n) standard deviation."),
    against: Optional[Path] = setting_option(None, "--against", help="--kind label: another language's labels (id, label); items whose label conflicts are dropped (HuLU §3.2)."),
    against_field: str = setting_option("label", "--against-field", help="against: the field holding the label."),
    format: Optional[str] = setting_option(None, "--format", "-f", help="csv or tsv for every sheet (default: by extension; with --kind also jsonl)."),
    *, output: Path,
) -> None:
    """Cohen's kappa between annotators, the disagreements as a sheet for an arbiter, and with the arbiter's sheet
    (--set arbiter=FILE; or when all agree) the dataset with the final verdicts applied. With --kind label|rating: any
    number of annotators' labels or ratings aggregated (majority vote or mean), with agreement statistics.

    --kind label: aggregate annotators' labels (majority vote, Fleiss' kappa); --kind rating: Likert ratings
    (mean, SD filter); Krippendorff's alpha for both. Without it: keep/drop/fix verdicts."""
    import json
    import math

    fmt, on_dataset = format, dataset
    dataset = first
    if kind is not None:
        from glotbench.cli.build_annotations_cmd import import_annotations

        import_annotations([dataset, *(sheets or [])], output, kind=kind, fmt=fmt, dataset=on_dataset, column=column,
                           label_field=label_field, unanimous=unanimous, strict_majority=strict_majority,
                           min_annotators=min_annotators, scale=scale, max_sd=max_sd, sd=sd, against=against,
                           against_field=against_field)
        return
    if unanimous or strict_majority or on_dataset or column or scale or max_sd is not None or against or min_annotators != 1:
        from glotbench.errors import GlotbenchError

        raise GlotbenchError("the settings dataset, column, unanimous, strict_majority, min_annotators, scale, max_sd, "
                             "against go with --kind label|rating (keep/drop/fix verdict sheets take none of them)")
    sheets = list(sheets or [])

    from glotbench.build.provenance import dropped_path, read_items, write_items
    from glotbench.build.review import disagreement_rows, import_reviews, write_sheet

    items = read_items(dataset)
    res = import_reviews(items, list(sheets), arbiter, fmt)
    for pair, k in res.kappa.items():
        typer.echo(f"Cohen's kappa, annotators {pair}: " + ("undefined (one verdict throughout)" if math.isnan(k) else f"{k:.3f}"))
    typer.echo(f"reviewed {res.reviewed} items: {res.agreed} agreed, {len(res.disagreements)} disagreements; "
               f"{res.not_reviewed} not reviewed (kept as they are)")
    stem = output.name[: -len(".jsonl")] if output.name.endswith(".jsonl") else output.stem
    if res.disagreements:
        dis = disagreements or output.with_name(stem + ".disagreements.csv")
        rows, cols = disagreement_rows(items, list(sheets), res, fmt)
        write_sheet(dis, rows, cols, fmt)
        typer.echo(f"wrote {dis}: {len(rows)} disagreements for the arbiter")
    summary = {"kappa": {k: (None if math.isnan(v) else v) for k, v in res.kappa.items()}, "reviewed": res.reviewed,
               "agreed": res.agreed, "disagreements": len(res.disagreements), "arbiter": str(arbiter) if arbiter else None,
               "kept": len(res.kept), "fixed": res.fixed, "dropped": len(res.dropped), "not_reviewed": res.not_reviewed,
               "sheets": [str(s) for s in sheets]}
    if res.undecided:
        # the disagreements sheet is written (the arbiter needs it), the dataset is not: a refusal, so a
        # script that chains the build steps stops here instead of reading a missing file
        output.with_name(stem + ".review.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
        from glotbench.errors import GlotbenchError

        how = "rerun with --set arbiter=FILE" if arbiter is None else f"{arbiter} leaves them open; complete it and rerun"
        raise GlotbenchError(f"{res.undecided} items have no final verdict: the arbiter fills verdict, corrected_answer, "
                             f"comment in the disagreements sheet; {how}. No dataset written.")
    from glotbench.build.task_yaml import retarget

    write_items(output, res.kept)
    write_items(dropped_path(output), res.dropped)
    if (ty := retarget(dataset, output)) is not None:
        typer.echo(f"wrote {ty}: run it: glotbench run --tasks {ty}")
    output.with_name(stem + ".review.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    typer.echo(f"wrote {output}: {len(res.kept)} items kept ({res.fixed} fixed), {len(res.dropped)} dropped by review "
               f"-> {dropped_path(output)}")


# ---------------------------------------------------------------- filter: --sequential (here), --difficulty (Part 2)
# One `build filter` command for both filters: --difficulty goes to build_qa_cmd.difficulty_filter
# with Part 2's options unchanged. build_cmd imports this module last so this
# command is the one registered under the name.
@build_app.command("filter")
@options((RunSettings, "output!"), (Flags, "dry_run"), mo=ModelOptions, jo=JudgeOptions, co=CallOptions,
         about={"output": "output JSONL. --sequential: every item, with its filter-sequential provenance; "
                          "--difficulty: the kept items."})
def build_filter(
    dataset: Optional[Path] = typer.Argument(None, help="Dataset JSONL (its earlier flag -i/--input is still accepted)."),
    input: Optional[Path] = typer.Option(None, "--input", "-i", hidden=True, help="The dataset JSONL (the argument's earlier spelling)."),
    sequential: bool = typer.Option(False, "--sequential", help="AGREE procedure (Czech-Bench §5.4.1): model 1 on all "
                                    "items, model 2 on what model 1 missed, ...; the residue goes to review."),
    difficulty: bool = typer.Option(False, "--difficulty", help="Run the models; keep items at most max_correct (a setting) of "
                                    "them answer correctly (Chinese SimpleQA §3.3; docs Part 2)."),
    task: Optional[Path] = setting_option(None, "--task", help="--sequential: task YAML of the dataset (default <dataset stem>.yaml)."),
    runs: Optional[Path] = setting_option(None, "--runs", help="--sequential: folder of the rounds' run dirs (default <output stem>.runs)."),
    residue: Optional[Path] = setting_option(None, "--residue", help="--sequential: review sheet of the residue (default <output stem>.residue.csv)."),
    correct_key: str = setting_option("correct", "--correct-key", help="--sequential: per-item value that marks a right answer."),
    max_correct: int = setting_option(0, "--max-correct", help="--difficulty: keep items answered correctly by at most this many model settings."),
    work: Optional[Path] = setting_option(None, "--work", help="--difficulty: folder for the task YAML and the runs (default <output stem>.difficulty)."),
    max_tokens: Optional[int] = setting_option(None, "--max-tokens", help="--sequential: output token limit of every model (default: the task's)."),
    language: Optional[str] = setting_option(None, "--language", "-l", help="--difficulty: the items' language (default: "
                                             "their language field, else en)."),
    *, mo: ModelOptions, jo: JudgeOptions, co: CallOptions, output: Path, dry_run: bool = False,
) -> None:
    """Filter a dataset by running models through the normal engine: --sequential or --difficulty.

    Each --model (repeat, in order) is a model setting: SPEC or SPEC;NAME=VALUE;... (run settings, e.g.
    embedded;temperature=0.8); -M N:KEY=VALUE goes to the N-th only. --difficulty grades with --judge
    (the SimpleQA grader) when given. Each model's run keeps its own journal (rerunning resumes)."""
    from glotbench.errors import GlotbenchError

    if dataset and input and dataset != input:
        raise GlotbenchError("build filter: give the dataset once (argument or --input)")
    dataset = dataset or input
    if dataset is None:
        raise GlotbenchError("build filter: which dataset? (argument or --input)")
    if sequential == difficulty:
        raise GlotbenchError("build filter: choose a filter: --sequential or --difficulty")
    if "model" not in mo.model_fields_set:
        raise GlotbenchError("build filter: give at least one --model")
    models, model_args, base_url = several(mo.model), mo.load_args(), mo.base_url
    common = {k: getattr(co, k) for k in co.model_fields_set}  # --concurrency, --timeout, --max-retries: run settings
    if difficulty:
        try:
            from glotbench.cli.build_qa_cmd import difficulty_filter
        except ImportError:
            raise GlotbenchError("build filter --difficulty is not available in this build") from None
        difficulty_filter(dataset, output, list(models), max_correct=max_correct, judge=one(jo.judge, "--judge"),
                          judge_base_url=one(jo.judge_base_url, "--judge-base-url"), base_url=base_url,
                          language=language, work=work, dry_run=dry_run, model_args=model_args,
                          common={**common, **({"judge_args": jo.judge_args} if jo.judge_args else {})})
        return
    _sequential(dataset, output, list(models), model_args, base_url, task, runs, residue, max_tokens, common,
                correct_key, dry_run)


def _sequential(dataset, output, models, model_args, base_url, task, runs, residue, max_tokens, common,
                correct_key, dry_run) -> None:
    from glotbench.build.provenance import read_items, write_items
    from glotbench.build.review import export_sheet
    from glotbench.build.sequential import per_model_args, run_sequential, split_model
    from glotbench.build.task_yaml import retarget, yaml_path_for
    from glotbench.errors import GlotbenchError

    items = read_items(dataset)
    for m in models:
        split_model(m)  # a malformed --model fails before anything runs
    margs = per_model_args(models, {**({"base_url": base_url} if base_url else {}), **model_args})
    if dry_run:
        typer.echo(f"filter --sequential (dry run): {len(items)} items, {len(models)} models; "
                   f"{len(items)} calls in round 1, at most {len(items) * len(models)} in all")
        return
    task = task or yaml_path_for(dataset)
    if not task.is_file():
        raise GlotbenchError(f"build filter: no task YAML {task} (--set task=YAML)")
    stem = output.name[: -len(".jsonl")] if output.name.endswith(".jsonl") else output.stem
    runs = runs or output.with_name(stem + ".runs")
    common = {**common, **({"max_tokens": max_tokens} if max_tokens is not None else {})}
    res = run_sequential(items, task, models, margs, runs, correct_key=correct_key, settings=common)
    for k, r in enumerate(res.rounds, 1):
        extra = " ".join(f"{a}={b}" for a, b in r.model_args.items())
        typer.echo(f"round {k}: {r.model}{' ' + extra if extra else ''} on {r.items} items: {r.answered} answered, "
                   f"{r.items - r.answered} missed ({r.errors} errors) · {r.run_dir}")
    write_items(output, res.items)
    retarget(dataset, output)
    residue = residue or output.with_name(stem + ".residue.csv")
    export_sheet(res.residue, residue)
    typer.echo(f"wrote {output} ({len(res.items)} items); residue {len(res.residue)} items -> {residue} (review it: "
               f"glotbench build review import {output} A.csv B.csv ...)")
