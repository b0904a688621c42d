"""Pull, verify and lock the data of tasks (``glotbench data``, and a run that lacks its data).

Everything lands in the cache's data root (:mod:`glotbench.sources.cache`); each origin's pull is
recorded in a manifest (requested revision, resolved commit, file hashes) that provenance reads.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from glotbench.errors import DataError
from glotbench.sources import cache, hub
from glotbench.sources.http_fetch import (check_file, download, github_file_url, host_of, resolve_github_commit,
                                          url_with_mirror)
from glotbench.sources.limits import NetworkError
from glotbench.sources.lock import Lock
from glotbench.sources.schema import COMMIT, DataOrigin, SourceFile

Say = Callable[[str], None]


def offline() -> bool:
    """``HF_HUB_OFFLINE`` (or ``GLOTBENCH_OFFLINE``) set to a true value: nothing is fetched."""
    return any(os.environ.get(v, "").strip().lower() in ("1", "true", "yes", "on")
               for v in ("GLOTBENCH_OFFLINE", "HF_HUB_OFFLINE"))


def human(n: int | None) -> str:
    if n is None:
        return "size unknown"
    for unit in ("B", "kB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} GB"


def licence_text(spec) -> str:
    lic = (spec.source.license or "").strip()
    return f"licence: {lic}" if lic else "no licence published"


def declared_size(origin: DataOrigin, lock: Lock) -> int | None:
    if origin.kind == "hf":
        files = (lock.entry(origin) or {}).get("files") or {}
        sizes = [m.get("size") for m in files.values()]
        return sum(sizes) if sizes and None not in sizes else None
    sizes = [f.size if f.size is not None else lock.file_meta(origin, f.dest).get("size") for f in origin.files]
    return None if None in sizes else sum(sizes)


def expected(origin: DataOrigin, f: SourceFile, lock: Lock) -> tuple[int | None, str | None]:
    """The size and sha256 a file must have: declared in the task file, else pinned by the lock
    (both given and different: the lock is stale, one line)."""
    meta = lock.file_meta(origin, f.dest)
    if f.sha256 and meta.get("sha256") and meta["sha256"] != f.sha256:
        raise DataError(f"{lock.path}: {f.dest}: the lock's sha256 {meta['sha256']} differs from the task file's "
                        f"{f.sha256}; run: glotbench data lock")
    return (f.size if f.size is not None else meta.get("size")), (f.sha256 or meta.get("sha256"))


def check_blob(path: Path, blob: str | None, what: str) -> None:
    """A file pinned by its git object id (``git_blob``): the id of its bytes must be that one."""
    if blob and (got := hub.git_blob_id(path)) != blob:
        raise DataError(f"{what}: git blob {got}, expected {blob}")


@dataclass
class PullResult:
    origin: DataOrigin
    commit: str | None
    files: dict[str, dict] = field(default_factory=dict)  # dest -> {size, sha256}
    fetched: int = 0  # files downloaded (the others were already there and checked)


def _commit_for(origin: DataOrigin, lock: Lock) -> str | None:
    if origin.kind == "url":
        return None
    rev = lock.commit(origin)
    if COMMIT.fullmatch(rev):
        return rev
    if origin.kind == "github":
        return resolve_github_commit(origin.repo, rev)
    return hub.resolve(origin.repo, rev)[0]


def _selected(files: dict[str, dict], include: list[str]) -> dict[str, dict]:
    """The files an hf origin's ``include`` patterns select (fnmatch, as huggingface_hub matches them)."""
    from fnmatch import fnmatch

    return {k: v for k, v in files.items() if not include or any(fnmatch(k, pat) for pat in include)}


