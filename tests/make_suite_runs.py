"""Write the committed fixture runs under tests/fixtures/suite_runs/ (one per seed suite).

    python tests/make_suite_runs.py            # needs ../shared/data and the embedded model

Each run is made by the embedded model (real, varied answers), judged tasks by the stub judge.
tests/test_suite_runs_rescored.py reruns each command on a copy of the committed journal (nothing is
sent) and checks every number of the fresh results.json against the committed one, so a refactor
that changes any number, or any task's fingerprint, fails it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "fixtures" / "suite_runs"
sys.path.insert(0, str(HERE.parent / "src"))

# the stub judge listens on this port when the runs are made and rescored: a judge's identity is its
# URL, so the same port lets the rescoring find every verdict in the journal
JUDGE_PORT = 47391
# suite -> (tasks, needs a judge)
SUITES: dict[str, tuple[list[str], bool]] = {
    "mm_eval": (["mm_eval"], False),
    "hulu": (["hulu.*"], False),
    "czech_bench": (["cs.klokanek", "czech_bench.ctkfacts_full", "czech_bench.facebook_comments_full",
                     "czech_bench.gsm8k_en", "czech_bench.mall_reviews_full"], False),
    "openhueval": (["openhueval.hu_matchingfib", "openhueval.hu_standardfib", "openhueval.hu_proverbrea_2cq",
                    "openhueval.hu_proverbrea_oe"], True),
    "factuality": (["chinese_simpleqa", "chinese_simpleqa.mc", "chinese_simpleqa.confidence"], True),
}
LIMIT = "4"
# suites whose answers come from a recorded answers file (answers.jsonl beside the run: every other item
# its gold, the rest a wrong answer) instead of the embedded model, whose long answers are slow on CPU
RECORDED = ("openhueval", "factuality")


def command(suite: str, out: Path, judge_url: str | None) -> list[str]:
    tasks, judged = SUITES[suite]
    model = ["--model", f"recorded:{out / 'answers.jsonl'}", "-M", "task=task"] if suite in RECORDED else \
        ["--model", "embedded", "-M", "n_threads=2"]
    cmd = [sys.executable, "-m", "glotbench", "run", *model, "--limit", LIMIT,
           "--bootstrap", "200", "--seed", "1", "-o", str(out), "--no-progress", "--no-cache"]
    for t in tasks:
        cmd += ["--tasks", t]
    if judged:
        cmd += ["--judge", "openai:stub-judge", "--judge-base-url", judge_url or f"http://127.0.0.1:{JUDGE_PORT}/v1"]
    return cmd


def write_answers(suite: str, path: Path) -> None:
    """Every other item answered with its gold, the others with a wrong answer."""
    from glotbench.tasks.registry import resolve
    from glotbench.tasks.request_settings import RequestSettings

    rows = []
    for task in resolve(SUITES[suite][0]):
        for k, s in enumerate(task.run_samples(RequestSettings(limit=int(LIMIT), seed=1))):
            gold = s.target if not isinstance(s.target, (list, dict)) else json.dumps(s.target, ensure_ascii=False)
            rows.append({"task": task.name, "id": s.id, "answer": str(gold) if k % 2 == 0 else "nem tudom / 不知道"})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def main(suites: list[str]) -> None:
    from glotbench.testing.servers import start_stub, stop

    base, proc = start_stub("--answer", "A", port=JUDGE_PORT)
    try:
        for suite in suites or SUITES:
            out = OUT / suite
            shutil.rmtree(out, ignore_errors=True)
            if suite in RECORDED:
                write_answers(suite, out / "answers.jsonl")
            done = subprocess.run(command(suite, out, base), capture_output=True, text=True)
            print(suite, done.returncode, done.stderr[-400:])
            for extra in ("journal.sqlite-wal", "journal.sqlite-shm", "run.lock"):
                (out / extra).unlink(missing_ok=True)
            json.loads((out / "results.json").read_text())
    finally:
        stop(proc)


if __name__ == "__main__":
    main(sys.argv[1:])
