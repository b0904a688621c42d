"""`export --format inspect` read back with inspect-ai's own `read_eval_log`: what `inspect view` shows.

The stub answers a sentence ("The answer is B."), so the model's raw text and glotbench's parsed
prediction ("B") differ: Inspect's ANSWER column (`Score.answer`) must show the text, its Messages tab
(`EvalSample.messages`) the prompt and the answer, and the log a real duration (`stats`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime

import pytest

TASK = "mm_eval.semantics"
ANSWER = "The answer is B."


def cli(*args: str, cwd) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "glotbench", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    from glotbench.paths import find_data_root
    from glotbench.testing.servers import start_stub, stop

    root = find_data_root()
    if root is None or not (root / "mm_eval").is_dir():
        pytest.skip("benchmark data not found: put the shared data folder at ../shared/data or set GLOTBENCH_DATA")
    os.environ["GLOTBENCH_DATA"] = str(root)
    tmp = tmp_path_factory.mktemp("inspect")
    base, proc = start_stub("--answer", ANSWER, "--delay", "0.05")
    try:
        r = cli("run", "-m", "openai:stub", "--base-url", base, "-t", TASK, "-n", "4", "-o", "run", "--no-progress",
                "--bootstrap", "20", "--max-retries", "0", "--concurrency", "1", cwd=tmp)
    finally:
        stop(proc)
    assert r.returncode == 0, r.stderr
    return tmp / "run"


def test_inspect_samples_have_messages_the_raw_answer_and_a_duration(run_dir):
    log_api = pytest.importorskip("inspect_ai.log", reason="pip install 'glotbench[inspect]'")
    out = run_dir / "inspect"
    r = cli("runs", "export", str(run_dir), "--format", "inspect", "-o", str(out), cwd=run_dir.parent)
    assert r.returncode == 0, r.stderr
    ours = json.loads((run_dir / "results.json").read_text())
    recs = {x["sample_id"]: x for x in map(json.loads, (run_dir / "samples.jsonl").read_text().splitlines())}
    log = log_api.read_eval_log(str(out / f"{TASK}.eval"))
    assert len(log.samples) == 4
    for s in log.samples:
        rec = recs[str(s.id)]  # integer ids when every id is one (numeric order in Inspect)
        assert rec["pred"] == "B" and rec["outputs"][0]["text"] == ANSWER  # the two differ
        assert s.output.completion == ANSWER
        score = s.scores["glotbench"]
        assert score.answer == ANSWER and score.metadata["pred"] == "B"
        # Messages: the prompt's own messages, then the model's answer
        roles = [m.role for m in s.messages]
        assert roles == [m["role"] for m in rec["prompt"]] + ["assistant"]
        assert [m.text for m in s.messages[:-1]] == [m["content"] for m in rec["prompt"]]
        assert s.messages[-1].text == ANSWER
    # a real duration: the run's own start and elapsed seconds (4 requests, one at a time, 0.05 s each)
    started = datetime.fromisoformat(log.stats.started_at)
    completed = datetime.fromisoformat(log.stats.completed_at)
    [session] = ours["run"]["sessions"]
    assert started.timestamp() == pytest.approx(session["started"], abs=1e-3)
    assert (completed - started).total_seconds() == pytest.approx(session["elapsed_s"], abs=1e-3)
    assert 0.2 <= (completed - started).total_seconds() < 60
