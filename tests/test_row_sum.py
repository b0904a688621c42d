"""journal.row_sum: SHA-256 (first 16 hex digits) of its parts as UTF-8, NUL between them, spelled out
with one hashlib update per part (how checksums were computed when journals got them, issue 48)."""

from __future__ import annotations

import hashlib

import pytest

from glotbench.engine.journal import row_sum


def per_part(*parts):
    h = hashlib.sha256()
    for i, part in enumerate(parts):
        if i:
            h.update(b"\0")
        h.update(part if isinstance(part, (bytes, bytearray)) else str(part).encode("utf-8"))
    return h.hexdigest()[:16]


class Name(str):
    def __str__(self):
        return "shown"


@pytest.mark.parametrize("parts", [
    ("k" * 64, b'{"text":"A"}'),
    ("rk", "task", "s/1", "scored", '{"pred":"Улаанбаатар"}'.encode()),
    ("judge", "t", "0", 3, bytearray(b"{}")),
    ("", b"", 0, None, 1.5, "中文\0nul"),
    (Name("x"), b"y"),
    ("only",),
    (),
])
def test_row_sum_is_the_per_part_digest(parts):
    assert row_sum(*parts) == per_part(*parts)
