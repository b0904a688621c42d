"""The user's data cache: a data root that ``glotbench data pull`` fills, laid out like the shared
data folder (each file at its ``to`` path), plus what each pull recorded (origin, resolved commit,
file hashes) in ``manifests/``.

Location: ``--cache-dir`` / ``$GLOTBENCH_CACHE_DIR``, else the platform's user cache folder
(``~/.cache/glotbench`` on Linux, through platformdirs).
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path

ENV_CACHE = "GLOTBENCH_CACHE_DIR"


def cache_home() -> Path:
    env = os.environ.get(ENV_CACHE)
    if env:
        return Path(env).expanduser()
    try:
        import platformdirs

        return Path(platformdirs.user_cache_dir("glotbench", appauthor=False))
    except ImportError:  # pragma: no cover - platformdirs is a dependency
        return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "glotbench"


def data_dir() -> Path:
    """The cache's data root (tasks read their files here when no other root has them)."""
    return cache_home() / "data"


def hub_dir() -> Path:
    """huggingface_hub's own cache for the datasets glotbench pulls (blobs, partial downloads)."""
    return cache_home() / "hub"


def _manifest_path(key: str) -> Path:
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", key)[:150]
    return cache_home() / "manifests" / f"{safe}.json"


def read_manifest(key: str) -> dict | None:
    try:
        return json.loads(_manifest_path(key).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def write_manifest(key: str, record: dict) -> None:
    atomic_write_text(_manifest_path(key), json.dumps(record, indent=1, sort_keys=True))


def atomic_write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
