"""A Hugging Face dataset snapshot kept in a local folder, read through ``datasets`` itself, so that
the rows scored are the rows in that folder.

``datasets.load_dataset(folder)`` prepares an Arrow copy in its cache, and for a folder whose
README has a ``configs:`` block it finds that copy again by the folder's *basename*: a second data
root with a folder of the same name, or a newer snapshot downloaded into the same folder, would be
served the first folder's rows. Here every load gets a cache of its own, keyed by the hash of the
folder's content (:func:`folder_sha256`), and the task's data fingerprint is that same hash.

The files hashed are the folder's files that ``datasets`` can read: hidden files and folders (names
starting with ``.``, such as ``.cache/huggingface`` download metadata, or ``.git``) are left out,
as ``datasets`` leaves them out.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from glotbench.errors import DataError

_DIGESTS: dict[tuple, str] = {}  # (folder, every file's name and stat) -> content hash


def folder_files(folder: Path) -> list[Path]:
    """The folder's files, sorted, without hidden files or anything under a hidden folder."""
    folder = Path(folder)
    if not folder.is_dir():
        return [folder]
    return sorted(p for p in folder.rglob("*")
                  if p.is_file() and not any(part.startswith(".") for part in p.relative_to(folder).parts))


def folder_sha256(folder: Path) -> str:
    """SHA-256 over the relative names and bytes of :func:`folder_files` (a file: its name and bytes)."""
    folder = Path(folder)
    files = folder_files(folder)
    stats = tuple((str(p), st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns) for p in files for st in [p.stat()])
    key = (str(folder.resolve()), stats)
    if key not in _DIGESTS:
        h = hashlib.sha256()
        for p in files:
            name = p.relative_to(folder).as_posix() if folder.is_dir() else p.name
            h.update(name.encode("utf-8") + b"\0")
            with p.open("rb") as fh:
                for chunk in iter(lambda: fh.read(1 << 20), b""):
                    h.update(chunk)
            h.update(b"\0")
        _DIGESTS[key] = h.hexdigest()
    return _DIGESTS[key]


HUB_EXTRA = "pip install 'glotbench[hub]'"  # datasets (with pyarrow) and pandas: the Hub-format tasks only


def require_hub(where: str, module: str = "datasets") -> None:
    """One DataError line naming the extra when ``module`` (a package of the ``hub`` extra) is not
    installed: the default install leaves datasets, pyarrow and pandas out (253 MB that only
    Hub-format tasks use). The caller then imports it."""
    import importlib.util

    if importlib.util.find_spec(module) is None:
        raise DataError(f"{where}: needs {HUB_EXTRA} (no module {module.split('.')[0]!r}): a Hub-format dataset is "
                        f"read through the datasets package")


def cache_dir_for(digest: str) -> Path:
    """Where ``datasets`` keeps the prepared copy of a folder with content hash ``digest``."""
    import datasets

    return Path(datasets.config.HF_DATASETS_CACHE) / "glotbench-folders" / digest[:32]


def load_hub_folder(folder: Path, config: str | None, split: str, where: str) -> list[dict]:
    """Rows of a Hub dataset snapshot kept in ``folder``, through ``datasets`` itself, from a cache
    of this content's own (:func:`cache_dir_for`)."""
    require_hub(where)
    import datasets

    cache = cache_dir_for(folder_sha256(folder))
    try:
        ds = datasets.load_dataset(str(folder), config, split=split, cache_dir=str(cache))
    except Exception as err:  # noqa: BLE001 - datasets raises many types
        raise DataError(f"{where}: {folder}: cannot load split {split!r}: {str(err).splitlines()[0]}") from None
    return [dict(r) for r in ds]
