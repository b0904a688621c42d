"""`glotbench build` steps made without a model, and human review: cloze, word-order, review
export/import, filter --sequential (see build_cmd.BUILD_MODULES; docs/building-a-benchmark.md Part 1)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from glotbench.cli.build_cmd import build_app  # commands decorate @build_app.command()


def _sentences_options(kind: str):
    def command(
        source: Path = typer.Argument(..., help="Sentences: a text file (one per line) or JSONL with --field."),
        output: Path = typer.Option(..., "--output", "-o", help="Dataset JSONL; the task YAML and .dropped.jsonl go beside it."),
        lang: str = typer.Option(..., "--lang", help="Language code of the sentences (cs: POS from MorphoDiTa)."),
        vocab: Optional[Path] = typer.Option(None, "--vocab", help="Vocabulary TSV word<TAB>pos (cloze; not needed with --lang cs)."),
        field: Optional[str] = typer.Option(None, "--field", help="JSONL input: field path of the text, e.g. text or 'evidence[*][0]'."),
        split: bool = typer.Option(False, "--split-sentences", help="Cut each text into sentences (at . ! ? before a capital)."),
        min_words: int = typer.Option(3, "--min-words", help="Keep sentences of at least this many words (MM-Eval: 3)."),
        max_words: Optional[int] = typer.Option(None, "--max-words", help="Drop sentences longer than this."),
        limit: Optional[int] = typer.Option(None, "--limit", "-n", help="Stop after this many sentences pass dedup and length."),
        seed: int = typer.Option(1234, "--seed", help="Seed of every random choice (per sentence)."),
        name: Optional[str] = typer.Option(None, "--name", help="Task name in the YAML (default build.<output stem>)."),
        instruction: Optional[str] = typer.Option(None, "--instruction", help="Prompt instruction (default: MM-Eval's, with the language's name)."),
        dry_run: bool = typer.Option(False, "--dry-run", help="Print counts; write nothing."),
    ) -> None:
        from glotbench.build.items import build_items

        if kind == "word-order" and vocab is not None:
            from glotbench.errors import GlotbenchError

            raise GlotbenchError("build word-order: --vocab is for cloze only")
        rep = build_items(kind, source, output, lang=lang, seed=seed, min_words=min_words, max_words=max_words,
                          limit=limit, field=field, split=split, vocab=vocab, name=name, instruction=instruction,
                          dry_run=dry_run)
        for line in rep.lines(kind + (" (dry run)" if dry_run else "")):
            typer.echo(line)
        if not dry_run:
            typer.echo(f"wrote {rep.output} ({rep.kept} items), {rep.dropped_file}, {rep.task_yaml}")
            typer.echo(f"run it: glotbench run --tasks {rep.task_yaml}")
    return command


build_app.command("cloze", help="MM-Eval §3.5 semantics items: blank a noun/pronoun or adjective/adverb; three "
                  "POS-matched distractors from the vocabulary.")(_sentences_options("cloze"))
build_app.command("word-order", help="MM-Eval §3.4 syntax items: the sentence and three shuffles of its words "
                  "(each checked to differ from it).")(_sentences_options("word-order"))
