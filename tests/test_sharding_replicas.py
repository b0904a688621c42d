"""`--base-url` with several URLs: replicas of one model server. Requests spread over both stub
servers; with one replica killed (before the run, and mid-run) the run still finishes through the
other; the model's identity (and so the run's fingerprint) leaves the URL list out."""

from __future__ import annotations

import re
import threading
import time

from sharding_helpers import bodies_per_key, glotbench, results, stub_log

from glotbench.settings import RunSettings
from glotbench.testing.servers import stop

COMMON = ["-m", "openai:stub", "-t", "mm_eval.semantics", "-n", "40", "--no-progress", "--retry-base-delay", "0.05"]


def test_requests_spread_over_two_replicas(stub_server, data_root, tmp_path):
    a, b = stub_server(), stub_server()
    done = glotbench("run", *COMMON, "--base-url", a, "--base-url", b, "-o", str(tmp_path / "r"))
    assert done.returncode == 0, done.stderr
    la, lb = stub_log(a), stub_log(b)
    assert la and lb and len(la) + len(lb) == 40
    assert set((bodies_per_key(la) + bodies_per_key(lb)).values()) == {1}
    res = results(tmp_path / "r")
    assert res["tasks"]["mm_eval.semantics"]["n_scored"] == 40
    assert "requests spread over 2 replicas" in res["model_notes"][0]
    # the same replicas in another order, comma-separated: the same model identity and fingerprint
    again = glotbench("run", *COMMON, "--base-url", f"{b},{a}", "-o", str(tmp_path / "r2"))
    assert again.returncode == 0, again.stderr
    assert results(tmp_path / "r2")["fingerprint"] == res["fingerprint"]
    assert results(tmp_path / "r2")["model"] == res["model"]


def test_dead_replica_before_the_run(stub_server, data_root, tmp_path):
    from glotbench.testing.servers import free_port

    a = stub_server()
    dead = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    done = glotbench("run", *COMMON, "--base-url", f"{dead},{a}", "-o", str(tmp_path / "r"))
    assert done.returncode == 0, done.stderr
    assert len(stub_log(a)) == 40
    assert results(tmp_path / "r")["tasks"]["mm_eval.semantics"]["n_scored"] == 40


def test_replica_killed_mid_run(data_root, tmp_path):
    from glotbench.testing.servers import start_stub

    a, pa = start_stub("--delay", "0.1")
    b, pb = start_stub("--delay", "0.1")
    seen_by_b: list[int] = []

    def kill_b_once_both_answer() -> None:
        deadline = time.time() + 120
        while time.time() < deadline:
            if len(stub_log(a)) >= 4 and len(stub_log(b)) >= 4:
                seen_by_b.append(len(stub_log(b)))
                stop(pb)
                return
            time.sleep(0.05)

    try:
        killer = threading.Thread(target=kill_b_once_both_answer)
        killer.start()
        done = glotbench("run", *COMMON, "--concurrency", "2", "--base-url", f"{a},{b}", "-o", str(tmp_path / "r"))
        killer.join()
        assert done.returncode == 0, done.stderr
        assert seen_by_b and pb.poll() is not None, "replica b was not killed mid-run"
        res = results(tmp_path / "r")
        assert res["tasks"]["mm_eval.semantics"]["n_scored"] == 40
        assert res["tasks"]["mm_eval.semantics"]["n_errors"] == 0
        # the client's own count per replica: b answered some before it died, then was unreachable; a took the rest
        note = res["model_notes"][0]
        got = {u: (int(n), int(m)) for u, n, m in re.findall(r"(http://\S+) \((\d+) answered, (\d+) unreachable\)", note)}
        assert got[a][0] + got[b][0] == 40 and got[b][0] >= 4 and got[b][1] >= 1, note
        assert len(stub_log(a)) == got[a][0]
    finally:
        stop(pa)
        stop(pb)


def test_base_url_setting_forms():
    assert RunSettings(base_url="http://a/v1").base_url == "http://a/v1"
    s = RunSettings(base_url=["http://a/v1", "http://b/v1, http://c/v1"])
    assert s.base_urls == ["http://a/v1", "http://b/v1", "http://c/v1"]


def test_shards_spread_over_replicas(stub_server, data_root, tmp_path):
    a, b = stub_server(), stub_server()
    done = glotbench("run", *COMMON, "--shards", "2", "--base-url", f"{a},{b}", "-o", str(tmp_path / "r"))
    assert done.returncode == 0, done.stderr
    la, lb = stub_log(a), stub_log(b)
    assert la and lb and len(la) + len(lb) == 40
    notes = results(tmp_path / "r")["model_notes"]
    assert len(notes) == 2 and all("requests spread over 2 replicas" in n for n in notes)
