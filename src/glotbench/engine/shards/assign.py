"""Which shard an item belongs to: a stable hash of (task, item id), never Python's ``hash()``
(salted per process), so every process and every rerun agrees."""

from __future__ import annotations

import hashlib
from pathlib import Path

SHARDS_DIR = "shards"


def shard_of(task: str, sample_id: str, n_shards: int) -> int:
    digest = hashlib.sha256(f"{task}\x00{sample_id}".encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % n_shards


def split_items(items: list[tuple[str, str]], n_shards: int) -> list[dict[str, list[str]]]:
    """``[(task, sample_id), ...]`` -> one ``{task: [sample ids]}`` per shard (input order kept)."""
    out: list[dict[str, list[str]]] = [{} for _ in range(n_shards)]
    for task, sid in items:
        out[shard_of(task, sid, n_shards)].setdefault(task, []).append(sid)
    return out


def shard_dir(run_dir: Path, index: int) -> Path:
    return Path(run_dir) / SHARDS_DIR / str(index)


def shard_journals(run_dir: Path) -> list[Path]:
    """Every shard journal under a run directory (any shard count, old runs' too), in shard order."""
    root = Path(run_dir) / SHARDS_DIR
    if not root.is_dir():
        return []
    found = [p for p in root.glob("*/journal.sqlite") if p.parent.name.isdigit()]
    return sorted(found, key=lambda p: int(p.parent.name))
