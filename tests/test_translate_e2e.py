"""`glotbench translate` for real: 20 GSM8K-en items into Czech with the embedded model, killed
(SIGKILL) part-way and run again (no sentence sent twice); then a run of GSM8K-en and its
machine-translated counterpart, and `glotbench compare --crosslingual` prints the gap table.
Translation quality is not the point (SmolLM2-135M); the pipeline, its rules and resume are."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from journal_rows import count_responses

pytestmark = pytest.mark.slow
N = 20


def _cli(*args, timeout=3000):
    return subprocess.run([sys.executable, "-m", "glotbench", *map(str, args)], capture_output=True, text=True, timeout=timeout)


def test_translate_kill_resume_and_crosslingual(smollm2_path, tmp_path):
    from glotbench.paths import resolve_data_file

    if not resolve_data_file("gsm8k_en/test.jsonl").is_file():
        pytest.skip("gsm8k_en not in the shared data")
    out = tmp_path / "mt"
    cmd = [sys.executable, "-m", "glotbench", "build", "translate", "--task", "czech_bench.gsm8k_en", "--to", "cs", "--model", "embedded",
           "--limit", str(N), "--max-tokens", "40", "-o", str(out), "--prompt-from", "czech_bench.gsm8k", "-j", "1"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=os.environ.copy())
    db = out / "journal.sqlite"
    deadline = time.time() + 1800
    while time.time() < deadline and count_responses(db) < 6 and proc.poll() is None:
        time.sleep(0.5)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = count_responses(db)
    assert before >= 1, "no sentence was journaled before the kill"

    again = _cli(*cmd[3:])
    assert again.returncode == 0, again.stderr
    line = next(x for x in again.stdout.splitlines() if x.startswith("requests sent"))
    sent, cached = (int(x) for x in __import__("re").findall(r"(\d+)", line)[:2])
    after = count_responses(db)
    assert cached >= before  # everything journaled before the kill came from the journal
    assert after == before + sent  # and only the rest was sent: nothing twice
    stats = next(x for x in again.stdout.splitlines() if x.startswith("strings"))
    assert f"strings {N}" in stats

    rows = [json.loads(x) for x in (out / "data.jsonl").read_text(encoding="utf-8").splitlines()]
    src = [json.loads(x) for x in resolve_data_file("gsm8k_en/test.jsonl").read_text(encoding="utf-8").splitlines()][:N]
    assert len(rows) == N and [r["answer"] for r in rows] == [s["answer"] for s in src]  # answers untouched
    assert sum(r["question"] != s["question"] for r, s in zip(rows, src)) >= N // 2
    spec = (out / "task.yaml").read_text(encoding="utf-8")
    assert "counterpart: czech_bench.gsm8k_en" in spec and "language: cs" in spec and "Vyřeš" in spec

    run = tmp_path / "run"
    r = _cli("run", "--model", "embedded", "--tasks", f"czech_bench.gsm8k_en,{out / 'task.yaml'}", "--limit", N,
             "--max-tokens", "8", "-o", run, "--no-progress")
    assert r.returncode == 0, r.stderr
    cmp = _cli("runs", "compare", "--crosslingual", run)
    assert cmp.returncode == 0, cmp.stderr
    assert "Cross-lingual gap" in cmp.stdout and "czech_bench.gsm8k_en.mt_cs" in cmp.stdout
    assert "Average relative gap" in cmp.stdout
