"""bench/duties.py: each per-item duty bench/duties_floor.py switches off names a function glotbench
still has, and a run through the launcher with every duty off really skips them (no samples file, no
response rows, NULL checksums, no intervals, no latencies; the commits are not visible after the run) while scoring the same items; with none off it is the CLI."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from test_recorded_grades import grade_file, grades_for, simpleqa_task

ROOT = Path(__file__).resolve().parents[1]
LAUNCHER = ROOT / "bench" / "duties.py"
sys.path.insert(0, str(ROOT / "bench"))

import duties as D  # noqa: E402


@pytest.mark.parametrize("duty", list(D.PATCHES))
def test_every_patched_duty_names_a_function_glotbench_has(duty):
    owner, name = D.target(duty)
    assert callable(getattr(owner, name))


def test_unknown_duties_are_refused_and_all_means_every_one():
    assert D.parse("all") == list(D.DUTIES)
    assert D.parse(" samples, sums ,") == ["samples", "sums"]
    assert D.parse("") == []
    with pytest.raises(SystemExit, match="unknown duty 'checksums'"):
        D.strip(["checksums"])


def _run(tmp_path: Path, duties: str, out: Path) -> dict:
    task = simpleqa_task(tmp_path, n=12)
    release = grade_file(tmp_path, 1, grades_for(1, n=12))
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run([sys.executable, str(LAUNCHER), duties, "--", "run", "--model", f"recorded:{release}",
                           "-M", "question=question", "-M", "grade=grade", "--tasks", str(task), "--no-progress",
                           "-o", str(out)], env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads((out / "results.json").read_text(encoding="utf-8"))["tasks"]["simpleqa"]


def test_every_duty_off_is_skipped_and_the_scores_stay(tmp_path):
    full = _run(tmp_path, "", tmp_path / "full")
    stripped = _run(tmp_path, "all", tmp_path / "stripped")
    assert stripped["n_scored"] == full["n_scored"] == 12
    assert {k: v["value"] for k, v in stripped["metrics"].items()} == {k: v["value"] for k, v in full["metrics"].items()}
    assert (tmp_path / "full" / "samples.jsonl").exists()
    assert not (tmp_path / "stripped" / "samples.jsonl").exists()  # samples
    assert full["metrics"]["factuality_f"]["ci95"] is not None
    assert stripped["metrics"]["factuality_f"]["ci95"] == [None, None]  # bootstrap
    assert full["latency"]["n_timed"] == 12 and stripped["latency"]["n_timed"] == 0  # latency
    with sqlite3.connect(tmp_path / "full" / "journal.sqlite") as con:
        assert con.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 12
        assert con.execute("SELECT COUNT(*) FROM samples WHERE sum IS NULL").fetchone()[0] == 0
    with sqlite3.connect(tmp_path / "stripped" / "journal.sqlite") as con:
        assert con.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 0  # responses
        assert con.execute("SELECT COUNT(*) FROM samples WHERE sum IS NULL").fetchone()[0] == 12  # sums


def test_commits_off_leaves_the_rows_queued_until_the_last_flush(tmp_path, monkeypatch):
    import asyncio

    from glotbench.engine.journal import Journal

    owner, name = D.target("commits")
    monkeypatch.setattr(owner, name, D.PATCHES["commits"][2])
    journal = Journal(tmp_path / "j.sqlite")

    def on_disk() -> int:
        with sqlite3.connect(tmp_path / "j.sqlite") as con:
            return con.execute("SELECT COUNT(*) FROM meta WHERE key = 'probe'").fetchone()[0]

    async def go() -> int:
        journal.set_meta("probe", 1)
        await journal.committed()  # the iteration's commit would have run here
        await asyncio.sleep(0)
        return on_disk()

    assert asyncio.run(go()) == 0 and journal.pending == 1
    journal.flush()
    assert on_disk() == 1
    journal.close()
