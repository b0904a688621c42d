"""Faults injected on purpose (HTTP 500, 429, stalls) against a local stub server: retries happen,
failed items are counted as errors, and no fault is ever scored as a wrong answer."""

from __future__ import annotations

import json
from collections import defaultdict

import httpx

from glotbench.engine.config import RunConfig
from glotbench.engine.journal import Journal
from glotbench.engine.session import run_evaluation


def test_faults_are_retried_and_accounted(stub_server, data_root, tmp_path):
    base = stub_server("--fault-rate", "0.45", "--stall", "3", "--answer", "A")
    cfg = RunConfig(model="openai:stub", base_url=base, tasks=["mm_eval.knowledge"], limit=40, concurrency=8,
                    timeout=1.0, max_retries=3, retry_base_delay=0.05, output=str(tmp_path / "run"), bootstrap=50)
    results, out = run_evaluation(cfg, show_progress=False)
    t = results["tasks"]["mm_eval.knowledge"]

    log = httpx.get(base.replace("/v1", "/_log")).json()["log"]
    by_hash = defaultdict(list)
    for e in log:
        by_hash[e["hash"]].append(e["status"])
    always_500 = [h for h, st in by_hash.items() if all(s == 500 for s in st)]
    rate_limited = [h for h, st in by_hash.items() if 429 in st]
    stalled = [h for h, st in by_hash.items() if "stall" in st]
    assert always_500 and rate_limited and stalled, "the fault mix should hit every kind at this rate"

    # 500 on every attempt: exactly max_retries + 1 tries, then an error item.
    assert all(len(by_hash[h]) == 4 for h in always_500)
    # 429 twice then success; a stall times out once then succeeds.
    assert all(by_hash[h][-1] == 200 and len(by_hash[h]) == 3 for h in rate_limited)
    assert all(by_hash[h][-1] == 200 and len(by_hash[h]) == 2 for h in stalled)

    assert t["n_errors"] == len(always_500)
    assert t["n_scored"] == 40 - len(always_500)
    assert results["run"]["retries"] >= 2 * len(rate_limited) + len(stalled)

    # Errors are not wrong answers: the stub always answers "A", so accuracy over scored items
    # is exactly the share of gold "A" among them.
    samples = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    scored = [s for s in samples if s["status"] == "scored"]
    errors = [s for s in samples if s["status"] == "error"]
    assert len(errors) == len(always_500) and all("500" in s["error"] or "server" in s["error"].lower() for s in errors)
    expected = sum(s["gold"] == "A" for s in scored) / len(scored)
    assert abs(t["metrics"]["accuracy"]["value"] - expected) < 1e-6  # results.json rounds to 6 places
    assert all(s["pred"] == "A" for s in scored)

    j = Journal(out / "journal.sqlite")
    try:
        errs = j.errors()
        assert len(errs) == len(always_500) and all(e["attempts"] == 4 for e in errs)
    finally:
        j.close()


def test_error_items_are_retried_on_resume(stub_server, data_root, tmp_path):
    """A rerun retries only the items that ended as errors, and sends nothing already answered."""
    base = stub_server("--fault-rate", "0.3", "--stall", "0.1", "--answer", "B")
    cfg = RunConfig(model="openai:stub", base_url=base, tasks=["mm_eval.semantics"], limit=20, concurrency=4,
                    timeout=5, max_retries=0, retry_base_delay=0.01, output=str(tmp_path / "run"), bootstrap=20)
    first, _ = run_evaluation(cfg, show_progress=False)
    n_log_1 = len(httpx.get(base.replace("/v1", "/_log")).json()["log"])
    second, _ = run_evaluation(cfg.model_copy(update={"max_retries": 2}), show_progress=False)
    log = httpx.get(base.replace("/v1", "/_log")).json()["log"]
    resent = log[n_log_1:]
    # only the previously failed requests are sent again (each up to 3 times now)
    assert len({e["hash"] for e in resent}) == first["tasks"]["mm_eval.semantics"]["n_errors"]
    this = second["run"]["sessions"][-1]  # the run block totals every session; this one is the rerun
    assert this["requests_sent"] + this["failed_requests"] == len({e["hash"] for e in resent})
    # items scored in the first run are kept, not redone; recovered ones are added
    assert second["tasks"]["mm_eval.semantics"]["n_scored"] > first["tasks"]["mm_eval.semantics"]["n_scored"]
    assert second["tasks"]["mm_eval.semantics"]["n_scored"] + second["tasks"]["mm_eval.semantics"]["n_errors"] == 20
