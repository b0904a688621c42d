"""Sharded vs unsharded runs on the stub server, and the merge time for 100k items.

(a) One run of 3 MM-Eval tasks (``--items`` per task) against glotbench's stub OpenAI-compatible
    server (``--delay`` seconds per answer: a model server's latency), unsharded and in 2 and 4
    shards on a local Ray cluster (``ray.init(num_cpus=4)``), interleaved over ``--rounds``
    rounds; every pass writes to a fresh run directory (nothing cached). Wall clock of the whole
    ``run_evaluation`` call: planning, Ray tasks (each shard a Ray worker with its own model
    client and journal), the merge and the aggregation. Prints items/s and the ratio to unsharded.
(b) Merge: 4 synthetic shard journals holding ``--merge-items`` items (one response and one item
    record each, sizes like an MM-Eval item's) merged into an empty run journal; then the same
    merge again (idempotent: nothing changes).

    python bench/shards.py [--items 150] [--delay 0.05] [--concurrency 4] [--rounds 2] [--merge-items 100000]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from glotbench.engine.config import RunConfig  # noqa: E402
from glotbench.engine.journal import Journal  # noqa: E402
from glotbench.engine.session import run_evaluation  # noqa: E402
from glotbench.engine.shards.merge import merge_shards  # noqa: E402
from glotbench.testing.servers import start_stub, stop  # noqa: E402

TASKS = ["mm_eval.semantics", "mm_eval.knowledge", "mm_eval.syntax"]


def one_pass(base: str, out: Path, items: int, concurrency: int, shards: int | None) -> float:
    extra = {"shards": shards, "executor": "ray"} if shards else {}
    cfg = RunConfig(model="openai:stub", base_url=base, tasks=TASKS, limit=items, concurrency=concurrency,
                    output=str(out), bootstrap=200, **extra)
    from rich.console import Console

    t0 = time.perf_counter()
    results, _ = run_evaluation(cfg, console=Console(stderr=True, quiet=True), show_progress=False)
    elapsed = time.perf_counter() - t0
    n = sum(t["n_scored"] for t in results["tasks"].values())
    assert n == sum(t["n_items"] for t in results["tasks"].values()), n  # every item scored (a task may hold fewer)
    return n / elapsed


def bench_runs(args) -> None:
    import ray

    os.environ.setdefault("OPENAI_API_KEY", "x")
    ray.init(num_cpus=4, include_dashboard=False, log_to_driver=False)
    base, proc = start_stub("--delay", str(args.delay))
    rates: dict[str, list[float]] = {"unsharded": [], "2 shards": [], "4 shards": []}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for r in range(args.rounds):
                for label, shards in (("unsharded", None), ("2 shards", 2), ("4 shards", 4)):
                    rate = one_pass(base, Path(tmp) / f"{label.replace(' ', '_')}_{r}", args.items, args.concurrency,
                                    shards)
                    rates[label].append(rate)
                    print(f"  round {r + 1}: {label:<10} {rate:7.1f} items/s", flush=True)
    finally:
        stop(proc)
        ray.shutdown()
    base_rate = statistics.median(rates["unsharded"])
    print(f"\n(a) {args.items} items per task (3 tasks), stub delay {args.delay}s, --concurrency {args.concurrency} per "
          f"process, median of {args.rounds} interleaved rounds, local Ray (num_cpus=4) on {os.cpu_count()} CPUs")
    for label, rs in rates.items():
        med = statistics.median(rs)
        print(f"    {label:<10} {med:7.1f} items/s   ratio to unsharded {med / base_rate:5.2f}")


def synthetic_shard(path: Path, start: int, n: int) -> None:
    j = Journal(path)
    request = {"messages": [{"role": "user", "content": "Асуулт: " + "x" * 400}], "max_tokens": 16, "temperature": 0.0}
    now = time.time()
    rows_r, rows_s = [], []
    for i in range(start, start + n):
        key = f"{i:064x}"
        rows_r.append((key, "model", "generate", "openai:stub@http://127.0.0.1/v1", json.dumps({**request, "id": i}),
                       json.dumps({"text": "A", "input_tokens": 120, "output_tokens": 1}), 0.01, now))
        rec = {"prompt": "x" * 300, "outputs": [{"text": "A"}], "pred": "A", "gold": "B", "values": {"accuracy": 0.0},
               "request_keys": [key], "status": "scored"}
        rows_s.append(("runkey", f"task{i % 3}", str(i), i, "scored", json.dumps(rec), now))
    with j.conn:
        j.conn.execute("BEGIN")
        # rows without a checksum (sum NULL), as a journal written before checksums has: accepted
        j.conn.executemany("INSERT INTO responses(key, role, kind, model_id, request, response, latency_s, created) "
                           "VALUES (?,?,?,?,?,?,?,?)", rows_r)
        j.conn.executemany("INSERT INTO samples(run_key, task, sample_id, idx, status, record, created) "
                           "VALUES (?,?,?,?,?,?,?)", rows_s)
        j.conn.execute("COMMIT")
    j.close()


def bench_merge(args) -> None:
    n, k = args.merge_items, 4
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp)
        sources = []
        for s in range(k):
            p = run / "shards" / str(s) / "journal.sqlite"
            p.parent.mkdir(parents=True)
            synthetic_shard(p, s * (n // k), n // k)
            sources.append(p)
        size = sum(p.stat().st_size for p in sources) / 1e6
        main = Journal(run / "journal.sqlite")
        t0 = time.perf_counter()
        first = merge_shards(main, sources)
        t1 = time.perf_counter()
        second = merge_shards(main, sources)
        t2 = time.perf_counter()
        main.close()
    print(f"\n(b) merge of {k} shard journals, {n} items ({size:.0f} MB): {t1 - t0:.2f} s "
          f"({first.responses} responses, {first.samples} item records added); "
          f"the same merge again: {t2 - t1:.2f} s ({second.changed()} rows changed)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=150, help="items per task (3 tasks)")
    ap.add_argument("--delay", type=float, default=0.05, help="stub server seconds per answer")
    ap.add_argument("--concurrency", type=int, default=4, help="requests in flight per process (each shard too)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--merge-items", type=int, default=100_000)
    ap.add_argument("--skip-runs", action="store_true")
    ap.add_argument("--skip-merge", action="store_true")
    args = ap.parse_args()
    if not args.skip_runs:
        bench_runs(args)
    if not args.skip_merge:
        bench_merge(args)


if __name__ == "__main__":
    from catalog_root import build_catalog

    build_catalog()
    main()
