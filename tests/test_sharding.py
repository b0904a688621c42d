"""Sharded runs without Ray: the stable split, the idempotent merge, the local executor with a
shard worker SIGKILLed mid-run, `glotbench merge`, and the one-line refusal when an extra is
missing. The Ray and Slurm paths: tests/test_sharding_ray.py, tests/test_sharding_slurm.py."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time

from sharding_helpers import (TASKS, assert_same_results, bodies_per_key, glotbench, journal_digest, journal_items,
                              results, stub_log)

from glotbench.engine.journal import Journal
from glotbench.engine.shards.assign import shard_of, split_items
from glotbench.engine.shards.merge import merge_shards


def test_split_is_stable_across_processes():
    ids = [("mm_eval.syntax", str(i)) for i in range(200)] + [("hulu.cola", f"id-{i}") for i in range(200)]
    here = [shard_of(t, s, 4) for t, s in ids]
    code = ("import json,sys;from glotbench.engine.shards.assign import shard_of;"
            "print(json.dumps([shard_of(t, s, 4) for t, s in json.load(sys.stdin)]))")
    for seed in ("0", "12345"):  # Python's hash() would differ between these
        out = subprocess.run([sys.executable, "-c", code], input=json.dumps(ids), capture_output=True, text=True,
                             env={**os.environ, "PYTHONHASHSEED": seed}, check=True)
        assert json.loads(out.stdout) == here
    assert set(here) == {0, 1, 2, 3}
    parts = split_items(ids, 4)
    assert sorted((t, s) for p in parts for t, ss in p.items() for s in ss) == sorted(ids)


def _fill(path, items, status="scored", t0=1000.0):
    j = Journal(path)
    for n, (task, sid) in enumerate(items):
        key = f"k-{task}-{sid}"
        j.put_response(key, role="model", kind="generate", model_id="m", request={"p": sid}, response={"text": "A"},
                       latency_s=0.1)
        j.put_sample("run", task, sid, n, status, {"pred": "A", "status": status})
        j.conn.execute("UPDATE samples SET created=? WHERE sample_id=?", (t0 + n, sid))
    j.put_error("k-err", role="model", task="t", sample_id="x", error="boom", attempts=3)
    j.close()


def test_merge_is_idempotent_and_prefers_scores(tmp_path):
    a, b = tmp_path / "shards/0/journal.sqlite", tmp_path / "shards/1/journal.sqlite"
    a.parent.mkdir(parents=True)
    b.parent.mkdir(parents=True)
    _fill(a, [("t", str(i)) for i in range(50)])
    _fill(b, [("t", str(i)) for i in range(50, 80)])
    main = Journal(tmp_path / "journal.sqlite")
    main.put_sample("run", "t", "3", 3, "error", {"status": "error", "error": "x"})  # an earlier session's error
    first = merge_shards(main, [a, b])
    assert (first.responses, first.samples, first.errors) == (80, 80, 2)
    digest = journal_digest(tmp_path / "journal.sqlite")
    again = merge_shards(main, [a, b, a])
    assert again.changed() == 0
    assert journal_digest(tmp_path / "journal.sqlite") == digest
    assert len(main.scored_ids("run", "t")) == 80
    main.close()


def test_local_executor_sigkilled_shard_resumes_and_matches_unsharded(stub_server, data_root, tmp_path):
    base = stub_server("--answer", "A")
    common = ["-m", "openai:stub", "--base-url", base, "-t", TASKS, "-n", "6", "--concurrency", "1", "--no-progress"]
    sharded = tmp_path / "sharded"
    done = glotbench("run", *common, "--shards", "4", "--executor", "local", "-o", str(sharded),
                     env={"GLOTBENCH_TEST_KILL_SHARD": "0:2"})
    assert done.returncode == 0, done.stderr
    assert (sharded / "shards/0/killed-once").is_file(), "the injected kill did not happen"
    assert "shard 0 failed (exit code -9" in done.stderr
    log = stub_log(base)
    assert len(log) == 18 and set(bodies_per_key(log).values()) == {1}, "a request was sent twice"
    assert set(journal_items(sharded).values()) == {1} and len(journal_items(sharded)) == 18
    assert all(t["n_scored"] == 6 for t in results(sharded)["tasks"].values())
    assert results(sharded)["run"]["requests_sent"] == 18

    again = glotbench("run", *common, "--shards", "4", "-o", str(sharded))
    assert again.returncode == 0, again.stderr
    assert len(stub_log(base)) == 18, "the rerun sent requests"

    before = journal_digest(sharded / "journal.sqlite")
    merged = glotbench("runs", "merge", str(sharded))
    assert merged.returncode == 0, merged.stderr
    assert "0 new response(s), 0 item record(s)" in merged.stdout
    assert journal_digest(sharded / "journal.sqlite") == before

    plain = tmp_path / "plain"
    done = glotbench("run", *common, "-o", str(plain))
    assert done.returncode == 0, done.stderr
    assert_same_results(sharded, plain)


def test_failed_shard_then_other_shard_count_sends_nothing_twice(stub_server, data_root, tmp_path):
    """Shard 0 dies after its 3rd answer (committed, its item not yet recorded) with no retries
    left: the run stops, naming the shard. Rerun with 3 shards instead of 2: the items land in
    other shards, which read the merged answers through, so no request is sent twice."""
    base = stub_server("--answer", "B")
    common = ["-m", "openai:stub", "--base-url", base, "-t", "mm_eval.semantics", "-n", "12", "--no-progress",
              "--concurrency", "1", "-o", str(tmp_path / "run")]
    first = glotbench("run", *common, "--shards", "2", "--shard-retries", "0", env={"GLOTBENCH_TEST_KILL_SHARD": "0:3"})
    assert first.returncode == 2 and "shard 0 failed after 0 retries" in first.stderr, first.stderr
    assert results(tmp_path / "run")["tasks"]["mm_eval.semantics"]["status"] == "incomplete"
    n_first = len(stub_log(base))
    assert 3 <= n_first < 12
    done = glotbench("run", *common, "--shards", "3")
    assert done.returncode == 0, done.stderr
    log = stub_log(base)
    assert len(log) == 12 and set(bodies_per_key(log).values()) == {1}
    assert results(tmp_path / "run")["tasks"]["mm_eval.semantics"]["n_scored"] == 12


def test_missing_extra_is_one_line_before_any_call(stub_server, tmp_path):
    base = stub_server()
    fake = tmp_path / "fake"
    fake.mkdir()
    for mod in ("ray", "submitit"):  # injected fault: the package cannot be imported
        (fake / f"{mod}.py").write_text("raise ImportError('not installed (test)')\n")
    env = {"PYTHONPATH": os.pathsep.join([str(fake), os.environ.get("PYTHONPATH", "")])}
    for executor, extra in (("ray", "ray"), ("slurm", "slurm")):
        t0 = time.time()
        done = glotbench("run", "-m", "openai:stub", "--base-url", base, "-t", "mm_eval.semantics", "-n", "2",
                         "--shards", "2", "--executor", executor, "-o", str(tmp_path / executor), env=env)
        assert done.returncode == 2, done.stderr
        lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
        assert len(lines) == 1 and f"pip install 'glotbench[{extra}]'" in lines[0], done.stderr
        assert time.time() - t0 < 60
    assert stub_log(base) == []
    assert not (tmp_path / "ray" / "journal.sqlite").exists()


def test_python_api_sharded_equals_unsharded(stub_server, data_root, tmp_path, monkeypatch):
    import glotbench

    monkeypatch.setenv("OPENAI_API_KEY", "x")
    base = stub_server("--answer", "C")
    kw = dict(model="openai:stub", tasks=["mm_eval.syntax"], limit=6, base_url=base)
    sharded = glotbench.evaluate(**kw, shards=2, executor="local", output=str(tmp_path / "s"))
    assert len(stub_log(base)) == 6
    plain = glotbench.evaluate(**kw, output=str(tmp_path / "p"))
    assert sharded.fingerprint == plain.fingerprint
    assert sharded.tasks["mm_eval.syntax"].metrics == plain.tasks["mm_eval.syntax"].metrics
    assert sharded.tasks["mm_eval.syntax"].n_scored == 6
    assert sorted((s.id, s.pred) for s in sharded.samples) == sorted((s.id, s.pred) for s in plain.samples)


def test_ignored_sharding_options_and_empty_merge_are_one_line(tmp_path):
    cases = [(["--executor", "ray"], "--executor ray applies to sharded runs: add --shards N"),
             (["--ray-address", "auto"], "--ray-address applies to sharded runs"),
             (["--shards", "2", "--ray-args", "num_gpus=1"], "--ray-args given with --executor local"),
             (["--shards", "2", "--executor", "ray", "--slurm-args", "x=1"], "--slurm-args given with --executor ray")]
    for extra, message in cases:
        done = glotbench("run", "-m", "openai:stub", "--base-url", "http://127.0.0.1:9/v1", "-t", "mm_eval.syntax",
                         "-n", "1", "-o", str(tmp_path / "r"), *extra)
        assert done.returncode == 2 and message in done.stderr, (extra, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "r").exists()
    done = glotbench("runs", "merge", str(tmp_path))
    assert done.returncode == 2 and "no shard journals" in done.stderr
