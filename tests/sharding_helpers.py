"""Shared steps of the sharding tests: run glotbench in a fresh process, read a run back, compare
a sharded run with an unsharded one."""

from __future__ import annotations

import collections
import hashlib
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import httpx

TASKS = "mm_eval.semantics,mm_eval.knowledge,mm_eval.syntax"


def glotbench(*args: str, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    full_env = {**os.environ, "OPENAI_API_KEY": "x", **(env or {})}
    return subprocess.run([sys.executable, "-m", "glotbench", *args], env=full_env, capture_output=True, text=True,
                          timeout=timeout)


def stub_log(base: str) -> list[dict]:
    return httpx.get(base.replace("/v1", "/_log"), timeout=10).json()["log"]


def bodies_per_key(log: list[dict]) -> collections.Counter:
    return collections.Counter(e["hash"] for e in log)


def results(run: Path) -> dict:
    return json.loads((run / "results.json").read_text(encoding="utf-8"))


def predictions(run: Path) -> dict:
    out = {}
    for line in (run / "samples.jsonl").read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        key = (rec["task"], rec["sample_id"])
        assert key not in out, f"{key} exported twice"
        out[key] = (rec["status"], rec.get("pred"), rec.get("extracted"), rec.get("values"))
    return out


def journal_items(run: Path) -> collections.Counter:
    con = sqlite3.connect(run / "journal.sqlite")
    try:
        return collections.Counter((t, s) for t, s, st in con.execute("SELECT task, sample_id, status FROM samples")
                                   if st == "scored")
    finally:
        con.close()


def journal_digest(path: Path) -> str:
    """A hash of every row of the journal's data tables (meta left out)."""
    con = sqlite3.connect(path)
    h = hashlib.sha256()
    try:
        for table, order in (("responses", "key"), ("samples", "run_key, task, sample_id"),
                             ("judgments", "judge_id, task, sample_id, sample_index"), ("errors", "id")):
            for row in con.execute(f"SELECT * FROM {table} ORDER BY {order}"):
                h.update(repr(row).encode())
    finally:
        con.close()
    return h.hexdigest()


def assert_same_results(sharded: Path, plain: Path) -> None:
    """Metrics with their intervals, item counts, fingerprints and every prediction agree."""
    a, b = results(sharded), results(plain)
    assert a["fingerprint"] == b["fingerprint"]
    assert a["tasks"].keys() == b["tasks"].keys()
    for name in a["tasks"]:
        ta, tb = a["tasks"][name], b["tasks"][name]
        for k in ("metrics", "slices", "n_items", "n_scored", "n_errors", "n_unparseable", "status", "fingerprint"):
            assert ta[k] == tb[k], (name, k, ta[k], tb[k])
    assert predictions(sharded) == predictions(plain)
