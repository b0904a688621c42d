"""Plain HTTP downloads (GitHub raw files, Git LFS objects, URLs) with httpx: written to
``<dest>.part``, resumed with a Range request after an interruption, checked (size, sha256),
then moved into place in one rename. A file that fails its check is removed, never used."""

from __future__ import annotations

import os
import time
from pathlib import Path

from glotbench.data.loaders import file_sha256
from glotbench.errors import DataError
from glotbench.sources.limits import NetworkError

ENV_RAW = "GLOTBENCH_GITHUB_RAW"
ENV_MEDIA = "GLOTBENCH_GITHUB_MEDIA"
ENV_API = "GLOTBENCH_GITHUB_API"
ENV_URL_MIRROR = "GLOTBENCH_URL_MIRROR"
LFS_POINTER = b"version https://git-lfs.github.com/spec/v1"
POINTER_MAX = 1024  # a Git LFS pointer is ~130 bytes


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

    from glotbench.sources import limits

    return httpx.Client(timeout=httpx.Timeout(timeout, connect=limits.connect_s()), follow_redirects=True,
                        headers={"User-Agent": "glotbench-data"})


def host_of(url: str) -> str:
    from urllib.parse import urlsplit

    return urlsplit(url).netloc


def url_with_mirror(url: str) -> str:
    """A ``url`` origin's file through ``$GLOTBENCH_URL_MIRROR`` when set: ``https://host/path`` is
    fetched from ``<mirror>/host/path`` (the checks are the same)."""
    base = os.environ.get(ENV_URL_MIRROR, "").strip().rstrip("/")
    if not base:
        return url
    rest = url.split("://", 1)[-1]
    return f"{base}/{rest}"


def check_file(path: Path, *, size: int | None, sha256: str | None, what: str, lfs: bool = False) -> str:
    """The file's sha256 after checking it against the expected size and hash (a DataError naming
    ``what`` and both values on a mismatch)."""
    got_size = path.stat().st_size
    if size is not None and got_size != size:
        raise DataError(f"{what}: size {got_size} bytes, expected {size}{_pointer_note(path, lfs)}")
    digest = file_sha256(path)
    if sha256 and digest != sha256:
        raise DataError(f"{what}: sha256 {digest}, expected {sha256}{_pointer_note(path, lfs)}")
    return digest


def _pointer_note(path: Path, lfs: bool = False) -> str:
    try:
        with path.open("rb") as fh:
            head = fh.read(len(LFS_POINTER))
    except OSError:
        return ""
    if head != LFS_POINTER:
        return ""
    if lfs:  # marked already: the host that should serve the object served its pointer
        return (" (got a Git LFS pointer, not the object, from the media host: the object is not stored "
                f"upstream, or ${ENV_MEDIA} points at a host that serves pointers)")
    return " (got a Git LFS pointer, not the object: mark the file 'lfs: true')"


class _Watchdog:
    """Shuts a response's socket down at ``deadline`` (time.monotonic): a read that is waiting for a
    server that stalls, or drips a byte at a time, ends there."""

    def __init__(self, resp, deadline: float):
        import threading

        self.fired = False
        self._resp = resp
        self._timer = threading.Timer(max(0.0, deadline - time.monotonic()), self._fire)
        self._timer.daemon = True
        self._timer.start()

    def _fire(self) -> None:
        import socket

        self.fired = True
        stream = self._resp.extensions.get("network_stream")
        sock = stream.get_extra_info("socket") if stream is not None else None
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def cancel(self) -> None:
        self._timer.cancel()


