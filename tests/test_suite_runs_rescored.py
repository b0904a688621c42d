"""A refactor changes no number: each committed fixture run (tests/fixtures/suite_runs/, one per
seed suite, made by tests/make_suite_runs.py before benchmarks became packages) is run again from a
copy of its journal. Nothing is sent to the model or the judge, and every number of the fresh
results.json equals the committed one (the same counts, values, intervals and flags)."""

from __future__ import annotations

import json
import math
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from make_suite_runs import JUDGE_PORT, OUT, SUITES, command

REPO = Path(__file__).resolve().parents[1]
# run-specific, not scores: where and when it ran, how long it took, which process wrote it
VOLATILE = {"created", "started", "finished", "duration_s", "elapsed_s", "wall_s", "output_dir", "run_dir", "path",
            "paths", "host", "pid", "glotbench_version", "python", "platform", "command", "latency_s",
            "mean_latency_s", "p50_latency_s", "p95_latency_s", "tokens_per_s", "requests_per_s", "throughput",
            "judge_base_url", "base_url", "timing", "timings", "machine"}


def numbers(obj, path: str = "") -> dict[str, object]:
    """Every number, bool and fingerprint-like string of a results.json, by its path."""
    out: dict[str, object] = {}
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k in VOLATILE:
                continue
            out.update(numbers(v, f"{path}/{k}"))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out.update(numbers(v, f"{path}[{i}]"))
    elif isinstance(obj, (bool, int, float)) or obj is None:
        out[path] = obj
    return out


def _equal(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, rel=1e-12, abs=1e-12)
    return a == b


@pytest.mark.slow
@pytest.mark.parametrize("suite", list(SUITES))
def test_a_committed_suite_run_rescored_from_its_journal_has_the_same_numbers(suite, tmp_path, data_root, smollm2_path,
                                                                              request):
    src = OUT / suite
    if not (src / "results.json").is_file():
        pytest.skip(f"{src} has no committed run (python tests/make_suite_runs.py writes it)")
    run = tmp_path / suite
    shutil.copytree(src, run)
    for name in ("results.json", "samples.jsonl"):
        (run / name).unlink(missing_ok=True)
    def responses() -> int:
        con = sqlite3.connect(run / "journal.sqlite")
        try:
            return con.execute("select count(*) from responses").fetchone()[0]
        finally:
            con.close()

    before = responses()
    log = lambda: httpx.get(judge.removesuffix("/v1") + "/_log").json()["log"]  # noqa: E731
    from glotbench.testing.servers import start_stub, stop

    try:
        judge, proc = start_stub("--answer", "A", port=JUDGE_PORT)
    except Exception as err:  # noqa: BLE001
        pytest.fail(f"the stub judge could not listen on port {JUDGE_PORT} (the port the fixture runs were judged on): {err}")
    request.addfinalizer(lambda: stop(proc))
    asked = len(log())
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    done = subprocess.run(command(suite, run, judge), env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    sent = log()[asked:]
    assert sent == [], f"{len(sent)} judge request(s) sent: the journal should have answered them all"
    assert responses() == before, "the model was asked again: a request's key changed"
    # results.json's "run" block counts this process's requests (sent, cached, sessions): not scores
    committed = json.loads((src / "results.json").read_text(encoding="utf-8"))
    from glotbench.tasks.registry import canonical

    # a task renamed since (cs.klokanek -> czech_bench.klokanek, its old name an alias): the same numbers, new name
    committed["tasks"] = {canonical(k): v for k, v in committed["tasks"].items()}
    # a file of the previous results.json version (metric functions by import path) as this version writes it
    from glotbench.output.run_result import migrate

    committed = migrate(committed)
    old = numbers({k: v for k, v in committed.items() if k != "run"})
    new = numbers({k: v for k, v in json.loads((run / "results.json").read_text(encoding="utf-8")).items() if k != "run"})
    assert len(old) > 20
    # a setting added since the run was made sits in the fresh config at its default (off): not a number
    new = {k: v for k, v in new.items() if not (k.startswith("/config/") and k not in old and v in (False, None))}
    # blocks results.json gained since the run was made (per-class P/R/F1, latency from the journal's timings;
    # their values are checked in tests/test_aggregate_values.py): new numbers, not changed ones
    added = ("per_class", "latency")
    new = {k: v for k, v in new.items() if k in old or k.split("/")[3:4] not in [[a] for a in added]}
    diff = {k: (old.get(k), new.get(k)) for k in sorted(set(old) | set(new)) if not _equal(old.get(k), new.get(k))}
    assert not diff, f"{len(diff)} number(s) differ (committed, now): {dict(list(diff.items())[:12])}"


def test_a_run_written_before_the_move_is_compared_with_its_metric_functions_found(tmp_path):
    """The committed factuality run names its metric functions by their old modules
    (``glotbench.scoring.factuality:factuality_metric``, modules long gone); migrate() maps them to their
    kinds and compare --paired recomputes them. (A copy
    of the factuality fixture run as it was before the recorded-answers key changed: the fixture run
    itself was made again then.)"""
    src = OUT.parent / "old_runs" / "factuality_before_the_move"
    old = json.loads((src / "results.json").read_text(encoding="utf-8"))
    refs = {d.get("function") for t in old["tasks"].values() for d in (t.get("metric_definitions") or {}).values()
            if isinstance(d, dict)}
    a, b = tmp_path / "a", tmp_path / "b"
    shutil.copytree(src, a)
    shutil.copytree(src, b)
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    done = subprocess.run([sys.executable, "-m", "glotbench", "runs", "compare", "--paired", str(a), str(b)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "factuality_co" in done.stdout and "cannot import" not in done.stdout + done.stderr
    if refs:
        assert any(r and r.startswith("glotbench.scoring.factuality:") for r in refs)
