"""N-gram contamination of a task's items against a corpus the user gives (docs/trust-a-number.md,
"Was the test set in the training data?").

The headline follows lm-eval's decontamination (lm_eval/decontamination/janitor.py and
decontaminate.py): an item's text is normalised as ``Janitor.normalize_string`` does (ASCII letters
lowercased, ``string.punctuation`` deleted, nothing else touched), split on whitespace, and the item is
contaminated when any of its word 13-grams occurs in the corpus. Items shorter than 13 tokens have no
13-gram, so lm-eval can never flag them.

glotbench's variant (named ``length_aware``, reported beside the headline) differs in two named ways:
(1) length: an item of 8 to 12 tokens is checked with n = its own length (the whole normalised item must
occur in the corpus), an item of 13 tokens or more with 13-grams, an item under :data:`MIN_N` (8)
tokens is not checked (``checked: false``: too short to tell a copy from a common phrase); (2) script:
every letter is lowercased and every Unicode punctuation mark deleted, since lm-eval's ASCII-only
normalisation misses an upper-cased Czech copy ("ŘEKA" is not "řeka") or one with „quotes“.

The corpus is streamed: every item n-gram is put in a set first (memory bounded by the items), then
each corpus file is read in blocks and its token windows are looked up in that set. A window is only
built where :data:`MIN_N` or more consecutive tokens are all words of some item, so a corpus of text
unrelated to the items costs one set lookup per token. A corpus file is one token stream: n-grams cross
line breaks (a planted item wrapped over lines is still found); a new file starts a new stream.
"""

from __future__ import annotations

import functools
import string
import sys
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator

NGRAM_N = 13  # lm-eval's Janitor(ngram_n=13) and decontaminate.py's default
MIN_N = 8  # the length-aware variant's shortest item
BLOCK_CHARS = 1 << 20
GZIP_MAGIC = b"\x1f\x8b"

# janitor.py: str.maketrans(ascii_lowercase + ascii_uppercase, ascii_lowercase * 2, string.punctuation)
_TABLE = str.maketrans(string.ascii_lowercase + string.ascii_uppercase, string.ascii_lowercase * 2, string.punctuation)


def normalize(text: str) -> str:
    """lm-eval's ``Janitor.normalize_string``: ASCII lowercased, ASCII punctuation deleted."""
    return text.translate(_TABLE)


def tokens(text: str) -> list[str]:
    return normalize(text).split()


def ngrams(toks: list[str], n: int) -> list[tuple[str, ...]]:
    return [tuple(toks[i:i + n]) for i in range(len(toks) - n + 1)]


def length_aware_n(n_tokens: int) -> int | None:
    """The n the length-aware variant checks an item of ``n_tokens`` with; None: not checked."""
    return None if n_tokens < MIN_N else min(n_tokens, NGRAM_N)


@functools.cache
def _unicode_table() -> dict[int, None]:
    return {c: None for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)).startswith("P")}


def normalize_unicode(text: str) -> str:
    """The variant's normalisation: every letter lowercased, every Unicode punctuation mark deleted
    (lm-eval's leaves "Ř" and "„" as they are, so an upper-cased Czech copy is not found)."""
    return text.lower().translate(_unicode_table())


@dataclass
class Check:
    """One way to check: ``name``, its normalisation, and the n an item of k tokens is checked with."""

    name: str
    normalise: Callable[[str], str]
    n_of: Callable[[int], int | None]


HEADLINE = Check("lm_eval_13gram", normalize, lambda k: NGRAM_N)
VARIANT = Check("length_aware", normalize_unicode, length_aware_n)


@dataclass
class ItemResult:
    item: str
    n_tokens: int
    n: int | None  # the n it is checked with; None: not checked
    ngrams: int = 0  # the item's distinct n-grams
    matched: set = field(default_factory=set)
    first: dict | None = None

    def to_dict(self) -> dict:
        return {"checked": self.n is not None, "ngram_n": self.n, "contaminated": bool(self.matched),
                "ngrams": self.ngrams, "matched_ngrams": len(self.matched), "first_match": self.first}


