"""Sharded runs on a real local Ray cluster (``ray.init(num_cpus=2)``, one for the module): a
3-task run in 4 shards against the stub server and against the embedded model, with one shard's
Ray worker SIGKILLed mid-run (a fault injected on purpose: GLOTBENCH_TEST_KILL_SHARD). Ray
retries the shard; every item is scored exactly once, no request reaches the server twice, and
the merged results equal an unsharded run of the same items."""

from __future__ import annotations

import pytest
from sharding_helpers import (TASKS, assert_same_results, bodies_per_key, glotbench, journal_digest, journal_items,
                              results, stub_log)

ray = pytest.importorskip("ray", reason="Ray is not installed: pip install 'glotbench[ray]'")


@pytest.fixture(scope="module")
def ray_address():
    ctx = ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield ctx.address_info["gcs_address"]
    finally:
        ray.shutdown()


def _check_sharded_run(run, n_items, kill_shard):
    assert (run / f"shards/{kill_shard}/killed-once").is_file(), "the injected SIGKILL did not happen"
    scored = journal_items(run)
    assert len(scored) == n_items and set(scored.values()) == {1}
    sessions = results(run)["run"]["sessions"]
    assert sessions[-1]["shards"]["executor"] == "ray" and not sessions[-1]["shards"]["failed"]


def test_ray_stub_sigkill_resume_and_merge(ray_address, stub_server, data_root, tmp_path):
    base = stub_server("--answer", "A")
    common = ["-m", "openai:stub", "--base-url", base, "-t", TASKS, "-n", "8", "--concurrency", "1", "--no-progress"]
    sharded = tmp_path / "sharded"
    ray_cmd = ["--shards", "4", "--executor", "ray", "--ray-address", ray_address, "-o", str(sharded)]
    done = glotbench("run", *common, *ray_cmd, env={"GLOTBENCH_TEST_KILL_SHARD": "2:2"})
    assert done.returncode == 0, done.stderr
    _check_sharded_run(sharded, 24, kill_shard=2)
    log = stub_log(base)
    assert len(log) == 24 and set(bodies_per_key(log).values()) == {1}, "a request was sent twice"

    again = glotbench("run", *common, *ray_cmd)  # the same command: every shard resumes, nothing is sent
    assert again.returncode == 0, again.stderr
    assert len(stub_log(base)) == 24

    before = journal_digest(sharded / "journal.sqlite")
    for _ in range(2):
        merged = glotbench("runs", "merge", str(sharded))
        assert merged.returncode == 0 and "0 new response(s), 0 item record(s)" in merged.stdout, merged.stdout
    assert journal_digest(sharded / "journal.sqlite") == before

    plain = tmp_path / "plain"
    assert glotbench("run", *common, "-o", str(plain)).returncode == 0
    assert_same_results(sharded, plain)


def test_ray_embedded_model_sigkill_matches_unsharded(ray_address, smollm2_path, data_root, tmp_path):
    common = ["-m", "embedded", "-t", TASKS, "-n", "3", "--no-progress"]
    sharded = tmp_path / "sharded"
    done = glotbench("run", *common, "--shards", "4", "--executor", "ray", "--ray-address", ray_address,
                     "-o", str(sharded), env={"GLOTBENCH_TEST_KILL_SHARD": "1:1"}, timeout=600)
    assert done.returncode == 0, done.stderr
    _check_sharded_run(sharded, 9, kill_shard=1)
    plain = tmp_path / "plain"
    done = glotbench("run", *common, "-o", str(plain), timeout=600)
    assert done.returncode == 0, done.stderr
    assert_same_results(sharded, plain)
    # as many requests as the unsharded run, the killed attempt's committed answer counted once
    assert results(sharded)["run"]["requests_sent"] == results(plain)["run"]["requests_sent"] == 9


def test_python_api_uses_the_cluster_this_process_joined(ray_address, stub_server, data_root, tmp_path, monkeypatch):
    import glotbench

    monkeypatch.setenv("OPENAI_API_KEY", "x")
    base = stub_server("--answer", "B")
    res = glotbench.evaluate(model="openai:stub", base_url=base, tasks=["mm_eval.syntax"], limit=6, shards=2,
                             executor="ray", output=str(tmp_path / "r"))
    assert res.tasks["mm_eval.syntax"].n_scored == 6
    assert ray.is_initialized()  # the module's cluster, still up: the run did not shut it down
    shards = res.results["run"]["sessions"][-1]["shards"]
    assert shards["executor"] == "ray" and sum(r["items"] for r in shards["results"].values()) == 6
    assert len(stub_log(base)) == 6
