"""`--executor slurm`: the shards go out as one job array through submitit (here its
LocalExecutor, ``--slurm-args cluster=local``); a job SIGKILLed mid-run (an injected fault) is
resubmitted and resumes from its journal; the merged run equals an unsharded one."""

from __future__ import annotations

import pytest
from sharding_helpers import TASKS, assert_same_results, bodies_per_key, glotbench, journal_items, results, stub_log

pytest.importorskip("submitit", reason="submitit is not installed: pip install 'glotbench[slurm]'")


def test_slurm_array_through_submitit_local(stub_server, data_root, tmp_path):
    base = stub_server("--answer", "A")
    common = ["-m", "openai:stub", "--base-url", base, "-t", TASKS, "-n", "5", "--concurrency", "1", "--no-progress"]
    sharded = tmp_path / "sharded"
    done = glotbench("run", *common, "--shards", "4", "--executor", "slurm", "--slurm-args", "cluster=local",
                     "--slurm-args", "timeout_min=10", "-o", str(sharded), env={"GLOTBENCH_TEST_KILL_SHARD": "3:1"})
    assert done.returncode == 0, done.stderr
    assert "submitted 4 shard(s) as job array" in done.stderr
    assert (sharded / "shards/3/killed-once").is_file() and "submitting them again" in done.stderr
    assert (sharded / "shards/submitit").is_dir()
    scored = journal_items(sharded)
    assert len(scored) == 15 and set(scored.values()) == {1}
    log = stub_log(base)
    assert len(log) == 15 and set(bodies_per_key(log).values()) == {1}
    assert results(sharded)["run"]["sessions"][-1]["shards"]["executor"] == "slurm"

    plain = tmp_path / "plain"
    assert glotbench("run", *common, "-o", str(plain)).returncode == 0
    assert_same_results(sharded, plain)


def test_slurm_without_sbatch_is_one_line(stub_server, tmp_path, monkeypatch):
    base = stub_server()
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no sbatch here
    done = glotbench("run", "-m", "openai:stub", "--base-url", base, "-t", "mm_eval.semantics", "-n", "2",
                     "--shards", "2", "--executor", "slurm", "-o", str(tmp_path / "r"))
    assert done.returncode == 2
    assert "sbatch is not on PATH" in done.stderr and "cluster=local" in done.stderr
    assert stub_log(base) == [] and not (tmp_path / "r").exists()
