"""What a judged run costs beyond its HTTP requests: the engine in one process with instant models.

bench/judged_vs_plain.py times whole CLI processes against a stub server, where each request's
HTTP round trip (aiohttp, the stub's parse) is part of both runs. This bench takes HTTP and
process start-up out: the same 2,000 Chinese SimpleQA items go through ``runner.execute`` and
``runner.summarise`` with in-process models that answer at once (the judge answers "A", the
grader's CORRECT), plain (exact match) and judged, interleaved, in one interpreter. What it prints:

* execute: sending (journal lookups, keys, the judge's grading prompt, parsing, scoring, the
  journal's group commits) for every item, and the part of it spent in the journal's commits;
* summarise: reading the records back and the metrics with their intervals (and, judged, the
  factuality table);
* judged minus plain per item: what judging costs the engine itself, to set beside the HTTP cost
  of the judge's request (judged_vs_plain.py: the plain run with ``--samples 2`` minus plain).

    python bench/judged_parts.py [--items 2000] [--reps 5] [--baseline-src /tmp/base/src]

With --baseline-src the same passes run in a child interpreter on another checkout's src/, rounds
interleaved. Needs ../shared/data/chinese_simpleqa. Medians of the rounds; the machine is shared.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _passes(src: str, plain_yaml: Path, items: int, reps: int) -> dict[str, dict[str, list[float]]]:
    """Runs in the checkout at ``src`` (imported fresh): {kind: {phase: [seconds per rep]}}."""
    sys.path.insert(0, src)
    from glotbench.engine import runner
    from glotbench.engine import journal as journal_mod
    from glotbench.engine.journal import Journal
    from glotbench.engine.retry import RetryPolicy
    from glotbench.models.base import GenResult, Model
    from glotbench.tasks.registry import resolve
    from glotbench.engine.plan import task_plans
    from glotbench.settings import RunSettings

    class Instant(Model):
        def __init__(self, model_id: str):
            self.model_id, self.is_chat, self.max_parallel = model_id, True, 64

        async def generate(self, request):
            await asyncio.sleep(0)  # a real model answers in a later loop iteration
            return GenResult(text="A", input_tokens=10, output_tokens=1, finish_reason="stop")

        async def aclose(self):
            pass

    tmp = Path(tempfile.mkdtemp(prefix="glotbench-judged-parts-"))
    commit = [0.0]
    original = journal_mod.Journal.flush

    def timed(self):
        t0 = time.perf_counter()
        try:
            return original(self)
        finally:
            commit[0] += time.perf_counter() - t0

    journal_mod.Journal.flush = timed

    def one(kind: str, k: int) -> dict[str, float]:
        task = resolve(["chinese_simpleqa" if kind == "judged" else str(plain_yaml)])[0]
        journal = Journal(tmp / f"{kind}{k}" / "journal.sqlite")
        runs = [tp.task_run(journal) for tp in task_plans([task], RunSettings(), {"model_id": "m"})]
        for tr in runs:
            tr.samples, tr.todo = tr.samples[:items], tr.todo[:items]
        commit[0] = 0.0
        t0 = time.perf_counter()
        asyncio.run(runner.execute(runs, Instant("m"), journal, concurrency=64, policy=RetryPolicy(),
                                   judge_model=Instant("judge") if kind == "judged" else None))
        t1 = time.perf_counter()
        sent_commit = commit[0]
        for tr in runs:
            tr.release_samples()
        runner.summarise(runs, journal, n_boot=1000, seed=1234)
        t2 = time.perf_counter()
        journal.close()
        return {"execute": t1 - t0, "commits": sent_commit, "summarise": t2 - t1}

    for kind in ("plain", "judged"):
        one(kind, -1)  # warm-up: imports, the task's data, compiled patterns
    out: dict[str, dict[str, list[float]]] = {"plain": {}, "judged": {}}
    for r in range(reps):
        for kind in (("plain", "judged") if r % 2 == 0 else ("judged", "plain")):
            for phase, sec in one(kind, r).items():
                out[kind].setdefault(phase, []).append(sec)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=2000)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--baseline-src", default=None)
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--plain-yaml", default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:  # one checkout's passes, as JSON on stdout
        print(json.dumps(_passes(a.child, Path(a.plain_yaml), a.items, a.reps)))
        return
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from judged_vs_plain import plain_yaml  # the plain task both benches compare with

    plain = plain_yaml(Path(tempfile.mkdtemp(prefix="glotbench-judged-parts-")))
    variants = [("this checkout", str(REPO / "src"))]
    if a.baseline_src:
        variants.append(("baseline", str(Path(a.baseline_src).resolve())))
    results = {}
    for label, src in variants:  # each in its own interpreter: two checkouts cannot share one
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        p = subprocess.run([sys.executable, __file__, "--child", src, "--plain-yaml", str(plain), "--items", str(a.items),
                            "--reps", str(a.reps)], env=env, capture_output=True, text=True)
        if p.returncode != 0:
            raise SystemExit(f"{label}: failed\n{p.stderr[-2000:]}")
        results[label] = json.loads(p.stdout.strip().splitlines()[-1])
    print(f"{a.items} Chinese SimpleQA items, instant in-process models (no HTTP), medians of {a.reps} interleaved reps:")
    for label, res in results.items():
        med = {kind: {ph: statistics.median(v) * 1000 for ph, v in phases.items()} for kind, phases in res.items()}
        p, j = med["plain"], med["judged"]
        extra = (j["execute"] + j["summarise"]) - (p["execute"] + p["summarise"])
        print(f"  {label}: execute plain {p['execute']:.0f} ms (commits {p['commits']:.0f}), judged {j['execute']:.0f} ms"
              f" (commits {j['commits']:.0f}); summarise plain {p['summarise']:.0f} ms, judged {j['summarise']:.0f} ms;"
              f" judging costs the engine {extra:.0f} ms = {extra * 1000 / a.items:.0f} us per item beyond its HTTP request")


if __name__ == "__main__":
    from catalog_root import build_catalog

    build_catalog()
    main()
