"""Memory and time of `glotbench analyze contamination` on a generated corpus larger than we want in memory.

    python bench/contamination.py [--gb 1.0] [--items 1000] [--keep DIR]

Writes a 1,000-item task (18-30 word questions and 20 short 8-12 word ones, drawn from the same
20,000-word Zipf vocabulary as the corpus, so most corpus tokens are words of some item: the worst case
for the scan's word filter) and a corpus of ``--gb`` GB streamed to a temporary file a megabyte at a
time (never in memory), with 10 items planted. Then runs the command in a fresh subprocess and prints
its wall time, CPU seconds and peak RSS (getrusage of the child: the generator is not counted), and
whether exactly the planted items were flagged. Bar (issue 54): peak RSS under 300 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
TASK = """\
name: bench.contam
version: "1"
language: cs
dataset:
  format: jsonl
  splits: {test: DATA}
fields:
  question: q
  target: a
output_type: generate
prompt:
  user: "{{ question }}"
extractor: {name: text}
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gb", type=float, default=1.0)
    ap.add_argument("--items", type=int, default=1000)
    ap.add_argument("--keep", type=Path, default=None, help="Write the files here and keep them.")
    args = ap.parse_args()
    rng = random.Random(54)
    vocab = [f"w{i}{chr(97 + i % 26)}" for i in range(20000)]
    weights = [1 / (r + 1) for r in range(len(vocab))]
    items = [" ".join(rng.choices(vocab, weights, k=rng.randint(18, 30))) for _ in range(args.items - 20)]
    items += [" ".join(rng.choices(vocab, weights, k=rng.randint(8, 12))) for _ in range(20)]
    planted = set(rng.sample(range(args.items - 20), 8)) | {args.items - 1, args.items - 2}
    lines = [" ".join(rng.choices(vocab, weights, k=rng.randint(5, 25))) for _ in range(50000)]
    with tempfile.TemporaryDirectory() as tmp:
        where = args.keep or Path(tmp)
        where.mkdir(parents=True, exist_ok=True)
        data = where / "items.jsonl"
        data.write_text("".join(json.dumps({"q": q, "a": "x"}) + "\n" for q in items), encoding="utf-8")
        spec = where / "bench.contam.yaml"
        spec.write_text(TASK.replace("DATA", str(data)), encoding="utf-8")
        corpus = where / "corpus.txt"
        target, written, t0 = int(args.gb * 1e9), 0, time.time()
        plant_at = sorted(rng.sample(range(max(1, target // (1 << 20))), len(planted)))
        todo = [items[i] for i in sorted(planted)]
        with open(corpus, "w", encoding="utf-8") as fh:
            chunk_no = 0
            while written < target:
                chunk = "\n".join(rng.choices(lines, k=8000)) + "\n"
                if todo and plant_at and chunk_no >= plant_at[0]:
                    plant_at.pop(0)
                    chunk += todo.pop(0) + "\n"
                fh.write(chunk)
                written += len(chunk.encode("utf-8"))
                chunk_no += 1
            for q in todo:  # a corpus smaller than the planting schedule
                fh.write(q + "\n")
        print(f"corpus: {corpus.stat().st_size / 1e9:.2f} GB written in {time.time() - t0:.0f} s; "
              f"{args.items} items, {len(planted)} planted", flush=True)
        out = where / "flags.jsonl"
        env = {**os.environ, "PYTHONPATH": str(SRC)}
        t0 = time.time()
        done = subprocess.run([sys.executable, "-m", "glotbench", "analyze", "contamination", str(spec),
                               "--corpus", str(corpus), "-o", str(out)], env=env, capture_output=True, text=True)
        wall = time.time() - t0
        use = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode != 0:
            sys.exit(f"the command failed: {done.stderr[-2000:]}")
        rows = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()][:-1]
        flagged = {i for i, r in enumerate(rows) if r["length_aware"]["contaminated"]}
        flagged13 = {i for i, r in enumerate(rows) if r["lm_eval_13gram"]["contaminated"]}
        long_planted = {i for i in planted if i < args.items - 20}
        print(done.stdout.splitlines()[0])
        print(f"wall {wall:.1f} s, CPU {use.ru_utime + use.ru_stime:.1f} s, peak RSS {use.ru_maxrss / 1024:.0f} MB "
              f"(bar: 300 MB); {written / 1e6 / wall:.1f} MB/s")
        print(f"length-aware flags exactly the planted items: {flagged == planted}; "
              f"13-gram flags exactly the long planted ones: {flagged13 == long_planted}")


if __name__ == "__main__":
    main()