class ItemIndex:
    """Every n-gram of the items under one :class:`Check`: ``n -> {ngram: [item position, ...]}``, and
    the words of all items (a corpus window is only built where every word is one of them)."""

    def __init__(self, items: list[tuple[str, str]], check: Check = HEADLINE):
        self.check = check
        self.results: list[ItemResult] = []
        self.by_n: dict[int, dict[tuple[str, ...], list[int]]] = {}
        self.vocab: set[str] = set()
        for pos, (item_id, text) in enumerate(items):
            toks = check.normalise(text).split()
            n = check.n_of(len(toks))
            res = ItemResult(item_id, len(toks), n)
            grams = set(ngrams(toks, n)) if n is not None else set()
            res.ngrams = len(grams)
            for g in grams:
                self.by_n.setdefault(n, {}).setdefault(g, []).append(pos)
            if grams:
                self.vocab.update(toks)
            self.results.append(res)
        self.sizes = sorted(self.by_n)

    def hit(self, gram: tuple[str, ...], where: dict) -> None:
        for pos in self.by_n[len(gram)].get(gram, ()):
            res = self.results[pos]
            if res.first is None:
                res.first = {**where, "ngram": " ".join(gram)}
            res.matched.add(gram)


def check_corpus_file(path: Path) -> str | None:
    """Why ``path`` cannot be read as a plain-text corpus (one line), or None."""
    if not path.exists():
        return f"{path}: corpus file not found"
    if not path.is_file():
        return f"{path}: not a file (give corpus text files)"
    with open(path, "rb") as fh:
        if fh.read(2) == GZIP_MAGIC:
            return f"{path}: gzip-compressed; give plain UTF-8 text (zcat {path} > corpus.txt, or pipe it: --corpus /dev/stdin)"
    return None


def _blocks(path: Path, block_chars: int) -> Iterator[str]:
    """The file's text a block at a time, each cut after a whitespace (a token is never split)."""
    tail = ""
    with open(path, encoding="utf-8", errors="replace") as fh:
        while True:
            block = fh.read(block_chars)
            if not block:
                break
            text = tail + block
            cut = max(text.rfind(" "), text.rfind("\n"), text.rfind("\t"), text.rfind("\r"))
            if cut < 0:
                tail = text
                continue
            tail = text[cut + 1:]
            yield text[:cut + 1]
    if tail:
        yield tail


class _Stream:
    """One index's scan of one file: windows carried over block ends."""

    def __init__(self, index: ItemIndex, path: Path):
        self.index, self.path = index, str(path)
        self.carry: list[str] = []  # the last tokens of the previous block
        self.offset = 0  # the corpus token number of carry[0] in this file

    def feed(self, text: str) -> int:
        index = self.index
        toks = index.check.normalise(text).split()
        window, carry, sizes, vocab, by_n = self.carry + toks, self.carry, index.sizes, index.vocab, index.by_n
        smallest, run = sizes[0], 0
        for j, tok in enumerate(window):
            if tok in vocab:
                run += 1
            else:
                run = 0
                continue
            if run < smallest or j < len(carry):
                continue
            for n in sizes:
                if n > run:
                    break
                gram = tuple(window[j - n + 1:j + 1])
                if gram in by_n[n]:
                    index.hit(gram, {"file": self.path, "token": self.offset + j - n + 1})
        keep = min(len(window), sizes[-1] - 1)
        self.offset += len(window) - keep
        self.carry = window[len(window) - keep:] if keep else []
        return len(toks)


def scan(indexes: list[ItemIndex], paths: Iterable[Path], block_chars: int = BLOCK_CHARS) -> int:
    """Stream each corpus file once against every index; returns the corpus tokens read (by the first)."""
    live = [ix for ix in indexes if ix.sizes]
    total = 0
    for path in paths:
        streams = [_Stream(ix, path) for ix in live]
        for text in _blocks(path, block_chars):
            counts = [st.feed(text) for st in streams]
            total += counts[0] if counts else len(text.split())
    return total


def summary(indexes: list[ItemIndex], corpus_tokens: int) -> dict:
    out: dict = {"summary": True, "items": len(indexes[0].results), "corpus_tokens": corpus_tokens}
    for ix in indexes:
        checked = [r for r in ix.results if r.n is not None]
        flagged = sum(bool(r.matched) for r in checked)
        out[ix.check.name] = {"checked": len(checked), "flagged": flagged,
                              "share": flagged / len(checked) if checked else None,
                              "unchecked": len(ix.results) - len(checked)}
    return out


def item_rows(indexes: list[ItemIndex]) -> Iterator[dict]:
    """One row per item: its id, token count (lm-eval's tokens) and each check's flags."""
    for k, res in enumerate(indexes[0].results):
        yield {"item": res.item, "n_tokens": res.n_tokens, **{ix.check.name: ix.results[k].to_dict() for ix in indexes}}
