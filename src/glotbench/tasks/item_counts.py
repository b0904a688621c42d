"""How many items a task's split holds, for `glotbench tasks`, remembered between calls.

Counting reads every record of every task (a Hub snapshot through ``datasets``): the listing
took seconds for what it shows in one column. A count is kept in the user cache
(``<cache>/task_counts.json``) under a key made of the task (name, spec hash, class, glotbench's
version) and the identity of every file it reads (path, size, modification time, inode, change
time of each file under the split's path); any of them changing counts again. A task whose
records come from somewhere else (a ``format: hf`` task with no local folder) or whose class is
not glotbench's own (user code may read anything) is always counted.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

CACHE_NAME = "task_counts.json"
MAX_ENTRIES = 2000


def _cache_path() -> Path:
    from glotbench.sources.cache import cache_home

    return cache_home() / CACHE_NAME


def count_key(task, split: str) -> str | None:
    """The cache key of ``task``'s item count on ``split``; None when it cannot be cached."""
    from glotbench.version import __version__
    from glotbench.data.hub_folder import folder_files

    cls = type(task)
    if not cls.__module__.startswith("glotbench."):
        return None
    spec = task.spec
    if spec.dataset.format == "hf" and not spec.dataset.splits:
        return None
    path = Path(task.split_path(split))  # DataError when the data is missing: the caller reports it
    files = []
    for p in folder_files(path):
        st = p.stat()
        files.append([str(p.resolve()), st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns])
    ident = [task.name, split, spec.spec_hash(), f"{cls.__module__}:{cls.__qualname__}", __version__, files]
    return hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()[:32]


def _read() -> dict:
    try:
        data = json.loads(_cache_path().read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _write(counts: dict) -> None:
    path = _cache_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(dict(list(counts.items())[-MAX_ENTRIES:])), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only cache folder: the counts are computed again next time


class ItemCounts:
    """``counts.get(task)``: the task's item count on its eval split, from the cache when its key
    matches; ``counts.save()`` writes what was counted."""

    def __init__(self) -> None:
        self._cache = _read()
        self._changed = False

    def get(self, task) -> int:
        split = task.spec.dataset.eval_split
        key = count_key(task, split)
        if key is not None and isinstance(self._cache.get(key), int):
            return self._cache[key]
        n = len(task.raw_records(split))
        if key is not None:
            self._cache[key] = n
            self._changed = True
        return n

    def save(self) -> None:
        if self._changed:
            _write(self._cache)
