"""Running a command with a folder on read-only storage, for the archived-run and read-only cache tests.

As root, ``chmod a-w`` does not stop writes, so the folder is bind-mounted read-only onto itself in
a private mount namespace (``unshare -m``, or ``unshare -rm`` without root): the command sees
read-only storage (EROFS), everything else is untouched, and the mount ends with the command.
Without ``unshare`` and without root, the folder is made ``chmod -R a-w`` for the command's time.
Neither possible: the test is skipped with the reason."""

from __future__ import annotations

import os
import shlex
import shutil
import stat
import subprocess
from pathlib import Path

import pytest


def _unshare_works() -> list[str] | None:
    if shutil.which("unshare") is None or shutil.which("mount") is None:
        return None
    for flags in (["-m"], ["-rm"]) if os.geteuid() == 0 else (["-rm"],):
        probe = subprocess.run(["unshare", *flags, "sh", "-c", "mount --bind / /mnt 2>/dev/null || mount -t tmpfs t /mnt"],
                               capture_output=True, timeout=30)
        if probe.returncode == 0:
            return flags
    return None


def run_read_only(folder: Path, argv: list[str], *, env: dict | None = None, cwd: Path | None = None,
                  timeout: float = 300) -> subprocess.CompletedProcess:
    """Run ``argv`` with ``folder`` on read-only storage; returns the completed process."""
    full_env = {**os.environ, **(env or {})}
    full_env.pop("GLOTBENCH_CACHE", None)
    folder = Path(folder).resolve()
    flags = _unshare_works()
    if flags is not None:
        q = shlex.quote(str(folder))
        script = f"mount --bind {q} {q} && mount -o remount,bind,ro {q} && exec {shlex.join(argv)}"
        return subprocess.run(["unshare", *flags, "sh", "-c", script], env=full_env, cwd=cwd, capture_output=True,
                              text=True, timeout=timeout)
    if os.geteuid() == 0:
        pytest.skip("no read-only storage to test on: root ignores chmod and unshare/mount is not available")
    modes = {}
    for p in [folder, *folder.rglob("*")]:
        modes[p] = p.stat().st_mode
        p.chmod(p.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    try:
        return subprocess.run(argv, env=full_env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    finally:
        for p, mode in modes.items():
            p.chmod(mode)
