"""What data a task's scores came from, for results.json and the report: the root it read, each
origin with its requested and resolved revision, and every file read with its sha256."""

from __future__ import annotations

from pathlib import Path

from glotbench.sources import cache
from glotbench.data.loaders import file_sha256
from glotbench.sources.lock import Lock


def _files(path: Path, root: Path | None) -> list[tuple[str, Path]]:
    items = sorted(p for p in path.rglob("*") if p.is_file() and not any(
        x.startswith(".") for x in p.relative_to(path).parts)) if path.is_dir() else [path]
    out = []
    for p in items:
        try:
            rel = p.relative_to(root).as_posix() if root else str(p)
        except ValueError:
            rel = str(p)
        out.append((rel, p))
    return out


def split_paths(task, split: str) -> list[Path]:
    """The files (or folders) a run of ``split`` reads: the split, and the few-shot split."""
    spec = task.spec
    splits = [split]
    if spec.fewshot.n and spec.fewshot.split and spec.fewshot.split != split:
        splits.append(spec.fewshot.split)
    mm = (spec.options or {}).get("mmlu") if isinstance(spec.options, dict) else None
    if isinstance(mm, dict) and mm.get("shot_split"):
        splits.append(mm["shot_split"])
    out: list[Path] = []
    for s in dict.fromkeys(splits):
        if s in spec.dataset.splits:
            p = task.split_path(s)
            if p not in out:
                out.append(p)
    return out


def task_provenance(task, split: str | None = None, lock: Lock | None = None) -> dict:
    spec = task.spec
    split = split or spec.dataset.eval_split
    loc = task.data_location()
    root = loc.root if loc else None
    declared = {f.dest: f.sha256 for o in spec.source.fetch for f in o.files if f.sha256}
    lock = lock if lock is not None else _lock_or_none()
    files = []
    try:
        paths = split_paths(task, split)
    except Exception:  # noqa: BLE001 - a Hub task read from the Hub itself has no local file
        paths = []
    for path in paths:
        for rel, p in _files(path, root):
            digest = file_sha256(p)
            entry = {"path": rel, "size": p.stat().st_size, "sha256": digest}
            if rel in declared:
                entry["matches_declared"] = declared[rel] == digest
            files.append(entry)
    sources = []
    for origin in spec.source.fetch:
        man = cache.read_manifest(origin.key()) if loc is not None and loc.kind == "cache" else None
        locked = lock.entry(origin) if lock is not None else None
        if man:
            resolved, how = man.get("commit"), "pulled by glotbench"
        elif locked and locked.get("commit"):
            resolved, how = locked["commit"], "lock file"
        elif origin.pinned and origin.kind != "url":
            resolved, how = origin.revision, "pinned in the task file"
        else:
            resolved, how = None, "unknown (a branch, data not pulled by glotbench)"
        sources.append({"kind": origin.kind, "repo": origin.repo or None, "config": origin.config,
                        "url": origin.page or (origin.files[0].url if origin.files and origin.files[0].url else None),
                        "requested_revision": origin.revision or None, "resolved_revision": resolved,
                        "resolved_by": how})
    differs = getattr(task, "data_differs", None)
    if differs:  # run with --allow-modified-data: said where the source is
        for f in files:
            if f["path"] in differs or any(f["path"].startswith(d.rstrip("/") + "/") for d in differs):
                f["differs_from_source"] = True
        for s in sources:
            s["resolved_by"] += "; data differs from its source"
    return {**({"differs_from_source": list(differs)} if differs else {}),
            "root": str(root) if root else None, "root_kind": loc.kind if loc else None,
            "license": spec.source.license or None, "sources": sources, "files": files}


def _lock_or_none() -> Lock | None:
    try:
        return Lock.load()
    except Exception:  # noqa: BLE001 - a broken lock file is reported by the commands that use it
        return None
