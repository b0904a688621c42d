"""Issue 56's two CPU bars, measured again with glotbench's per-item duties switched off.

The bars: a run's CPU per item <= 2.0x the bare aiohttp client's (bench/throughput.py) and a judged
run's CPU <= 1.3x a plain one's (bench/judged_vs_plain.py). This script takes the same passes, and
the same passes once more with duties switched off in the measured process (bench/duties.py: the
samples file, row checksums, response rows, the latency block, per-iteration commits, intervals).
Nothing in glotbench changes; a stripped run does less than a user's would.

If a stripped pass is still above its bar, no cut of those duties can meet it: what remains is the
per-item core every evaluation needs (items read, prompts rendered, requests through the caller,
answers extracted and scored, records built, the summary).

    python bench/duties_floor.py [--items 1500] [--rounds 5] [--judged-items 2000] [--reps 3]
                                 [--strip all] [--each] [--skip-judged] [--skip-throughput]

(a) as throughput.py's overhead part: the bare client, glotbench, and glotbench with the duties off
    (``--each``: also one pass per duty alone), each pass in a fresh interpreter, the order rotating
    every round against one instant stub; the median CPU per item of each, and its ratio to the client.
(b) as judged_vs_plain.py: the plain, plain ``--samples 2`` and judged CLI runs on the same Chinese
    SimpleQA items, as they are and with the duties off, whole processes, interleaved; judged / plain
    in CPU seconds for both. Needs ../shared/data/chinese_simpleqa.

The machine is shared: the ratios from one interleaved run count, absolutes do not.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(1, str(HERE))

import duties as D  # noqa: E402


def one_pass(a) -> None:
    """One timed pass in this fresh process; prints one JSON line (items/s, CPU per item)."""
    import throughput as T
    from cpu_accounting import pass_cpu

    if a.one == "bare":  # throughput.py's own bare-client pass
        T.one_pass(a)
        return
    yaml_path, n = Path(a.task_yaml), a.n
    off = D.parse(a.duties)
    D.strip(off)
    boot = 0 if D.BOOTSTRAP in off else 200  # throughput.py's setting
    T.run_glotbench(a.base_url, yaml_path, min(n, 50), a.concurrency, Path(a.tmp), "warm", bootstrap=boot)
    T.collector_as_cli(a)
    c0 = time.process_time()
    rate = T.run_glotbench(a.base_url, yaml_path, n, a.concurrency, Path(a.tmp), a.one, bootstrap=boot)
    print(json.dumps({"items_s": rate, **pass_cpu(c0, c0, time.process_time(), n)}))


def fresh_pass(a, which: str, duties: str, base: str, yaml_path: Path, n: int, tmp: Path) -> dict:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--one", which, "--duties", duties, "--base-url", base,
           "--task-yaml", str(yaml_path), "--n", str(n), "--concurrency", str(a.concurrency), "--tmp", str(tmp)]
    p = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "OPENAI_API_KEY": "bench"})
    if p.returncode != 0:
        raise SystemExit(f"{which} ({duties or 'no duty off'}) pass failed:\n{p.stderr[-3000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def throughput_part(a, tmp: Path) -> None:
    import throughput as T
    from cpu_accounting import cpu_ratio

    from glotbench.testing.servers import start_stub, stop

    yaml_path = T.bench_all_mc(tmp)
    n = min(a.items, T.count_items(yaml_path))
    passes = [("bare", "", "bare client"), ("full", "", "glotbench"), ("stripped", a.strip, f"glotbench, off: {a.strip}")]
    if a.each:
        passes += [("stripped", d, f"glotbench, off: {d}") for d in D.DUTIES]
    cpu: dict[str, list[float]] = {label: [] for *_, label in passes}
    print(f"(a) CPU per item against an instant stub: {n} items, {a.rounds} interleaved rounds, concurrency {a.concurrency}",
          flush=True)
    base, proc = start_stub("--answer", "A")
    try:
        for r in range(a.rounds):
            order = passes[r % len(passes):] + passes[:r % len(passes)]
            line = []
            for which, duties, label in order:
                res = fresh_pass(a, which, duties, base, yaml_path, n, tmp)
                cpu[label].append(res["cpu_ms_per_item"])
                line.append(f"{label} {res['cpu_ms_per_item']:.3f}")
            print(f"  round {r} (ms CPU per item): " + "; ".join(line), flush=True)
    finally:
        stop(proc)
    client = statistics.median(cpu["bare client"])
    for *_, label in passes:
        m = statistics.median(cpu[label])
        print(f"  {label:40s} {m:.3f} ms per item = {cpu_ratio(m, client):.2f}x the bare client (bar <= 2.0)")


def judged_part(a, tmp: Path) -> None:
    import judged_vs_plain as J

    from glotbench.testing.servers import start_stub, stop

    plain = J.plain_yaml(tmp)
    J.PYCACHE = tmp / "pycache"  # as judged_vs_plain.py: modules read from bytecode written by the warm-up
    launcher = [sys.executable, str(HERE / "duties.py")]
    variants = [("as it is", ""), (f"off: {a.strip}", a.strip)]
    base, proc = start_stub("--answer", "A")

    def args(kind: str, duties: str, n: int, out: Path) -> list[str]:
        extra = (["-t", str(plain)] if kind == "plain" else
                 ["-t", str(plain), "--samples", "2"] if kind == "plain2" else
                 ["-t", "chinese_simpleqa", "--judge", "openai:judge", "--judge-base-url", base])
        return [*launcher, duties, "--", "run", *extra, "-m", "openai:bench", "--base-url", base, "-n", str(n),
                "-j", "64", "--no-progress", "-o", str(out)]

    cpu: dict[tuple[str, str], list[float]] = {}
    passes = [(label, duties, kind) for label, duties in variants for kind in ("plain", "plain2", "judged")]
    print(f"(b) judged vs plain, whole CLI processes: {a.judged_items} Chinese SimpleQA items, {a.reps} interleaved reps",
          flush=True)
    try:
        for label, duties, kind in passes:  # not counted: bytecode written once
            J.run(args(kind, duties, 20, tmp / f"warm-{kind}-{len(duties)}"))
        for r in range(a.reps):
            order = passes[r % len(passes):] + passes[:r % len(passes)]
            for label, duties, kind in order:
                J.run(args(kind, duties, a.judged_items, tmp / f"{kind}-{len(duties)}-{r}"))
                cpu.setdefault((label, kind), []).append(J.CPU[-1])
            print(f"  rep {r} done", flush=True)
    finally:
        stop(proc)
    for label, _ in variants:
        med = {k: statistics.median(cpu[(label, k)]) for k in ("plain", "plain2", "judged")}
        print(f"  {label:30s} CPU s: plain {med['plain']:.2f}, plain2 {med['plain2']:.2f}, judged {med['judged']:.2f}; "
              f"judged / plain {med['judged'] / med['plain']:.2f}x (bar <= 1.3), plain2 / plain "
              f"{med['plain2'] / med['plain']:.2f}x, judged / plain2 {med['judged'] / med['plain2']:.2f}x")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=1500)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--judged-items", type=int, default=2000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--strip", default="all", help=f"the duties switched off, comma-separated, or all: {', '.join(D.DUTIES)}")
    ap.add_argument("--each", action="store_true", help="(a) also a pass per duty switched off alone")
    ap.add_argument("--skip-throughput", action="store_true")
    ap.add_argument("--skip-judged", action="store_true")
    ap.add_argument("--host-gc", action="store_true", help=argparse.SUPPRESS)
    for opt in ("--one", "--duties", "--base-url", "--task-yaml", "--tmp"):
        ap.add_argument(opt, help=argparse.SUPPRESS)
    ap.add_argument("--n", type=int, help=argparse.SUPPRESS)
    a = ap.parse_args()
    from catalog_root import build_catalog

    build_catalog()
    if a.one:
        one_pass(a)
        return
    unknown = [d for d in D.parse(a.strip) if d not in D.DUTIES]
    if unknown:
        raise SystemExit(f"unknown duty {unknown[0]!r}; known: {', '.join(D.DUTIES)}")
    tmp = Path(tempfile.mkdtemp(prefix="glotbench-duties-"))
    if not a.skip_throughput:
        throughput_part(a, tmp)
    if not a.skip_judged:
        judged_part(a, tmp)
    print(f"  load average {os.getloadavg()[0]:.1f} (1 min) at the end")


if __name__ == "__main__":
    main()
