"""An exclusive lock on a run directory, so two processes never send the same requests twice.

``run.lock`` in the run directory is held with ``fcntl.flock`` for the life of the run and holds
the owner's PID. The kernel drops the lock when the process dies (even on SIGKILL), so a stale
file never blocks a rerun. A second process either refuses at once with one line naming the
holder's PID, or (``wait=True``, ``glotbench run --wait``) waits until the holder finishes.
Every command that sends model requests into a journal takes the lock of the journal's directory
(:func:`journal_lock`): ``run``, ``judge``, ``translate``, the ``build`` steps and ``analyze
--judge``, with the same message and ``--wait``.
POSIX only (Linux, macOS); on other systems the lock is skipped with no guarantee.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Callable

from glotbench.errors import GlotbenchError

LOCK_NAME = "run.lock"

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None


class RunLocked(GlotbenchError):
    """Another process holds the run directory."""


def _holder(fd: int) -> str:
    try:
        text = os.pread(fd, 64, 0).decode("ascii", "replace").strip()
    except OSError:
        return "unknown"
    return text or "unknown"


class RunLock:
    def __init__(self, run_dir: Path):
        self.path = Path(run_dir) / LOCK_NAME
        self.fd: int | None = None
        self.read_only = False  # the run directory is on read-only storage: held shared, never written

    def acquire(self, *, wait: bool = False, on_wait: Callable[[str], None] | None = None) -> "RunLock":
        if fcntl is None:  # pragma: no cover
            return self
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as err:
            if err.errno not in (errno.EROFS, errno.EACCES, errno.EPERM):
                raise
            # read-only storage (an archived run): nobody can write the journal there, so nothing can
            # be sent twice; an existing lock file is still honoured (flock works on a read-only fd)
            try:
                fd = os.open(self.path, os.O_RDONLY)
            except OSError:
                return self
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                raise RunLocked(f"{self.path.parent}: another glotbench process is running on this directory") from None
            self.fd, self.read_only = fd, True
            return self
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            if not wait:
                os.close(fd)
                raise RunLocked(f"{self.path.parent}: another glotbench process (PID {holder}) is running on this "
                                f"directory; wait for it, or pass --wait to queue behind it") from None
            if on_wait:
                on_wait(holder)
            fcntl.flock(fd, fcntl.LOCK_EX)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self.fd = fd
        return self

    def release(self) -> None:
        if self.fd is not None:
            try:
                if not self.read_only:
                    os.ftruncate(self.fd, 0)
            except OSError:
                pass
            os.close(self.fd)  # closing drops the flock
            self.fd = None

    def __enter__(self) -> "RunLock":
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()


def journal_lock(journal: Path, *, wait: bool = False, on_wait: Callable[[str], None] | None = None) -> RunLock:
    """The run lock of the directory holding ``journal``, acquired (raises :class:`RunLocked`)."""
    if on_wait is None:
        import sys

        def on_wait(pid: str) -> None:
            print(f"waiting: PID {pid} holds {Path(journal).parent}", file=sys.stderr, flush=True)
    return RunLock(Path(journal).parent).acquire(wait=wait, on_wait=on_wait)