def pull_origin(origin: DataOrigin, lock: Lock, *, say: Say = lambda s: None,
                resolved: tuple[str, dict] | None = None, bar=None) -> PullResult:
    """Fetch one origin's files into the cache (``resolved``: an hf origin's commit and file list,
    already looked up)."""
    if offline():
        raise DataError(f"{origin.label()}: offline (HF_HUB_OFFLINE or GLOTBENCH_OFFLINE is set): nothing fetched")
    if origin.manual:
        missing = [f.dest for f in origin.files if not f.url]
        raise DataError(f"{origin.label()}: no direct download for {', '.join(missing)}: get it by hand from "
                        f"{origin.page} and put it under the data root ({cache.data_dir()} or $GLOTBENCH_DATA)")
    root = cache.data_dir()
    commit = resolved[0] if resolved else _commit_for(origin, lock)
    res = PullResult(origin, commit)
    if origin.kind == "hf":
        target = root / origin.to
        man = cache.read_manifest(origin.key()) or {}
        if man.get("commit") == commit and target.is_dir() and _still_same(target, man.get("files") or {}):
            res.files = man["files"]
        else:
            entry = lock.entry(origin)
            want = (entry or {}).get("files") if entry and entry.get("commit") == commit else None
            if want is None:
                want = resolved[1] if resolved else hub.resolve(origin.repo, commit)[1]
            say(f"  hf:{origin.repo}@{commit[:12]} -> {target}")
            chosen = _selected(want, origin.include)
            sizes = [m.get("size") for m in chosen.values()]
            total = sum(sizes) if sizes and None not in sizes else None
            res.files = hub.pull(origin.repo, commit, origin.include, target, want, cache.hub_dir(), root=root,
                                 size=total)
            res.fetched = len(res.files)
    else:
        for f in origin.files:
            size, sha = expected(origin, f, lock)
            dest = root / f.dest
            what = f"{origin.label()}: {f.path or f.url}"
            if dest.is_file():
                try:
                    res.files[f.dest] = {"size": dest.stat().st_size,
                                         "sha256": check_file(dest, size=size, sha256=sha, what=what)}
                    check_blob(dest, f.git_blob, what)
                    if sha or f.git_blob or _manifest_sha(origin, f.dest) == res.files[f.dest]["sha256"]:
                        continue  # already here and checked
                except DataError:
                    pass  # replaced below; the new file is checked before it is used
            url = url_with_mirror(f.url) if origin.kind == "url" else github_file_url(origin.repo, commit, f.path,
                                                                                       lfs=f.lfs)
            say(f"  {url} -> {dest} ({human(size)})")
            digest = download(url, dest, size=size, sha256=sha, what=what, bar=bar, lfs=f.lfs)
            try:
                check_blob(dest, f.git_blob, what)
            except DataError:
                dest.unlink(missing_ok=True)  # a wrong file is never used
                raise
            res.files[f.dest] = {"size": dest.stat().st_size, "sha256": digest}
            res.fetched += 1
    with _MANIFESTS:  # origins pulled at once may share a repository (and so its manifest)
        old = cache.read_manifest(origin.key()) or {}
        files = res.files
        if origin.kind != "hf" and old.get("commit") == commit:  # other tasks' files of the same repository
            files = {**(old.get("files") or {}), **res.files}
        cache.write_manifest(origin.key(), {
            "origin": {"kind": origin.kind, "repo": origin.repo, "revision": origin.revision},
            "requested": origin.revision, "commit": commit,
            "files": files, "root": str(root), "pulled": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
    return res


_MANIFESTS = threading.Lock()


def _manifest_sha(origin: DataOrigin, dest: str) -> str | None:
    return (((cache.read_manifest(origin.key()) or {}).get("files") or {}).get(dest) or {}).get("sha256")


def _still_same(target: Path, files: dict[str, dict]) -> bool:
    """The pulled hf folder still holds exactly what its manifest lists (names, sizes, then sha256:
    a file edited after the pull is fetched again)."""
    from glotbench.data.loaders import file_sha256

    have = {p.relative_to(target).as_posix(): p for p in target.rglob("*") if p.is_file()}
    if {k: p.stat().st_size for k, p in have.items()} != {k: v.get("size") for k, v in files.items()}:
        return False
    return all(not v.get("sha256") or file_sha256(have[k]) == v["sha256"] for k, v in files.items())


def _host(origin: DataOrigin) -> str:
    from glotbench.sources.http_fetch import github_raw_base

    if origin.kind == "hf":
        return hub.host()
    if origin.kind == "github":
        return host_of(github_raw_base())
    return host_of(url_with_mirror(origin.files[0].url)) if origin.files and origin.files[0].url else ""


def workers() -> int:
    """Origins fetched at once (``GLOTBENCH_FETCH_WORKERS``, default 4)."""
    raw = os.environ.get("GLOTBENCH_FETCH_WORKERS", "").strip()
    return max(1, int(raw)) if raw.isdigit() else 4


def pull_tasks(tasks, lock: Lock, *, say: Say, bar=None) -> dict[str, str]:
    """Pull every origin of ``tasks`` (each shared origin once, several at a time: ``workers()``).
    Returns task -> the one line that stopped its pull; the others have their data in the cache.
    A host that did not answer (timeout, no network, refused) is not asked again in this pull: its
    other origins fail at once with the first one's line."""
    from concurrent.futures import ThreadPoolExecutor

    failed: dict[str, str] = {}
    origins: dict[tuple, tuple[str, DataOrigin]] = {}  # (origin key, its files) -> (first task, origin)
    wanted: dict[str, list[tuple]] = {}
    for task in tasks:
        spec = task.spec if hasattr(task, "spec") else task
        if not spec.source.fetch:
            failed[spec.name] = f"task {spec.name}: declares no source to fetch (source.fetch in its task file)"
            continue
        keys = []
        for origin in spec.source.fetch:
            key = (origin.key(), tuple(origin.dests()))
            origins.setdefault(key, (spec, origin))
            keys.append(key)
        wanted[spec.name] = keys
    down: dict[str, str] = {}  # host -> the line of the first failure on the way there
    guard = threading.Lock()

    def one(spec, origin) -> str | None:
        host = _host(origin)
        with guard:
            if host and host in down:
                return f"{origin.label()}: not tried: {host} did not answer ({down[host]})"
        size, resolved = declared_size(origin, lock), None
        try:
            if origin.kind == "hf" and size is None and not offline():  # ask the Hub how big first
                resolved = hub.resolve(origin.repo, lock.commit(origin))
                size = sum(m.get("size") or 0 for m in _selected(resolved[1], origin.include).values())
            if not origin.manual:  # a manual origin fetches nothing: its error says what to do
                say(f"fetching {spec.name}: {origin.label()} ({human(size)}; {licence_text(spec)})")
            r = pull_origin(origin, lock, say=say, resolved=resolved, bar=bar)
            if not r.fetched:
                say(f"  {spec.name}: already in the cache, checked")
            return None
        except NetworkError as err:
            with guard:
                if err.host:
                    down.setdefault(err.host, str(err))
            return str(err)
        except DataError as err:
            return str(err)

    done: dict[tuple, str | None] = {}
    with ThreadPoolExecutor(max_workers=workers(), thread_name_prefix="glotbench-pull") as pool:
        futures = {key: pool.submit(one, spec, origin) for key, (spec, origin) in origins.items()}
        for key, fut in futures.items():
            done[key] = fut.result()
    for name, keys in wanted.items():
        for key in keys:
            if done[key] is not None:
                failed.setdefault(name, done[key])
    return failed


# ------------------------------------------------------------------ verify
@dataclass
class FileCheck:
    path: str
    status: str  # ok | unpinned | mismatch | missing
    detail: str = ""


def verify_task(spec, root: Path, lock: Lock) -> list[FileCheck]:
    """Every declared file under ``root`` against its pinned size and sha256 (task file or lock;
    files an hf origin lists: the lock, else the pull's manifest)."""
    out: list[FileCheck] = []
    for origin in spec.source.fetch:
        if origin.kind == "hf":
            folder = root / origin.to
            entry = lock.entry(origin) or {}
            pinned = entry.get("files") or (cache.read_manifest(origin.key()) or {}).get("files") or {}
            if not folder.is_dir():
                out.append(FileCheck(origin.to, "missing"))
                continue
            present = sorted(p for p in folder.rglob("*") if p.is_file()
                             and not any(x.startswith(".") for x in p.relative_to(folder).parts))
            for p in present:
                rel = p.relative_to(folder).as_posix()
                meta = pinned.get(rel)
                if meta is None:
                    out.append(FileCheck(f"{origin.to}/{rel}", "unpinned", "not in the lock (run: glotbench data lock)"))
                    continue
                try:
                    check_file(p, size=meta.get("size"), sha256=meta.get("sha256"), what=f"{origin.to}/{rel}")
                    out.append(FileCheck(f"{origin.to}/{rel}", "ok"))
                except DataError as err:
                    out.append(FileCheck(f"{origin.to}/{rel}", "mismatch", str(err)))
            for rel in sorted(set(pinned) - {p.relative_to(folder).as_posix() for p in present}):
                if not origin.include:
                    out.append(FileCheck(f"{origin.to}/{rel}", "missing"))
            continue
        for f in origin.files:
            p = root / f.dest
            if not p.is_file():
                if not f.optional:  # an optional file (a resource some metrics use) may be absent
                    out.append(FileCheck(f.dest, "missing"))
                continue
            try:
                size, sha = expected(origin, f, lock)
                check_file(p, size=size, sha256=sha, what=f.dest)
                check_blob(p, f.git_blob, f.dest)
                pinned = bool(sha or f.git_blob)
                out.append(FileCheck(f.dest, "ok" if pinned else "unpinned", "" if pinned else "no sha256 declared or locked"))
            except DataError as err:
                out.append(FileCheck(f.dest, "mismatch", str(err)))
    return out


# ------------------------------------------------------------------ lock
def lock_origins(specs, lock: Lock, *, say: Say) -> None:
    """Resolve every origin of ``specs`` to a commit and record its files' sizes and hashes."""
    seen: set[tuple] = set()
    for spec in specs:
        for origin in spec.source.fetch:
            if (origin.key(), tuple(origin.dests())) in seen or origin.kind == "url":
                continue
            seen.add((origin.key(), tuple(origin.dests())))
            if origin.kind == "github":
                commit = origin.revision if COMMIT.fullmatch(origin.revision) else resolve_github_commit(
                    origin.repo, origin.revision)
                files = {f.dest: {k: v for k, v in (("size", f.size), ("sha256", f.sha256)) if v is not None}
                         for f in origin.files}
                man = cache.read_manifest(origin.key()) or {}
                if man.get("commit") == commit:  # a pull at this commit measured the unpinned files
                    for dest, meta in files.items():
                        if "sha256" not in meta and dest in (man.get("files") or {}):
                            meta.update(man["files"][dest])
            else:
                commit, files = hub.resolve(origin.repo, origin.revision)
            lock.put(origin, commit, files)
            moved = "" if commit == origin.revision else f" -> {commit}"
            say(f"{origin.label()}{moved} ({len(files)} file(s))")
