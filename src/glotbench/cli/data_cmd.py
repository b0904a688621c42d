"""`glotbench data list|pull|verify|lock`: where each task's data comes from, and getting it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table

from glotbench.cli import NounGroup, app
from glotbench.cli.option_groups import DataOptions, Flags, one_of, option_of, options

data_app = typer.Typer(cls=NounGroup, help="Benchmark data: list, pull (download and check), verify, lock (docs/data.md).",
                       no_args_is_help=True)
app.add_typer(data_app, name="data")

_NAMES = typer.Argument(None, help="Tasks, suites or globs (default: every task).")
# the data group's flags (glotbench.cli.option_groups) are the noun's: glotbench data --cache-dir DIR --lock FILE
# SUB-COMMAND; after the sub-command (their spelling before) they are still accepted, unlisted, and win
_CACHE = typer.Option(None, "--cache-dir", hidden=True)
_LOCK = typer.Option(None, "--lock", hidden=True)
# where the data group's flags of this invocation are kept: the click context's meta, which the group's
# context shares with its sub-command's (nothing is kept between two invocations in one process)
_META = "glotbench.data_group"


@data_app.callback()
def _data_group(ctx: typer.Context, cache_dir: Path = option_of(DataOptions, "cache_dir"),
                lock: Path = option_of(DataOptions, "lock")) -> None:
    """The cache folder and the lock file, once for every sub-command: glotbench data --cache-dir DIR list."""
    ctx.meta[_META] = (cache_dir, lock)


def _group(ctx: typer.Context, cache_dir: Path | None, lock: Path | None) -> tuple[Path | None, Path | None]:
    """The sub-command's own --cache-dir / --lock, else the data group's."""
    group_cache, group_lock = ctx.meta.get(_META, (None, None))
    return cache_dir or group_cache, lock or group_lock


def _setup(cache_dir: Path | None) -> None:
    if cache_dir is not None:
        os.environ["GLOTBENCH_CACHE_DIR"] = str(cache_dir)


def _tasks(names: list[str] | None):
    from glotbench.tasks.registry import all_specs, make_task, resolve

    if names:
        return resolve(list(names))
    return [make_task(spec, path) for _, (spec, path) in sorted(all_specs().items())]


def _pinned(spec, lock) -> str:
    """yes: every file has a sha256 (declared or locked) or a git blob id; partly; no."""
    flags = []
    for o in spec.source.fetch:
        entry = lock.entry(o) or {}
        if o.kind == "hf":
            flags.append(bool(entry.get("files")) and all(m.get("sha256") or m.get("blob_id")
                                                          for m in entry["files"].values()))
        else:
            flags += [bool(f.sha256 or f.git_blob or lock.file_meta(o, f.dest).get("sha256")) for f in o.files]
    if not flags:
        return "no source"
    return "yes" if all(flags) else ("partly" if any(flags) else "no")


def _size(spec, loc) -> int | None:
    from glotbench.sources.locate import needed

    if loc is None:
        return None
    total = 0
    for rel in needed(spec):
        p = loc.root / rel
        total += sum(f.stat().st_size for f in p.rglob("*") if f.is_file()) if p.is_dir() else p.stat().st_size
    return total


@data_app.command("list")
@options((Flags, "fmt"), about={"fmt": "table (the default) or json (one JSON object per task)."})
def data_list(ctx: typer.Context, names: list[str] = _NAMES, cache_dir: Path = _CACHE, lock: Path = _LOCK,
              as_json: bool = typer.Option(False, "--json", hidden=True, help="The spelling before --format json."),
              *, fmt: Optional[str] = None) -> None:
    """Per task: present or not, where, size, licence, source, what an hf loader reads (configs,
    splits, files; "assumed: ..." where the layout was not read from the repository), whether its
    checksums are pinned."""
    import json

    from glotbench.sources.lock import Lock
    from glotbench.sources.pull import declared_size, human, licence_text

    one_of(fmt, "--format", ("table", "json"))
    as_json = as_json or fmt == "json"
    cache_dir, lock = _group(ctx, cache_dir, lock)
    _setup(cache_dir)
    lk = Lock.load(lock)
    rows = []
    for task in _tasks(names):
        spec = task.spec
        loc = task.data_location()
        size = _size(spec, loc)
        if size is None:
            sizes = [declared_size(o, lk) for o in spec.source.fetch]
            size = sum(sizes) if sizes and None not in sizes else None
        rows.append({"task": spec.name, "present": loc is not None,
                     "where": f"{loc.root} ({loc.kind})" if loc else None, "size": size,
                     "licence": licence_text(spec),
                     "source": "; ".join(o.label() for o in spec.source.fetch) or "none declared",
                     "layout": "; ".join(o.layout() for o in spec.source.fetch if o.kind == "hf") or None,
                     "assumed": "; ".join(o.assumed for o in spec.source.fetch if o.assumed) or None,
                     "pinned": _pinned(spec, lk)})
    if as_json:
        for r in rows:
            typer.echo(json.dumps(r, ensure_ascii=False))
        return
    table = Table(title="glotbench data")
    for col in ("task", "present", "where", "size", "licence", "source", "reads", "sha256 pinned"):
        table.add_column(col, no_wrap=col == "task", overflow="fold")  # commits and paths are never cut
    for r in rows:
        table.add_row(r["task"], "yes" if r["present"] else "no", r["where"] or "-",
                      human(r["size"]) if r["size"] is not None else "?", r["licence"], r["source"],
                      r["layout"] or "-", r["pinned"])
    Console(soft_wrap=False, width=max(160, Console().width)).print(table)


@data_app.command("pull")
def data_pull(ctx: typer.Context, names: list[str] = typer.Argument(..., help="Tasks, suites or globs to fetch."),
              cache_dir: Path = _CACHE, lock: Path = _LOCK,
              force: bool = typer.Option(False, "--force", help="Fetch into the cache even when another data "
                                                                "root (GLOTBENCH_DATA, shared/data) has the task.")) -> None:
    """Download what the tasks read into the cache, checking size and sha256 (a mismatch: nothing used)."""
    from glotbench.errors import DataError
    from glotbench.sources import cache
    from glotbench.sources.lock import Lock
    from glotbench.sources.pull import offline, pull_tasks

    cache_dir, lock = _group(ctx, cache_dir, lock)
    _setup(cache_dir)
    if offline():
        raise DataError("offline (HF_HUB_OFFLINE or GLOTBENCH_OFFLINE is set): nothing fetched")
    lk = Lock.load(lock)
    todo = []
    for task in _tasks(names):
        loc = task.data_location()
        if loc is not None and loc.kind == "local" and not force:
            typer.echo(f"{task.name}: present in {loc.root} (not fetched; --force fetches into the cache)")
            continue
        todo.append(task)
    from glotbench.sources.progress import Transfers

    failed = pull_tasks(todo, lk, say=typer.echo, bar=Transfers())
    for name, why in failed.items():
        typer.echo(f"error: {name}: {why}", err=True)
    ok = [t.name for t in todo if t.name not in failed]
    if ok:
        typer.echo(f"pulled {len(ok)} task(s) into {cache.data_dir()}")
    if failed:  # the exit code of a run that cannot get its data (every GlotbenchError: 2)
        raise typer.Exit(2)


@data_app.command("verify")
def data_verify(ctx: typer.Context, names: list[str] = _NAMES, cache_dir: Path = _CACHE, lock: Path = _LOCK) -> None:
    """Check every present task's files against their pinned size and sha256; exit 1 on a mismatch."""
    from glotbench.sources.lock import Lock
    from glotbench.sources.pull import verify_task

    cache_dir, lock = _group(ctx, cache_dir, lock)
    _setup(cache_dir)
    lk = Lock.load(lock)
    bad = 0
    for task in _tasks(names):
        loc = task.data_location()
        if loc is None:
            typer.echo(f"{task.name}: not present")
            continue
        checks = verify_task(task.spec, loc.root, lk)
        wrong = [c for c in checks if c.status in ("mismatch", "missing")]
        unpinned = [c for c in checks if c.status == "unpinned"]
        bad += len(wrong)
        state = "MISMATCH" if wrong else ("ok" if not unpinned else f"ok ({len(unpinned)} file(s) without a pinned sha256)")
        typer.echo(f"{task.name}: {state} ({len(checks)} file(s) in {loc.root})")
        for c in wrong:
            typer.echo(f"  {c.status}: {c.detail or c.path}")
    if bad:
        raise typer.Exit(1)


@data_app.command("lock")
def data_lock(ctx: typer.Context, names: list[str] = _NAMES, cache_dir: Path = _CACHE, lock: Path = _LOCK) -> None:
    """Resolve every branch (main) to a commit and write the lock file later pulls and runs follow."""
    from glotbench.sources.lock import Lock, lock_path
    from glotbench.sources.pull import lock_origins, offline

    cache_dir, lock = _group(ctx, cache_dir, lock)
    _setup(cache_dir)  # the pulls' manifests there give the sizes and hashes of unpinned files

    if offline():
        from glotbench.errors import DataError

        raise DataError("offline (HF_HUB_OFFLINE or GLOTBENCH_OFFLINE is set): cannot resolve revisions")
    lk = Lock.load(lock) if lock_path(lock).is_file() else Lock(lock_path(lock))
    lock_origins([t.spec for t in _tasks(names)], lk, say=typer.echo)
    lk.save()
    typer.echo(f"wrote {lk.path} ({len(lk.origins)} origin(s))")
