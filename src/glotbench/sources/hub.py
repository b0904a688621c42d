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
from glotbench.sources.limits import NetworkError
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


def host() -> str:
    from urllib.parse import urlsplit

    return urlsplit(_endpoint() or "https://huggingface.co").netloc


def _error(prefix: str, err: Exception) -> DataError:
    """A DataError (the Hub answered: 404 ...), or a NetworkError (it did not)."""
    status = getattr(getattr(err, "response", None), "status_code", None)
    if status is not None or type(err).__name__ in ("RepositoryNotFoundError", "RevisionNotFoundError",
                                                    "EntryNotFoundError", "GatedRepoError"):
        return DataError(prefix + _problem(err))
    return NetworkError(prefix + _problem(err), host())


def _problem(err: Exception) -> str:
    """The cause (timeout, no network, refused, not found) and the error's first line; the fixes
    when the network is the cause."""
    from glotbench.sources.limits import FIXES, cause

    status = getattr(getattr(err, "response", None), "status_code", None)
    if status is not None:
        return f"HTTP {status} ({_one_line(err)})"
    return f"{cause(err)} ({_one_line(err)}); {FIXES}"


def bounded(fn, seconds: float, what: str):
    """``fn()`` in a thread of its own, given up after ``seconds`` (huggingface_hub's own timeouts
    are per read, and some of its calls have none): a DataError naming ``what`` and the deadline.
    A call given up on is left to its thread (a daemon), which the process does not wait for."""
    import threading

    box: dict = {}

    def call() -> None:
        try:
            box["value"] = fn()
        except BaseException as err:  # noqa: BLE001 - handed to the caller
            box["error"] = err

    t = threading.Thread(target=call, name="glotbench-hub", daemon=True)
    t.start()
    t.join(seconds)
    if t.is_alive():
        from glotbench.sources.limits import FIXES

        raise NetworkError(f"{what}: timeout: no answer from the Hub ({_endpoint() or 'huggingface.co'}) within "
                        f"{seconds:.0f} s; {FIXES}", host())
    if "error" in box:
        raise box["error"]
    return box["value"]


def resolve(repo: str, revision: str) -> tuple[str, dict[str, dict]]:
    """The commit ``revision`` names now, and each file's size, sha256 (LFS files) and git blob id
    (bounded by the base deadline, glotbench.sources.limits)."""
    from glotbench.sources import limits

    hh = _hub()
    secs = limits.base_s()
    where = f"hf:{repo}@{revision}: cannot resolve the revision"
    try:
        info = bounded(lambda: hh.HfApi(endpoint=_endpoint()).dataset_info(
            repo, revision=revision, files_metadata=True, timeout=secs), secs, where)
    except DataError:
        raise
    except Exception as err:  # noqa: BLE001 - huggingface_hub raises many types
        raise _error(f"{where}: ", err) from None
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


def confine(target: Path, root: Path, where: str) -> None:
    """``target`` is a folder strictly inside ``root`` (a pull replaces it whole)."""
    t, r = Path(os.path.abspath(target)), Path(os.path.abspath(root))
    if t == r or r not in t.parents:
        raise DataError(f"{where}: destination {target} is not a folder inside the data root {root}: nothing fetched")


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
         cache_dir: Path, *, root: Path | None = None, size: int | None = None) -> dict[str, dict]:
    """Download the snapshot at ``commit`` (only ``include`` patterns when given) into
    huggingface_hub's cache, check each file against ``expected``, and put the snapshot at
    ``target`` (a folder strictly inside ``root``, the data root: never the root itself nor
    outside it). ``size``: the bytes expected, for the deadline. Returns ``{path: {size, sha256}}``."""
    from glotbench.sources import limits

    hh = _hub()
    where = f"hf:{repo}@{commit}"
    if root is not None:
        confine(target, root, where)
    _drop_stale_partials(cache_dir, repo)
    secs = limits.deadline_s(size) if size is not None else limits.base_s() + limits.deadline_s(None)
    try:
        folder = Path(bounded(lambda: hh.snapshot_download(
            repo_id=repo, repo_type="dataset", revision=commit, cache_dir=str(cache_dir),
            allow_patterns=include or None, endpoint=_endpoint(), etag_timeout=limits.base_s()),
            secs, f"{where}: download failed"))
    except DataError:
        raise
    except Exception as err:  # noqa: BLE001
        raise _error(f"{where}: download failed: ", err) from None
    files = sorted(p for p in folder.rglob("*") if p.is_file() and not any(part.startswith(".") for part in
                                                                            p.relative_to(folder).parts))
    if include:
        # the hub cache keeps one snapshot folder per repo@commit: it also holds what an earlier pull
        # of the same commit with other patterns fetched, which this target must not receive
        from huggingface_hub.utils import filter_repo_objects

        files = list(filter_repo_objects(files, allow_patterns=include,
                                         key=lambda p: p.relative_to(folder).as_posix()))
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
