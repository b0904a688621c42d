"""Embedded run time under different llama-cpp-python builds and load settings, interleaved.

Each variant is ``NAME=SITE[:M_ARGS]``: SITE is a folder holding a ``llama_cpp`` package (an
unpacked wheel, or a venv's site-packages), put first on PYTHONPATH for that variant's run; M_ARGS
are ``-M`` options for the run, ``;``-separated (e.g. ``extra_bufts=false``). Every round runs each
variant once, in rotated order, the README's command on a fresh output directory:

    glotbench run --tasks mm_eval --limit N      (the embedded SmolLM2, in process)

and prints wall seconds per run, the median per variant, and each median's ratio to the fastest.
Generated texts are compared with the first variant's (same greedy text, or how many differ).

    python bench/llama_builds.py --limit 20 --rounds 3 \\
        native=/work/main/.venv/lib/python3.11/site-packages \\
        native_safe=/work/main/.venv/lib/python3.11/site-packages:extra_bufts=false \\
        portable=/tmp/llama-portable

The machine is shared: compare the ratios of one run of this script, not seconds across runs.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def parse_variant(text: str) -> tuple[str, str, list[str]]:
    name, _, rest = text.partition("=")
    site, _, margs = rest.partition(":")
    return name, site, [a for a in margs.split(";") if a]


def build_info(site: str) -> str:
    code = "import llama_cpp; i = llama_cpp.llama_print_system_info().decode(); print(llama_cpp.__version__, i)"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([site, str(REPO / "src")])}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True).stdout
    keep = [w for w in out.split("|") if "= 1" in w and any(k in w for k in ("AVX", "AMX", "F16C", "FMA"))]
    version = out.split()[0] if out else "?"
    return f"{version} ({', '.join(w.strip() for w in keep)})"


def texts(run_dir: Path) -> dict[str, str]:
    con = sqlite3.connect(run_dir / "journal.sqlite")
    try:
        return dict(con.execute("select key, response from responses where role = 'model'"))
    except sqlite3.Error:
        return {}
    finally:
        con.close()


def run_once(site: str, margs: list[str], limit: int, out: Path) -> float:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([site, str(REPO / "src")])}
    cmd = [sys.executable, "-m", "glotbench", "run", "--tasks", "mm_eval", "--limit", str(limit), "-o", str(out)]
    for a in margs:
        cmd += ["-M", a]
    t0 = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=REPO)
    seconds = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr[-800:]}")
    return seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("variants", nargs="+", help="NAME=SITE[:M_ARG;M_ARG]")
    ap.add_argument("--limit", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    variants = [parse_variant(v) for v in args.variants]
    for name, site, margs in variants:
        print(f"{name}: llama-cpp-python {build_info(site)} {' '.join('-M ' + a for a in margs)}", flush=True)
    seconds: dict[str, list[float]] = {name: [] for name, _, _ in variants}
    first_texts: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            order = variants[r % len(variants):] + variants[:r % len(variants)]
            for name, site, margs in order:
                out = Path(tmp) / f"{name}-{r}"
                s = run_once(site, margs, args.limit, out)
                seconds[name].append(s)
                got = texts(out)
                if not first_texts:
                    first_texts = got
                differ = sum(1 for k, v in got.items() if first_texts.get(k) != v)
                print(f"round {r} {name}: {s:.1f} s ({differ}/{len(got)} texts differ from the first run)", flush=True)
    medians = {n: statistics.median(v) for n, v in seconds.items()}
    best = min(medians.values())
    print(json.dumps({"seconds": seconds, "median": medians}, indent=1))
    for n, m in medians.items():
        print(f"{n}: median {m:.1f} s, {m / best:.3f}x the fastest")


if __name__ == "__main__":
    main()
