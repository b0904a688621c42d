"""A Best-of-N run prints accuracy@k (first k answers and unbiased pass@k) for k = 1..N and names
the PNG it writes (its path, which exists). Fresh ``glotbench run`` process, stub model and judge."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[1] / "src")


def test_best_of_n_prints_accuracy_at_k_and_the_plot(stub_server, tmp_path, data_root):
    model = stub_server("--answer", "北京")
    judge = stub_server("--answer", "A")  # the SimpleQA grader's CORRECT
    env = {**os.environ, "PYTHONPATH": SRC, "OPENAI_API_KEY": "x", "COLUMNS": "300"}
    done = subprocess.run([sys.executable, "-m", "glotbench", "run", "-m", "openai:stub", "--base-url", model,
                           "--judge", "openai:judge", "--judge-base-url", judge, "-t", "chinese_simpleqa", "--limit", "3",
                           "--samples", "3", "--temperature", "0.7", "--bootstrap", "10", "--no-progress",
                           "-o", str(tmp_path / "r")], env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    bon = json.loads((tmp_path / "r" / "results.json").read_text())["tasks"]["chinese_simpleqa"]["best_of_n"]
    line = next(x for x in done.stdout.splitlines() if "Best-of-3 accuracy@k" in x)
    cells = " ".join(f"@{k} {v:.3f}" for k, v in enumerate(bon["accuracy_at_k"], 1))
    assert f"chinese_simpleqa: Best-of-3 accuracy@k (first k answers, 3 items): {cells}" in line
    assert "unbiased pass@k: " + " ".join(f"@{k} {v:.3f}" for k, v in enumerate(bon["accuracy_at_k_unbiased"], 1)) in line
    plot = line.rsplit(" · plot: ", 1)[1].strip()
    assert Path(plot).name == bon["plot"] and Path(plot).is_file() and plot.endswith(".png")
