"""Re-reporting a finished run from its stored summary when nothing changed.

Re-running the command of a finished run answers every item from the journal; rebuilding the
report that way re-reads the data, renders every prompt and re-scores every record (24 s and
3.4 GB at 100k items before this module). A finished run instead leaves a *stamp* in its journal's
meta table: the settings, each task's fingerprint, a digest of results.json and samples.jsonl, and
the journal's sample and judgment rows (count, highest rowid, sum of write times: any added,
replaced or deleted row changes one of them). When a later run finds the same settings, the same
task fingerprints (data file content, prompt, scoring, model settings), an untouched journal and
the same files, and no row changed in place (the journal's edit count, ``Journal.edit_count``: else
every row is checksummed), the per-task results are read back from results.json instead of recomputed; they
are what recomputing would give, because summarising is a function of exactly those inputs.
Anything else (another setting, an edited data file, a rejudged item, a merged shard, a deleted
samples.jsonl) takes the full path. See docs/performance.md.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from glotbench.engine.fingerprint import fingerprint_once
from glotbench.engine.journal import Journal

STAMP_KEY = "summary_stamp"
STAMP_VERSION = 1


def journal_state(journal: Journal) -> list[list[Any]]:
    """(rows, highest rowid, sum of write times) of the samples and judgments tables."""
    return [list(journal.conn.execute(f"SELECT COUNT(*), MAX(rowid), TOTAL(created) FROM {table}").fetchone())
            for table in ("samples", "judgments")]


def responses_state(journal: Journal) -> list[Any]:
    """(rows, highest rowid) of the responses table: a row added from outside changes one of them."""
    return list(journal.conn.execute("SELECT COUNT(*), MAX(rowid) FROM responses").fetchone())


def _file_id(path: Path) -> list[int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns]


def _config_digest(config: dict) -> str:
    """Every setting but the free-text note and the model's description (``--model-meta``: shown in
    results.json, never used to compute; a re-report writes the new one), and glotbench's full
    version (a fixed metric in a new release is recomputed)."""
    from glotbench.version import __version__

    kept = {k: v for k, v in config.items() if k not in ("note", "model_meta", "model_meta_file")} | {"__glotbench__": __version__}
    return hashlib.sha256(json.dumps(kept, sort_keys=True, default=str).encode()).hexdigest()


def write_stamp(journal: Journal, out_dir: Path, config: dict, runs: list, task_results: dict[str, dict]) -> None:
    """Record that ``task_results`` (just written to results.json) cover every item of ``runs``."""
    complete = all(t.get("n_scored") == t.get("n_items") and not t.get("n_errors") for t in task_results.values())
    if not complete:
        journal.set_meta(STAMP_KEY, None)
        return
    journal.set_meta(STAMP_KEY, {
        "version": STAMP_VERSION,
        "config": _config_digest(config),
        "tasks": [[tr.task.name, tr.fingerprint["id"], tr.n_items,
                   list(dict.fromkeys(getattr(tr.task, "load_warnings", [])))] for tr in runs],
        "journal": journal_state(journal),
        "responses": responses_state(journal),
        "edits": journal.edit_count(),
        "results": _file_id(out_dir / "results.json"),
        "samples": _file_id(out_dir / "samples.jsonl"),
    })


def restamp_results(journal: Journal, out_dir: Path) -> None:
    """results.json was rewritten (a re-report adds its session): the stamp follows the new file."""
    stamp = journal.get_meta(STAMP_KEY)
    if isinstance(stamp, dict):
        journal.set_meta(STAMP_KEY, {**stamp, "results": _file_id(out_dir / "results.json")})


def stored_task_results(journal: Journal, out_dir: Path, config: dict, tasks: list, settings: Any,
                        model_settings: dict) -> tuple[dict[str, dict], list[tuple[str, int, list[str]]]] | None:
    """The per-task results of the finished run in ``out_dir`` if nothing they depend on changed,
    with each task's (name, item count, load warnings); None when they must be recomputed."""
    stamp = journal.get_meta(STAMP_KEY)
    if not isinstance(stamp, dict) or stamp.get("version") != STAMP_VERSION:
        return None
    if stamp.get("config") != _config_digest(config):
        return None
    if [t[0] for t in stamp["tasks"]] != [t.name for t in tasks]:
        return None
    if stamp.get("results") != _file_id(out_dir / "results.json") or stamp.get("samples") != _file_id(out_dir / "samples.jsonl"):
        return None
    fingerprints = {}
    for task, (_, fp_id, _, _) in zip(tasks, stamp["tasks"]):
        fp = fingerprint_once(task, settings, model_settings)
        if fp["id"] != fp_id:
            return None
        fingerprints[task.name] = fp
    if stamp.get("journal") != journal_state(journal):
        return None
    untouched = stamp.get("edits") == 0 == journal.edit_count() and stamp.get("responses") == responses_state(journal)
    if not untouched and journal.has_damaged_rows():  # a row edited in place or unreadable: redone (issue 48)
        return None
    try:
        stored = json.loads((out_dir / "results.json").read_text(encoding="utf-8")).get("tasks") or {}
    except (OSError, ValueError):
        return None
    if any((stored.get(name) or {}).get("fingerprint") != fp for name, fp in fingerprints.items()):
        return None
    return {name: stored[name] for name in fingerprints}, [(t[0], t[2], t[3]) for t in stamp["tasks"]]


def can_reuse(out_dir: Path, journal_name: str, config: dict, tasks: list, settings: Any, model_settings: dict) -> bool:
    """Before any item is read: would :func:`stored_task_results` reuse the finished run in
    ``out_dir``? Reads the journal's stamp, results.json and the task fingerprints only (the data
    files' hashes, the spec, the code), never an item. The run checks again under its lock."""
    path = out_dir / journal_name
    if not path.is_file():
        return False
    try:
        journal = Journal(path)
    except Exception:  # noqa: BLE001 - a journal that cannot be opened is reported by the full path
        return False
    try:
        return stored_task_results(journal, out_dir, config, tasks, settings, model_settings) is not None
    except Exception:  # noqa: BLE001 - anything odd (a task whose fingerprint fails): the full path decides
        return False
    finally:
        journal.close()
