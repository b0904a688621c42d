"""Scale: items/s, peak RSS and re-report time at 1k / 10k / 100k items, accuracy only and with macro-F1.

A synthetic 4-option multiple-choice task (a slice field with 4 values) runs through the real
CLI (`glotbench run`, a fresh process each time) against the instant stub server; then the same
command runs again, which re-reports the finished run from its journal with no model calls.
Peak RSS is each child process's own ``ru_maxrss`` and its CPU seconds (user + system) come from
os.wait4; CPU seconds move far less than wall seconds on a busy shared machine. Also prints start-up costs
(`glotbench --help`, importing the run path) and, with ``--baseline-src``, the same figures for
another checkout (e.g. /work/main/src), measured interleaved in the same run.

    python bench/scale.py [--sizes 1000,10000,100000] [--metrics both|accuracy|macro_f1] [--baseline-src /work/main/src] [--concurrency 64] [--rounds 1]

With ``--rounds N`` every run is repeated N times, interleaved, and the summary reads medians.

The machine is shared: ratios measured interleaved in one run are meaningful, absolutes are not.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from glotbench.testing.servers import start_stub, stop  # noqa: E402


def make_task(tmp: Path, n: int, metrics: list[str]) -> Path:
    data = tmp / f"synthetic_{n}.json"
    if not data.exists():
        # written row by row: this process's own memory stays small, and Linux counts a child's
        # peak RSS from the process it was forked from (ru_maxrss would report ours)
        rng = random.Random(n)
        with data.open("w", encoding="utf-8") as fh:
            fh.write("[")
            for k in range(n):
                row = {"id": f"q{k}", "question": f"Question number {k}: which option is right?",
                       "choices": [{"label": lab, "text": f"option {lab} for {k}"} for lab in "ABCD"],
                       "answerKey": rng.choice("ABCD"), "level": f"L{k % 4}"}
                fh.write(("," if k else "") + json.dumps(row))
            fh.write("]")
    name = f"bench.scale{n}.{'_'.join(metrics)}"
    spec = tmp / f"{name}.yaml"
    spec.write_text(f"""name: {name}
version: "1.0"
language: en
dataset:
  format: json
  splits: {{test: {data}}}
  eval_split: test
fields:
  id: id
  question: question
  choices: "choices[*].text"
  labels: "choices[*].label"
  target: answerKey
  level: level
output_type: multiple_choice
prompt:
  system: "You are a helpful assistant."
  user: "{{{{ question }}}}\\n\\n{{{{ choices_block }}}}"
  choice_format: "{{{{ label }}}}. {{{{ text }}}}"
generation: {{max_tokens: 4, temperature: 0.0}}
extractor: {{name: choice}}
scorer: label
metrics: [{', '.join(metrics)}]
slice_by: [level]
""", encoding="utf-8")
    return spec


def run_child(cmd: list[str], env: dict) -> tuple[float, float, int, float]:
    """(wall seconds, peak RSS in MB, exit code, CPU seconds) of one child process."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(proc.pid, 0)
    dt = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if proc.returncode != 0:
        print(f"    FAILED ({proc.returncode}): {' '.join(cmd)}\n{err[-2000:]}", flush=True)
    return dt, ru.ru_maxrss / 1024, proc.returncode, ru.ru_utime + ru.ru_stime


def env_for(src: Path) -> dict:
    env = os.environ.copy()
    env["PYTHONPATH"] = str(src)
    env["OPENAI_API_KEY"] = "bench"
    return env


