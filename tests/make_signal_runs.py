"""Write the committed fixture runs under tests/fixtures/signal_runs/: 4 checkpoints x 2 seeds.

    python tests/make_signal_runs.py            # needs ../shared/data; no model: recorded answers

Each run answers 20 items of mm_eval.syntax and of hulu.cola from a recorded answers file
(answers.jsonl beside the run). mm_eval.syntax improves with the step: item i is right when the
seed's draw u_i < 0.3 + 0.15 * checkpoint, so an item right at one step stays right later (a
clean, rising signal). hulu.cola does not: item i is right when a fresh draw per (step, seed) is
< 0.5 (noise). Only answers.jsonl, results.json and samples.jsonl are kept (the journal is not
needed by `analyze signal`). tests/test_analyze_signal.py reads them.
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "fixtures" / "signal_runs"
sys.path.insert(0, str(HERE.parent / "src"))
TASKS = ("mm_eval.syntax", "hulu.cola")
LIMIT = 20
STEPS = (1000, 2000, 3000, 4000)
SEEDS = (1, 2)


def answers(step_k: int, seed: int) -> list[dict]:
    from glotbench.tasks.request_settings import RequestSettings
    from glotbench.tasks.registry import resolve

    rows = []
    for task in resolve(list(TASKS)):
        letters = ["A", "B"] if task.name == "hulu.cola" else ["A", "B", "C", "D"]
        stable = random.Random(f"{task.name}/seed{seed}")  # the same draws at every step: nested answers
        noisy = random.Random(f"{task.name}/seed{seed}/step{step_k}")
        for s in task.run_samples(RequestSettings(limit=LIMIT, seed=1)):
            gold = {"1": "A", "0": "B"}.get(s.target, s.target) if task.name == "hulu.cola" else s.target
            wrong = stable.choice([x for x in letters if x != gold])
            u = stable.random()
            right = u < 0.3 + 0.15 * step_k if task.name == "mm_eval.syntax" else noisy.random() < 0.5
            rows.append({"task": task.name, "id": s.id, "answer": gold if right else wrong})
    return rows


def main() -> None:
    shutil.rmtree(OUT, ignore_errors=True)
    for k, step in enumerate(STEPS, start=1):
        for seed in SEEDS:
            out = OUT / f"ckpt-step{step}-seed{seed}"
            out.mkdir(parents=True)
            ans = out / "answers.jsonl"
            ans.write_text("".join(json.dumps(r) + "\n" for r in answers(k, seed)), encoding="utf-8")
            cmd = [sys.executable, "-m", "glotbench", "run", "--model", f"recorded:{ans}", "-M", "task=task",
                   "--tasks", ",".join(TASKS), "--limit", str(LIMIT), "--seed", "1", "--bootstrap", "100",
                   "-o", str(out), "--no-progress", "--no-cache"]
            done = subprocess.run(cmd, capture_output=True, text=True)
            print(out.name, done.returncode, done.stderr[-300:] if done.returncode else "")
            for extra in ("journal.sqlite", "journal.sqlite-wal", "journal.sqlite-shm", "run.lock"):
                (out / extra).unlink(missing_ok=True)


if __name__ == "__main__":
    main()
