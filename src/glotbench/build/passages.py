"""Passages, the source of `build qa`: a JSONL of ``{"id", "title"?, "text"}`` records, or a folder of
``.txt`` files (id = file name without ``.txt``, no title), or CTKFacts evidence paragraphs.

Bad input is one :class:`~glotbench.errors.DataError` naming file, record and field.
"""

from __future__ import annotations

import re
from pathlib import Path

from glotbench.build.provenance import read_items
from glotbench.data.loaders import iter_jsonl
from glotbench.errors import DataError


def read_passages(path: Path, *, id_field: str = "id", text_field: str = "text", title_field: str = "title") -> list[dict]:
    """``[{"id", "title", "text"}]`` from a JSONL file or a folder of ``.txt`` files."""
    path = Path(path)
    if path.is_dir():
        files = sorted(path.glob("*.txt"))
        if not files:
            raise DataError(f"{path}: no .txt passages in the folder")
        out = []
        for f in files:
            try:
                text = f.read_text(encoding="utf-8").strip()
            except UnicodeDecodeError as err:
                raise DataError(f"{f}: not UTF-8 ({err.reason} at byte {err.start})") from None
            if text:
                out.append({"id": f.stem, "title": "", "text": text})
        return out
    out, seen = [], set()
    for n, rec in enumerate(read_items(path), 1):
        for name in (id_field, text_field):
            if not isinstance(rec.get(name), (str, int)) or (isinstance(rec.get(name), str) and not rec[name].strip()):
                raise DataError(f"{path}: record {n}: field {name!r} missing or empty")
        pid = str(rec[id_field])
        if pid in seen:
            raise DataError(f"{path}: record {n}: field {id_field!r}: duplicate id {pid!r}")
        seen.add(pid)
        title = rec.get(title_field) or ""
        if not isinstance(title, str):
            raise DataError(f"{path}: record {n}: field {title_field!r} must be a string")
        out.append({"id": pid, "title": title, "text": str(rec[text_field]).strip()})
    return out


_DATELINE = re.compile(r"^(.{3,60}?)\s*\(ČTK\)\s*[-–]\s*")


def ctkfacts_passages(path: Path, n: int, *, min_chars: int = 200) -> list[dict]:
    """The first ``n`` distinct CTKFacts evidence paragraphs of at least ``min_chars`` characters,
    id ``ctk-<claim id>-<evidence set>-<paragraph>``. ČTK paragraphs have no title; the dateline (``Praha 5. května``
    before ``(ČTK) -``) is kept as the title where there is one."""
    path = Path(path)
    out, seen = [], set()
    for line_no, rec in iter_jsonl(path, encoding="utf-8"):
        ev = rec.get("evidence")
        if not isinstance(ev, list):
            raise DataError(f"{path}:{line_no}: field 'evidence' must be a list")
        for k, group in enumerate(ev):
            for j, text in enumerate(group if isinstance(group, list) else [group]):
                if not isinstance(text, str) or len(text) < min_chars or text in seen:
                    continue
                seen.add(text)
                m = _DATELINE.match(text)
                out.append({"id": f"ctk-{rec.get('id')}-{k}-{j}", "title": m.group(1) if m else "", "text": text})
                if len(out) >= n:
                    return out
    return out