def startup(label: str, src: Path, reps: int) -> dict:
    env = env_for(src)
    out = {}
    for what, cmd in (("help", [sys.executable, "-m", "glotbench", "--help"]),
                      ("import_run_path", [sys.executable, "-c", "import glotbench.engine.session, glotbench.cli.run"])):
        times = sorted(run_child(cmd, env)[0] for _ in range(reps))
        out[what] = times[len(times) // 2]
    mods = subprocess.run([sys.executable, "-c", "import sys, glotbench.engine.session, glotbench.cli.run; "
                           "print(','.join(m for m in ('sklearn','scipy','matplotlib','jinja2','pandas') if m in sys.modules))"],
                          env=env, capture_output=True, text=True).stdout.strip()
    out["heavy_modules"] = mods
    print(f"  {label:9s} glotbench --help {out['help']:.2f} s   import run path {out['import_run_path']:.2f} s"
          f"   heavy modules loaded: {mods or 'none'}", flush=True)
    return out


METRIC_SETS = {"both": (["accuracy"], ["accuracy", "macro_f1"]), "accuracy": (["accuracy"],),
               "macro_f1": (["accuracy", "macro_f1"],)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--baseline-src", default=None, help="another checkout's src/ to measure interleaved")
    ap.add_argument("--baseline-max", type=int, default=10000, help="largest size run for the baseline")
    ap.add_argument("--startup-reps", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=1, help="repeat every run, interleaved; the summary reads medians")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--metrics", default="both", choices=["both", "accuracy", "macro_f1"],
                    help="which runs: accuracy only, accuracy + macro-F1, or both (default)")
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="glotbench-scale-"))
    srcs = {"this": REPO / "src"}
    if a.baseline_src:
        srcs["baseline"] = Path(a.baseline_src).resolve()
    results: dict = {"startup": {}, "scale": []}

    print("start-up (median of", a.startup_reps, "fresh processes)")
    for label, src in srcs.items():
        results["startup"][label] = startup(label, src, a.startup_reps)

    base, proc = start_stub("--answer", "A")
    try:
        print(f"\nscale: synthetic 4-option task, slice by level, instant stub, concurrency {a.concurrency},"
              " bootstrap 1000 (default)")
        print(f"  {'checkout':9s} {'items':>7s} {'metrics':22s} {'run s':>7s} {'CPU s':>7s} {'items/s':>8s} {'run MB':>7s}"
              f" {'re-report s':>11s} {'re-rep CPU s':>12s} {'re-rep MB':>9s} {'load':>5s}")
        for n, r, metrics in ((int(x), r, m) for x in a.sizes.split(",") for r in range(a.rounds)
                              for m in METRIC_SETS[a.metrics]):
            order = list(srcs.items()) if r % 2 == 0 else list(srcs.items())[::-1]
            for label, src in order:  # interleaved: this / baseline back to back, alternating
                if label != "this" and n > a.baseline_max:
                    continue
                spec = make_task(tmp, n, metrics)
                out = tmp / f"run-{label}-{n}-{len(metrics)}-{r}"
                cmd = [sys.executable, "-m", "glotbench", "run", "-m", "openai:bench", "--base-url", base,
                       "-t", str(spec), "-j", str(a.concurrency), "-o", str(out), "--no-progress"]
                dt, rss, rc, cpu = run_child(cmd, env_for(src))
                dt2, rss2, rc2, cpu2 = run_child(cmd, env_for(src))
                row = {"checkout": label, "items": n, "metrics": metrics, "run_s": dt, "run_cpu_s": cpu,
                       "items_per_s": n / dt, "run_peak_mb": rss, "rereport_s": dt2, "rereport_cpu_s": cpu2,
                       "rereport_peak_mb": rss2, "load": os.getloadavg()[0], "ok": rc == rc2 == 0}
                results["scale"].append(row)
                print(f"  {label:9s} {n:7d} {'+'.join(metrics):22s} {dt:7.2f} {cpu:7.2f} {n / dt:8.0f} {rss:7.0f}"
                      f" {dt2:11.2f} {cpu2:12.2f} {rss2:9.0f} {row['load']:5.1f}{'' if row['ok'] else '  FAILED'}", flush=True)
                if not a.keep:
                    shutil.rmtree(out, ignore_errors=True)
    finally:
        stop(proc)

    print(f"\nsummary (this checkout; medians of {a.rounds} round(s))")

    def med(label: str, n: int, nmetrics: int) -> dict | None:
        rows = [x for x in results["scale"] if x["checkout"] == label and x["items"] == n and len(x["metrics"]) == nmetrics]
        if not rows:
            return None
        return {k: statistics.median(x[k] for x in rows) for k in ("run_s", "run_cpu_s", "run_peak_mb", "rereport_s",
                                                                   "rereport_cpu_s", "rereport_peak_mb", "load")}

    sizes = sorted({x["items"] for x in results["scale"] if x["checkout"] == "this"})
    for n in sizes:
        acc, f1 = med("this", n, 1), med("this", n, 2)
        if acc and f1:
            print(f"  {n:7d} items: macro-F1 run / accuracy-only run = {f1['run_s'] / acc['run_s']:.2f}x"
                  f" (CPU {f1['run_cpu_s'] / acc['run_cpu_s']:.2f}x), re-report {f1['rereport_s'] / acc['rereport_s']:.2f}x")
    big = med("this", 100000, 2) or med("this", 100000, 1)
    if big:
        print(f"  100k: run peak {big['run_peak_mb']:.0f} MB (target < 500), re-report {big['rereport_s']:.2f} s wall,"
              f" {big['rereport_cpu_s']:.2f} s CPU (target < 1) at {big['rereport_peak_mb']:.0f} MB (target < 100);"
              f" load average {big['load']:.1f}")
    if "baseline" in srcs:
        for n in sizes:
            for k in (1, 2):
                r, b = med("this", n, k), med("baseline", n, k)
                if r and b:
                    print(f"  vs baseline {n:7d} {'accuracy' if k == 1 else 'accuracy+macro_f1':20s}: run {b['run_s'] / r['run_s']:.2f}x"
                          f" faster (CPU {b['run_cpu_s'] / r['run_cpu_s']:.2f}x), re-report {b['rereport_s'] / r['rereport_s']:.2f}x"
                          f" faster, peak RSS {b['run_peak_mb']:.0f} -> {r['run_peak_mb']:.0f} MB")
        s0, s1 = results["startup"]["baseline"], results["startup"]["this"]
        print(f"  start-up: --help {s0['help']:.2f} -> {s1['help']:.2f} s; import run path {s0['import_run_path']:.2f}"
              f" -> {s1['import_run_path']:.2f} s")
    (tmp / "scale.json").write_text(json.dumps(results, indent=2))
    print(f"  details: {tmp / 'scale.json'}")


if __name__ == "__main__":
    from catalog_root import build_catalog

    build_catalog()
    main()
