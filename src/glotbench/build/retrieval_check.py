"""Retrieval verification: is an item's source passage among the top ``k`` BM25 hits for its question?

The retriever is the RAG mode's own (:class:`glotbench.prompts.retrieval.BM25Folder`, ``bm25s``
with the same tokeniser and the same cut of documents into pieces of ``max_chars``, 600 by
default). The corpus is the passages file the items were made from, written one passage per
``.txt`` file into a folder (kept beside the output, so the same index can serve
``options.retrieval.docs`` of a RAG run). An item is kept when any of the ``k`` best pieces comes
from its source passage; the rank of the first such piece and ``k`` are recorded on the item.
"""

from __future__ import annotations

import json
from pathlib import Path

from glotbench.prompts.retrieval import BM25Folder


def write_corpus(passages: list[dict], folder: Path) -> dict[str, str]:
    """One ``<n>.txt`` per passage (file names safe whatever the ids); returns ``{file: passage id}``
    and writes it as ``ids.json`` beside the files."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.txt"):
        old.unlink()
    names = {}
    for n, p in enumerate(passages):
        name = f"{n:06d}.txt"
        (folder / name).write_text(p["text"], encoding="utf-8")
        names[name] = p["id"]
    (folder / "ids.json").write_text(json.dumps(names, ensure_ascii=False, indent=0), encoding="utf-8")
    return names


class CorpusCheck:
    def __init__(self, passages: list[dict], folder: Path, *, max_chars: int = 600):
        self.ids = write_corpus(passages, folder)
        self.index = BM25Folder(folder, max_chars=max_chars)

    def rank(self, question: str, source: str, k: int) -> tuple[int | None, list[str]]:
        """1-based rank of the first of the top-``k`` pieces from passage ``source`` (None if none),
        and the passage ids of the top ``k`` pieces."""
        hits = [self.ids[p.doc] for p in self.index.retrieve(question, k)]
        return (hits.index(source) + 1 if source in hits else None), hits
