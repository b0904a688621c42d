"""One sentence-based build step end to end: read, deduplicate, length-filter, make items, write
the dataset, its dropped file and its task YAML; or, with ``dry_run``, only count."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from glotbench.build.cloze import make_cloze
from glotbench.build.provenance import dropped_path, write_items
from glotbench.build.sentences import prepare, read_sentences
from glotbench.build.task_yaml import task_spec, write_task_yaml, yaml_path_for
from glotbench.build.word_order import make_word_order


@dataclass
class StepReport:
    read: int = 0
    kept: int = 0
    dropped: Counter = field(default_factory=Counter)
    output: Path | None = None
    dropped_file: Path | None = None
    task_yaml: Path | None = None

    def lines(self, step: str) -> list[str]:
        out = [f"{step}: {self.read} sentences read, {self.kept} items kept, {sum(self.dropped.values())} dropped"]
        out += [f"  dropped by {k}: {v}" for k, v in sorted(self.dropped.items())]
        return out


def build_items(kind: str, source: Path, output: Path, *, lang: str, seed: int, min_words: int = 3,
                max_words: int | None = None, limit: int | None = None, field: str | None = None,
                split: bool = False, vocab: Path | None = None, name: str | None = None,
                instruction: str | None = None, dry_run: bool = False, agree: bool = False) -> StepReport:
    rep = StepReport()
    sentences = read_sentences(source, field=field, split=split)
    kept, dropped = prepare(sentences, min_words, max_words, limit)
    rep.read = len(sentences) if limit is None else len(kept) + len(dropped)
    items: list[dict] = []
    if kind == "cloze":
        from glotbench.build.pos import CzechPos, VocabPos

        if vocab is not None:
            pos = VocabPos(vocab)
        elif lang == "cs":
            pos = CzechPos()
        else:
            from glotbench.errors import GlotbenchError

            raise GlotbenchError("build cloze: pass --vocab FILE (word<TAB>pos), or --language cs for MorphoDiTa")
        if agree and not hasattr(pos, "agrees"):
            from glotbench.errors import GlotbenchError

            raise GlotbenchError("build cloze: --agree needs morphology (--language cs without --vocab)")
        pool = pos.pool([s.text for s in kept])
        make = lambda s: make_cloze(s, pos, pool, seed, agree=agree)  # noqa: E731
    else:
        make = lambda s: make_word_order(s, seed)  # noqa: E731
    for s in kept:
        item, why = make(s)
        if item is None:
            dropped.append({"sentence": s.text, "provenance": [{"step": kind, "source": s.source, "seed": seed}],
                            "removed_by": kind, "reason": why})
        else:
            items.append(item)
    rep.kept = len(items)
    rep.dropped = Counter(d["removed_by"] if d["removed_by"] != kind else f"{kind}: {d['reason']}" for d in dropped)
    if dry_run:
        return rep
    rep.output = Path(output)
    write_items(rep.output, items)
    rep.dropped_file = dropped_path(rep.output)
    write_items(rep.dropped_file, dropped)
    stem = rep.output.name[: -len(".jsonl")] if rep.output.name.endswith(".jsonl") else rep.output.stem
    spec = task_spec(kind, name or f"build.{stem}", lang, rep.output, instruction)
    rep.task_yaml = write_task_yaml(yaml_path_for(rep.output), spec)
    return rep
