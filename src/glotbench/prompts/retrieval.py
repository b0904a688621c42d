"""Retrieval-augmented answering (Chinese SimpleQA §4.5, App. F): passages retrieved for each
question are put in front of it, and kept in samples.jsonl (the prompt and ``detail.retrieved``).

The retriever is pluggable: ``options.retrieval.retriever`` is ``bm25`` (built in: a local BM25
index over a folder of documents, with the ``bm25s`` library) or ``"module:factory"``, a callable
taking ``(docs_path, **args)`` and returning an object with ``retrieve(query, k) -> list[Passage]``.

The built-in index reads every ``*.txt`` / ``*.md`` file under the folder (UTF-8), cuts each into
passages at blank lines (long paragraphs in pieces of ``max_chars``), and tokenises for BM25 with
Latin/digit words lower-cased plus CJK characters and CJK character bigrams (Chinese has no spaces).
"""

from __future__ import annotations

import os
import pkgutil
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Protocol

from glotbench.errors import DataError, TaskSpecError
from glotbench.paths import resolve_data_file

DOCS_ENV = "GLOTBENCH_RAG_DOCS"  # overrides options.retrieval.docs when set


@dataclass(frozen=True)
class Passage:
    doc: str  # the file, relative to the folder
    index: int  # the passage's number in its file
    text: str
    score: float

    def to_dict(self) -> dict:
        return asdict(self)


class Retriever(Protocol):
    def retrieve(self, query: str, k: int) -> list[Passage]: ...


_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def tokenize(text: str) -> list[str]:
    """Latin/digit words lower-cased; CJK runs as characters plus character bigrams."""
    toks: list[str] = []
    pos = 0
    for m in _CJK.finditer(text):
        toks += [w.lower() for w in _WORD.findall(text[pos:m.start()])]
        run = m.group(0)
        toks += list(run) + [run[i:i + 2] for i in range(len(run) - 1)]
        pos = m.end()
    toks += [w.lower() for w in _WORD.findall(text[pos:])]
    return toks


def read_passages(folder: Path, max_chars: int = 600) -> list[tuple[str, int, str]]:
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix.lower() in (".txt", ".md"))
    if not files:
        raise DataError(f"{folder}: no .txt or .md documents to index for retrieval")
    out = []
    for f in files:
        try:
            text = f.read_text(encoding="utf-8")
        except UnicodeDecodeError as err:
            raise DataError(f"{f}: not UTF-8 text ({err.reason} at byte {err.start})") from None
        n = 0
        for para in re.split(r"\n\s*\n", text):
            para = para.strip()
            for i in range(0, len(para), max_chars):
                piece = para[i:i + max_chars].strip()
                if piece:
                    out.append((str(f.relative_to(folder)), n, piece))
                    n += 1
    return out


class BM25Folder:
    """A BM25 index (``bm25s``) over the passages of a folder of documents."""

    def __init__(self, folder: str | Path, max_chars: int = 600):
        import bm25s

        self.folder = Path(folder)
        if not self.folder.is_dir():
            raise DataError(f"{self.folder}: retrieval documents folder not found (options.retrieval.docs or ${DOCS_ENV})")
        self.passages = read_passages(self.folder, max_chars)
        self._bm25 = bm25s.BM25()
        self._bm25.index([tokenize(t) or ["\u2400"] for _, _, t in self.passages], show_progress=False)
        self._vocab = set(self._bm25.vocab_dict)

    def retrieve(self, query: str, k: int) -> list[Passage]:
        toks = [t for t in tokenize(query) if t in self._vocab]
        if not toks:
            return []
        k = min(k, len(self.passages))
        ids, scores = self._bm25.retrieve([toks], k=k, show_progress=False)
        out = []
        for i, s in zip(ids[0], scores[0]):
            if float(s) <= 0:
                continue
            doc, n, text = self.passages[int(i)]
            out.append(Passage(doc=doc, index=n, text=text, score=round(float(s), 4)))
        return out


def docs_path(docs: str) -> Path:
    chosen = os.environ.get(DOCS_ENV) or docs
    p = Path(chosen).expanduser()
    return p if p.is_absolute() or p.exists() else resolve_data_file(chosen)


def load_retriever(name: str, docs: str, args: dict | None = None, where: str = "options.retrieval") -> Retriever:
    args = dict(args or {})
    if name == "bm25":
        return BM25Folder(docs_path(docs), **args)
    if ":" not in name:
        raise TaskSpecError(f"{where}: retriever {name!r}: use 'bm25' or 'module:factory'")
    try:  # a user's own retriever, named in the task file like an entry point
        factory = pkgutil.resolve_name(name)
    except (ImportError, AttributeError, ValueError) as err:
        raise TaskSpecError(f"{where}: retriever {name!r} cannot be imported ({err})") from None
    return factory(docs_path(docs), **args)