def download(url: str, dest: Path, *, size: int | None, sha256: str | None, what: str,
             bar=None, http=None, lfs: bool = False) -> str:
    """Fetch ``url`` to ``dest`` (resuming ``dest.part``), check it, rename it into place; the sha256.

    Bounded (glotbench.sources.limits): a connect timeout, a deadline for the whole file that grows
    with its declared size, and never more than the declared size (+ one chunk) read. ``bar``: a
    :class:`glotbench.sources.progress.Transfers` that shows bytes and rate."""
    import httpx

    from glotbench.sources import limits

    budget = limits.deadline_s(size)
    deadline = time.monotonic() + budget
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(dest.name + ".part")
    own = http is None
    http = http or client()
    watchdog = None
    tid = None
    try:
        offset = part.stat().st_size if part.exists() else 0
        if size is not None and offset > size:  # not ours to resume
            part.unlink()
            offset = 0
        if size is None or offset < size:
            # identity: the bytes on disk are the file's, so a Range continues them exactly
            headers = {"Accept-Encoding": "identity", **({"Range": f"bytes={offset}-"} if offset else {})}
            timeout = httpx.Timeout(min(60.0, budget), connect=min(limits.connect_s(), budget))
            try:
                with http.stream("GET", url, headers=headers, timeout=timeout) as resp:
                    watchdog = _Watchdog(resp, deadline)
                    if resp.status_code == 416 and offset:  # nothing left to send: the part is whole
                        pass
                    elif resp.status_code >= 400:
                        reason = "not found" if resp.status_code == 404 else resp.reason_phrase
                        raise DataError(f"{what}: {url}: HTTP {resp.status_code} ({reason})")
                    else:
                        mode = "ab" if resp.status_code == 206 and offset else "wb"
                        have = offset if mode == "ab" else 0
                        announced = resp.headers.get("Content-Length")
                        # a small body past a tiny pin is read (up to 1 KiB) to tell a Git LFS pointer by its text
                        cap = None if size is None else max(size, POINTER_MAX)
                        if cap is not None and announced and announced.isdigit() and have + int(announced) > cap:
                            raise _TooBig(f"{what}: {url}: the server announces {have + int(announced)} bytes for a "
                                          f"file declared as {size} bytes: nothing kept")
                        if bar is not None:
                            tid = bar.add(dest.name, size)
                            if have:
                                bar.advance(tid, have)
                        with part.open(mode) as fh:
                            for chunk in resp.iter_raw():  # as it arrives (httpcore reads <= 64 KiB): a cut keeps what came
                                if cap is not None and have + len(chunk) > cap:
                                    raise _TooBig(f"{what}: {url}: the server sent more than the declared {size} "
                                                  f"bytes: stopped, nothing kept")
                                fh.write(chunk)
                                have += len(chunk)
                                if bar is not None:
                                    bar.advance(tid, len(chunk))
                                if time.monotonic() >= deadline:
                                    raise httpx.ReadTimeout("deadline")
                            fh.flush()
                            os.fsync(fh.fileno())
            except _TooBig as err:
                part.unlink(missing_ok=True)
                raise DataError(str(err)) from None
            except httpx.HTTPError as err:
                have = part.stat().st_size if part.exists() else 0
                timed_out = (watchdog is not None and watchdog.fired) or time.monotonic() >= deadline
                raise NetworkError(_failure_line(what, url, err, have, size, budget if timed_out else None),
                                   host_of(url)) from None
        try:
            digest = check_file(part, size=size, sha256=sha256, what=what, lfs=lfs)
        except DataError:
            part.unlink(missing_ok=True)  # a wrong file is never used, nor resumed
            raise
        os.replace(part, dest)
        return digest
    finally:
        if watchdog is not None:
            watchdog.cancel()
        if tid is not None:
            bar.finish(tid)
        if own:
            http.close()


class _TooBig(Exception):
    pass


def _failure_line(what: str, url: str, err: Exception, have: int, size: int | None, budget: float | None) -> str:
    """One line: what failed, its cause (timeout, no network, refused ...), and what to do. "Run the
    pull again to resume" only when some bytes came."""
    from glotbench.sources.limits import FIXES, cause

    if budget is not None:
        of = f" of {size}" if size is not None else ""
        why = (f"timeout: not complete after {budget:.0f} s ({have}{of} bytes; the deadline is "
               f"$GLOTBENCH_FETCH_BASE_S + size / $GLOTBENCH_FETCH_MIN_RATE)")
    else:
        why = f"{cause(err)} ({type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''})"
    if have:
        return f"{what}: {url}: download interrupted after {have} bytes: {why}; run the pull again to resume"
    return f"{what}: {url}: {why}; {FIXES}"


def resolve_github_commit(repo: str, ref: str, *, http=None) -> str:
    """A branch or tag of a GitHub repository -> its commit (the REST API's sha media type)."""
    import httpx

    url = f"{github_api_base()}/repos/{repo}/commits/{ref}"
    own = http is None
    http = http or client()
    try:
        from glotbench.sources import limits

        resp = http.get(url, headers={"Accept": "application/vnd.github.sha"},
                        timeout=httpx.Timeout(limits.base_s(), connect=limits.connect_s()))
    except httpx.HTTPError as err:
        from glotbench.sources.limits import FIXES, cause

        raise NetworkError(f"github:{repo}@{ref}: cannot resolve the commit: {url}: {cause(err)} ({type(err).__name__}: "
                           f"{err}); {FIXES}", host_of(url)) from None
    finally:
        if own:
            http.close()
    sha = resp.text.strip()
    if resp.status_code != 200 or len(sha) != 40:
        raise DataError(f"github:{repo}@{ref}: cannot resolve the commit: {url}: HTTP {resp.status_code}")
    return sha
