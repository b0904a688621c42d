"""Judged vs plain: the same Chinese SimpleQA items, once graded by an LLM judge, once by exact match.

Both runs go through the real CLI in fresh processes against the instant stub server (which also
plays the judge: it answers "A", the grader's CORRECT), interleaved, several repetitions. The
judged run sends twice the requests and computes five factuality metrics with intervals over two
slice fields; the plain run computes exact match over the same slices. A third run, plain with
``--samples 2``, sends as many requests as the judged one: judged / plain2 is what judging costs
beyond its requests, plain2 / plain what the second request of each item costs.

    python bench/judged_vs_plain.py [--items 2000] [--reps 3] [--baseline-src /tmp/base/src]

With --baseline-src, another checkout's glotbench runs the same pair in the same rounds (plain,
judged, baseline plain, baseline judged), so both ratios come from one interleaved run. Prints
every pass, then the best and the median per variant.

The runs read glotbench's modules from bytecode (an uncounted warm-up pass writes it under the
temporary folder), as an installed copy does; --compile-each-run sets PYTHONDONTWRITEBYTECODE, as
this machine's environment did for every reading before 2026-11-24: each run then compiles its
~220 modules again (140-190 ms, more in the judged run), a fixed cost that made the ratio look
about 0.05 better than a user's.

Needs ../shared/data/chinese_simpleqa. The machine is shared: the ratio counts, absolutes do not.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from glotbench.paths import resolve_data_file  # noqa: E402
from glotbench.tasks.registry import all_specs  # noqa: E402
from glotbench.testing.servers import start_stub, stop  # noqa: E402


def plain_yaml(tmp: Path) -> Path:
    spec, _ = all_specs()["chinese_simpleqa"]
    d = spec.model_dump(exclude_defaults=True)
    d["name"] = "bench.csqa_plain"
    d["suites"] = []
    d.pop("task_class", None)
    d.pop("options", None)
    d["dataset"]["splits"] = {k: str(resolve_data_file(v)) for k, v in d["dataset"]["splits"].items()}
    d["scorer"] = "exact_match"
    d["metrics"] = ["exact_match"]
    out = tmp / "csqa_plain.yaml"
    out.write_text(yaml.safe_dump(d, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return out


CPU: list[float] = []  # CPU seconds of each pass, in order
PYCACHE: Path | None = None  # where the runs keep their bytecode (set in main)


def run(cmd: list[str], src: Path = REPO / "src") -> float:
    env = os.environ.copy()
    env["PYTHONPATH"] = str(src)
    env["OPENAI_API_KEY"] = "bench"
    # As a user's installed copy runs: modules compiled once, then read from bytecode. With
    # PYTHONDONTWRITEBYTECODE (set on some machines) every run compiled its ~220 modules again,
    # 140-190 ms more in both runs, which made the ratio look better than a user sees it.
    if PYCACHE is None:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    else:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(PYCACHE)  # outside the checkouts
    t0, r0 = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{p.stderr[-2000:]}")
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.append((r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime))  # the glotbench process's own CPU
    return time.perf_counter() - t0


def main() -> None:
    import statistics

    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=2000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--baseline-src", default=None, help="src/ of another glotbench checkout, run in the same rounds")
    ap.add_argument("--compile-each-run", action="store_true",
                    help="no bytecode cache (PYTHONDONTWRITEBYTECODE, as the readings before 2026-11-24 ran): every "
                         "run compiles glotbench's modules again, a fixed cost in both runs")
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="glotbench-judged-"))
    plain = plain_yaml(tmp)
    variants = [("", REPO / "src")] + ([("baseline ", Path(a.baseline_src).resolve())] if a.baseline_src else [])
    global PYCACHE
    PYCACHE = None if a.compile_each_run else tmp / "pycache"
    base, proc = start_stub("--answer", "A")
    times: dict[str, list[float]] = {}
    cpu: dict[str, list[float]] = {}

    def args(kind: str, n: int, out: Path) -> list[str]:
        extra = (["-t", str(plain)] if kind == "plain" else
                 ["-t", str(plain), "--samples", "2"] if kind == "plain2" else
                 ["-t", "chinese_simpleqa", "--judge", "openai:judge", "--judge-base-url", base])
        return [sys.executable, "-m", "glotbench", "run", *extra, "-m", "openai:bench", "--base-url", base,
                "-n", str(n), "-j", "64", "--no-progress", "-o", str(out)]

    try:
        passes = [(tag, src, kind) for tag, src in variants for kind in ("plain", "judged", "plain2")]
        for tag, src, kind in passes:  # not counted: writes each checkout's bytecode once
            run(args(kind, 20, tmp / f"warm-{tag.strip() or 'new'}-{kind}"), src)
        for r in range(a.reps):
            line = []
            passes = passes[r % len(passes):] + passes[:r % len(passes)]  # rotate who goes first
            for tag, src, kind in passes:
                dt = run(args(kind, a.items, tmp / f"{tag.strip() or 'new'}-{kind}{r}"), src)
                times.setdefault(tag + kind, []).append(dt)
                cpu.setdefault(tag + kind, []).append(CPU[-1])
                line.append(f"{tag}{kind} {dt:.2f} s ({CPU[-1]:.2f} s CPU)")
            print(f"  rep {r}: " + ", ".join(line), flush=True)
    finally:
        stop(proc)
    how = ("every run compiling its modules (--compile-each-run)" if a.compile_each_run else
           "modules read from bytecode written by an uncounted warm-up pass")
    print(f"\n{a.items} Chinese SimpleQA items, {a.reps} interleaved reps (whole CLI process each, order rotating, {how}):")
    for tag, _ in variants:
        p, j = times[tag + "plain"], times[tag + "judged"]
        pc, jc = cpu[tag + "plain"], cpu[tag + "judged"]
        per_rep = statistics.median(jj / pp for pp, jj in zip(p, j))
        print(f"  {tag or 'this checkout '}: median plain {statistics.median(p):.2f} s, judged {statistics.median(j):.2f} s:"
              f" judged / plain = {statistics.median(j) / statistics.median(p):.2f}x of medians,"
              f" {min(j) / min(p):.2f}x of bests, {per_rep:.2f}x median per rep; CPU seconds (process's own,"
              f" steadier on a shared machine): {statistics.median(jc) / statistics.median(pc):.2f}x"
              f" (bar <= 1.3, issue 56; the judged run sends 2x the requests)")
        p2, p2c = times[tag + "plain2"], cpu[tag + "plain2"]
        print(f"    the same plain run with two answers per item (--samples 2: as many requests as the judged run):"
              f" median {statistics.median(p2):.2f} s = {statistics.median(p2) / statistics.median(p):.2f}x plain"
              f" (CPU {statistics.median(p2c) / statistics.median(pc):.2f}x); judged / that ="
              f" {statistics.median(j) / statistics.median(p2):.2f}x (CPU {statistics.median(jc) / statistics.median(p2c):.2f}x):"
              f" what judging costs beyond its requests")

if __name__ == "__main__":
    from catalog_root import build_catalog

    build_catalog()
    main()
