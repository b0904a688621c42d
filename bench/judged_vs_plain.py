"""Judged vs plain: the same Chinese SimpleQA items, once graded by an LLM judge, once by exact match.

Both runs go through the real CLI in fresh processes against the instant stub server (which also
plays the judge: it answers "A", the grader's CORRECT), interleaved, several repetitions. The
judged run sends twice the requests and computes five factuality metrics with intervals over two
slice fields; the plain run computes exact match over the same slices.

    python bench/judged_vs_plain.py [--items 2000] [--reps 2]

Needs ../shared/data/chinese_simpleqa. The machine is shared: the ratio counts, absolutes do not.
"""

from __future__ import annotations

import argparse
import os
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


def run(cmd: list[str]) -> float:
    env = os.environ.copy()
    env["PYTHONPATH"] = str(REPO / "src")
    env["OPENAI_API_KEY"] = "bench"
    t0 = time.perf_counter()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{p.stderr[-2000:]}")
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=2000)
    ap.add_argument("--reps", type=int, default=2)
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="glotbench-judged-"))
    plain = plain_yaml(tmp)
    base, proc = start_stub("--answer", "A")
    times: dict[str, list[float]] = {"plain": [], "judged": []}
    try:
        common = ["-m", "openai:bench", "--base-url", base, "-n", str(a.items), "-j", "64", "--no-progress"]
        for r in range(a.reps):
            times["plain"].append(run([sys.executable, "-m", "glotbench", "run", "-t", str(plain), *common,
                                       "-o", str(tmp / f"plain{r}")]))
            times["judged"].append(run([sys.executable, "-m", "glotbench", "run", "-t", "chinese_simpleqa", *common,
                                        "--judge", "openai:judge", "--judge-base-url", base, "-o", str(tmp / f"judged{r}")]))
            print(f"  rep {r}: plain {times['plain'][-1]:.2f} s, judged {times['judged'][-1]:.2f} s", flush=True)
    finally:
        stop(proc)
    p, j = min(times["plain"]), min(times["judged"])
    print(f"\n{a.items} Chinese SimpleQA items, best of {a.reps}: plain {p:.2f} s, judged {j:.2f} s,"
          f" judged / plain = {j / p:.2f}x (target <= 1.5; the judged run sends 2x the requests)")


if __name__ == "__main__":
    main()
