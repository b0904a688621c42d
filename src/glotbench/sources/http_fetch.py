"""Plain HTTP downloads (GitHub raw files, Git LFS objects, URLs) with httpx: written to
``<dest>.part``, resumed with a Range request after an interruption, checked (size, sha256),
then moved into place in one rename. A file that fails its check is removed, never used."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

from glotbench.data.loaders import file_sha256
from glotbench.errors import DataError

ENV_RAW = "GLOTBENCH_GITHUB_RAW"
ENV_MEDIA = "GLOTBENCH_GITHUB_MEDIA"
ENV_API = "GLOTBENCH_GITHUB_API"
LFS_POINTER = b"version https://git-lfs.github.com/spec/v1"


def github_raw_base() -> str:
    return os.environ.get(ENV_RAW, "https://raw.githubusercontent.com").rstrip("/")


def github_media_base() -> str:
    """Git LFS objects: GitHub's media host serves them at the raw path."""
    return os.environ.get(ENV_MEDIA, "https://media.githubusercontent.com/media").rstrip("/")


def github_api_base() -> str:
    return os.environ.get(ENV_API, "https://api.github.com").rstrip("/")


def github_file_url(repo: str, commit: str, path: str, *, lfs: bool = False) -> str:
    return f"{github_media_base() if lfs else github_raw_base()}/{repo}/{commit}/{path}"


def client(timeout: float = 60.0):
    import httpx

    return httpx.Client(timeout=httpx.Timeout(timeout, connect=15.0), follow_redirects=True,
                        headers={"User-Agent": "glotbench-data"})


def check_file(path: Path, *, size: int | None, sha256: str | None, what: str) -> str:
    """The file's sha256 after checking it against the expected size and hash (a DataError naming
    ``what`` and both values on a mismatch)."""
    got_size = path.stat().st_size
    if size is not None and got_size != size:
        raise DataError(f"{what}: size {got_size} bytes, expected {size}{_pointer_note(path)}")
    digest = file_sha256(path)
    if sha256 and digest != sha256:
        raise DataError(f"{what}: sha256 {digest}, expected {sha256}{_pointer_note(path)}")
    return digest


def _pointer_note(path: Path) -> str:
    try:
        with path.open("rb") as fh:
            head = fh.read(len(LFS_POINTER))
    except OSError:
        return ""
    return " (got a Git LFS pointer, not the object: mark the file 'lfs: true')" if head == LFS_POINTER else ""


def download(url: str, dest: Path, *, size: int | None, sha256: str | None, what: str,
             progress: Callable[[int], None] | None = None, http=None) -> str:
    """Fetch ``url`` to ``dest`` (resuming ``dest.part``), check it, rename it into place; the sha256."""
    import httpx

    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(dest.name + ".part")
    own = http is None
    http = http or client()
    try:
        offset = part.stat().st_size if part.exists() else 0
        if size is not None and offset > size:  # not ours to resume
            part.unlink()
            offset = 0
        if size is None or offset < size:
            # identity: the bytes on disk are the file's, so a Range continues them exactly
            headers = {"Accept-Encoding": "identity", **({"Range": f"bytes={offset}-"} if offset else {})}
            try:
                with http.stream("GET", url, headers=headers) as resp:
                    if resp.status_code == 416 and offset:  # nothing left to send: the part is whole
                        pass
                    elif resp.status_code >= 400:
                        reason = "not found" if resp.status_code == 404 else resp.reason_phrase
                        raise DataError(f"{what}: {url}: HTTP {resp.status_code} ({reason})")
                    else:
                        mode = "ab" if resp.status_code == 206 and offset else "wb"
                        with part.open(mode) as fh:
                            for chunk in resp.iter_raw():  # as it arrives: a cut keeps what came
                                fh.write(chunk)
                                if progress:
                                    progress(len(chunk))
                            fh.flush()
                            os.fsync(fh.fileno())
            except httpx.HTTPError as err:
                have = part.stat().st_size if part.exists() else 0
                raise DataError(f"{what}: {url}: download interrupted after {have} bytes ({type(err).__name__}: "
                                f"{err}); run the pull again to resume") from None
        try:
            digest = check_file(part, size=size, sha256=sha256, what=what)
        except DataError:
            part.unlink(missing_ok=True)  # a wrong file is never used, nor resumed
            raise
        os.replace(part, dest)
        return digest
    finally:
        if own:
            http.close()


def resolve_github_commit(repo: str, ref: str, *, http=None) -> str:
    """A branch or tag of a GitHub repository -> its commit (the REST API's sha media type)."""
    import httpx

    url = f"{github_api_base()}/repos/{repo}/commits/{ref}"
    own = http is None
    http = http or client()
    try:
        resp = http.get(url, headers={"Accept": "application/vnd.github.sha"})
    except httpx.HTTPError as err:
        raise DataError(f"github:{repo}@{ref}: cannot resolve the commit: {url}: {type(err).__name__}: {err}") from None
    finally:
        if own:
            http.close()
    sha = resp.text.strip()
    if resp.status_code != 200 or len(sha) != 40:
        raise DataError(f"github:{repo}@{ref}: cannot resolve the commit: {url}: HTTP {resp.status_code}")
    return sha
