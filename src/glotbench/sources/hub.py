"""Hugging Face Hub datasets through huggingface_hub (it honours ``HF_ENDPOINT`` and
``HF_HUB_OFFLINE``; it resumes partial downloads itself). A snapshot is checked against the
Hub's own file metadata (LFS sha256, git blob id, size), then copied into the data root in one
folder swap, so a task never reads a half-updated folder."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

from glotbench.errors import DataError
from glotbench.data.loaders import file_sha256


def _endpoint() -> str | None:
    return os.environ.get("HF_ENDPOINT") or None


def _hub():
    try:
        import huggingface_hub
    except ImportError:
        raise DataError("fetching a Hugging Face dataset needs huggingface_hub: pip install 'glotbench[hub]'") from None
    return huggingface_hub


def _one_line(err: Exception) -> str:
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[0] if text else ''}"


def resolve(repo: str, revision: str) -> tuple[str, dict[str, dict]]:
    """The commit ``revision`` names now, and each file's size, sha256 (LFS files) and git blob id."""
    hh = _hub()
    try:
        info = hh.HfApi(endpoint=_endpoint()).dataset_info(repo, revision=revision, files_metadata=True)
    except Exception as err:  # noqa: BLE001 - huggingface_hub raises many types
        raise DataError(f"hf:{repo}@{revision}: cannot resolve the revision: {_one_line(err)}") from None
    files: dict[str, dict] = {}
    for s in info.siblings or []:
        meta: dict = {}
        if s.size is not None:
            meta["size"] = s.size
        if getattr(s, "lfs", None):
            lfs = s.lfs
            meta["sha256"] = lfs["sha256"] if isinstance(lfs, dict) else lfs.sha256
            meta["size"] = lfs["size"] if isinstance(lfs, dict) else lfs.size
        if getattr(s, "blob_id", None):
            meta["blob_id"] = s.blob_id
        files[s.rfilename] = meta
    return info.sha, files


def git_blob_id(path: Path) -> str:
    h = hashlib.sha1()  # noqa: S324 - git's object id, not a security hash
    h.update(b"blob %d\0" % path.stat().st_size)
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _check(path: Path, rel: str, meta: dict, where: str) -> str:
    digest = file_sha256(path)
    size = path.stat().st_size
    if meta.get("size") is not None and size != meta["size"]:
        raise DataError(f"{where}: {rel}: size {size} bytes, expected {meta['size']}")
    if meta.get("sha256") and digest != meta["sha256"]:
        raise DataError(f"{where}: {rel}: sha256 {digest}, expected {meta['sha256']}")
    if not meta.get("sha256") and meta.get("blob_id") and git_blob_id(path) != meta["blob_id"]:
        raise DataError(f"{where}: {rel}: git blob {git_blob_id(path)}, expected {meta['blob_id']}")
    return digest


def _drop_stale_partials(cache_dir: Path, repo: str, age_s: float = 600.0) -> None:
    """huggingface_hub writes each download to a temporary name of its own process and resumes only
    inside that process: a killed pull leaves a partial file nobody will use. Remove those not
    written to for ``age_s`` (a live download elsewhere keeps writing to its own)."""
    import time

    cutoff = time.time() - age_s
    for p in (cache_dir / f"datasets--{repo.replace('/', '--')}" / "blobs").glob("*.incomplete"):
        try:
            if p.stat().st_mtime < cutoff:
                p.unlink()
        except OSError:
            pass


def pull(repo: str, commit: str, include: list[str], target: Path, expected: dict[str, dict],
         cache_dir: Path) -> dict[str, dict]:
    """Download the snapshot at ``commit`` (only ``include`` patterns when given) into
    huggingface_hub's cache, check each file against ``expected``, and put the snapshot at
    ``target``. Returns ``{path: {size, sha256}}``."""
    hh = _hub()
    where = f"hf:{repo}@{commit}"
    _drop_stale_partials(cache_dir, repo)
    try:
        folder = Path(hh.snapshot_download(repo_id=repo, repo_type="dataset", revision=commit,
                                           cache_dir=str(cache_dir), allow_patterns=include or None,
                                           endpoint=_endpoint()))
    except Exception as err:  # noqa: BLE001
        raise DataError(f"{where}: download failed: {_one_line(err)}") from None
    files = sorted(p for p in folder.rglob("*") if p.is_file() and not any(part.startswith(".") for part in
                                                                            p.relative_to(folder).parts))
    if not files:
        pat = f" matching {include}" if include else ""
        raise DataError(f"{where}: the snapshot has no files{pat}")
    stage = target.with_name(f".{target.name}.incoming")
    shutil.rmtree(stage, ignore_errors=True)
    out: dict[str, dict] = {}
    try:
        for p in files:
            rel = p.relative_to(folder).as_posix()
            digest = _check(p, rel, expected.get(rel, {}), where)
            dst = stage / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(p, dst)  # a real file: the hub cache's symlinks stay in its cache
            out[rel] = {"size": dst.stat().st_size, "sha256": digest}
        old = target.with_name(f".{target.name}.old")
        shutil.rmtree(old, ignore_errors=True)
        if target.exists():
            os.replace(target, old)
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(stage, target)
        shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    return out
