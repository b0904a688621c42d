"""The data lock file: every origin's requested revision (``main``) resolved to a commit, with its
files' sizes and hashes. ``glotbench data lock`` writes it; later pulls and runs follow it.

Where: ``--lock FILE`` / ``$GLOTBENCH_DATA_LOCK``, else ``glotbench-data.lock.json`` in the current
directory when it exists (a project commits it next to its run configs).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from glotbench.errors import DataError
from glotbench.sources.cache import atomic_write_text
from glotbench.sources.schema import DataOrigin

ENV_LOCK = "GLOTBENCH_DATA_LOCK"
DEFAULT_LOCK = "glotbench-data.lock.json"
VERSION = 1


def lock_path(explicit: str | Path | None = None) -> Path:
    if explicit:
        return Path(explicit).expanduser()
    env = os.environ.get(ENV_LOCK)
    return Path(env).expanduser() if env else Path(DEFAULT_LOCK)


class Lock:
    def __init__(self, path: Path, origins: dict[str, dict] | None = None):
        self.path = path
        self.origins: dict[str, dict] = origins or {}

    @classmethod
    def load(cls, explicit: str | Path | None = None, *, must_exist: bool = False) -> "Lock":
        path = lock_path(explicit)
        if not path.is_file():
            if must_exist or explicit or os.environ.get(ENV_LOCK):  # named, so meant to be there
                raise DataError(f"{path}: data lock file not found (write one with: glotbench data lock)")
            return cls(path)
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            raise DataError(f"{path}: cannot read the data lock file ({err})") from None
        if not isinstance(raw, dict) or raw.get("version") != VERSION or not isinstance(raw.get("origins"), dict):
            raise DataError(f"{path}: not a glotbench data lock file (version {VERSION})")
        for key, entry in raw["origins"].items():
            _check_entry(path, key, entry)
        return cls(path, raw["origins"])

    def entry(self, origin: DataOrigin) -> dict | None:
        return self.origins.get(origin.key())

    def commit(self, origin: DataOrigin) -> str:
        """The revision to fetch: the lock's commit, else the declared revision."""
        e = self.entry(origin)
        return (e or {}).get("commit") or origin.revision

    def file_meta(self, origin: DataOrigin, path: str) -> dict:
        return ((self.entry(origin) or {}).get("files") or {}).get(path) or {}

    def put(self, origin: DataOrigin, commit: str, files: dict[str, dict]) -> None:
        """Record ``origin`` at ``commit``; files of other tasks reading the same repository at the
        same commit are kept."""
        old = self.origins.get(origin.key()) or {}
        if old.get("commit") == commit:
            files = {**(old.get("files") or {}), **files}
        self.origins[origin.key()] = {"kind": origin.kind, "repo": origin.repo, "requested": origin.revision,
                                      "commit": commit, "files": files}

    def save(self) -> None:
        atomic_write_text(self.path, json.dumps({"version": VERSION, "origins": self.origins}, indent=1,
                                                sort_keys=True) + "\n")


def _check_entry(path: Path, key: str, entry) -> None:
    """A hand-edited entry of the wrong shape is one line naming it (it gave tracebacks deep in a pull)."""
    where = f"{path}: origins.{key}"
    if not isinstance(entry, dict):
        raise DataError(f"{where}: expected a mapping (kind, repo, requested, commit, files), got {type(entry).__name__}; "
                        "rewrite the lock with: glotbench data lock")
    commit = entry.get("commit")
    if commit is not None and (not isinstance(commit, str) or not commit.strip()):
        raise DataError(f"{where}.commit: expected a commit id (text), got {commit!r}; rewrite the lock with: "
                        "glotbench data lock")
    files = entry.get("files")
    if files is None:
        return
    if not isinstance(files, dict):
        raise DataError(f"{where}.files: expected a mapping of file -> {{size, sha256}}, got {type(files).__name__}")
    for name, meta in files.items():
        if not isinstance(meta, dict):
            raise DataError(f"{where}.files.{name}: expected {{size, sha256}}, got {type(meta).__name__}")
        size, digest = meta.get("size"), meta.get("sha256")
        if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size < 0):
            raise DataError(f"{where}.files.{name}.size: expected a byte count, got {size!r}")
        if digest is not None and not (isinstance(digest, str) and len(digest) == 64
                                       and all(c in "0123456789abcdef" for c in digest.lower())):
            raise DataError(f"{where}.files.{name}.sha256: expected 64 hex digits, got {str(digest)[:80]!r}")
