"""`glotbench compare --ranks --published CSV`: a paper's rank table rebuilt from its published
numbers, either side from the CSV or from runs (fresh subprocesses)."""

import json
import os
import subprocess
import sys

import pytest

from glotbench.report.analysis.published import read_published
from glotbench.errors import DataError

# Scores as a paper's rank figure lists them (illustrative values in Chinese SimpleQA Fig. 8's form).
CSV = """model,benchmark,score
model-a,simpleqa,38.0
model-b,simpleqa,30.0
model-c,simpleqa,20.0
model-a,chinese_simpleqa,59.0
model-b,chinese_simpleqa,62.0
model-c,chinese_simpleqa,45.0
"""


def glot(*args):
    return subprocess.run([sys.executable, "-m", "glotbench", *args], env={**os.environ, "OPENAI_API_KEY": "x", "COLUMNS": "200"},
                          capture_output=True, text=True, timeout=120)


def test_published_only_rank_table(tmp_path):
    f = tmp_path / "published.csv"
    f.write_text(CSV, encoding="utf-8")
    out = tmp_path / "ranks.json"
    done = glot("runs", "compare", "--ranks", "--published", str(f), "--a", "simpleqa", "--b", "chinese_simpleqa",
                "--style", "signed", "--json", str(out))
    assert done.returncode == 0, done.stderr
    rows = {r["model"]: r for r in json.loads(out.read_text())["ranks"]["rows"]}
    assert rows["model-b"]["rank_a"] == 2 and rows["model-b"]["rank_b"] == 1 and rows["model-b"]["movement"] == "+1"
    assert rows["model-a"]["movement"] == "-1" and rows["model-c"]["movement"] == "0"
    assert "Kendall" in done.stdout


def test_published_beside_a_run(tmp_path, stub_server, data_root):
    canned = tmp_path / "canned.jsonl"
    canned.write_text("\n".join(json.dumps(x, ensure_ascii=False) for x in
                                [{"match": "预测答案", "response": "A"}, {"match": "？", "response": "x"}]), encoding="utf-8")
    base = stub_server("--responses", str(canned))
    run = tmp_path / "run"
    done = glot("run", "--model", "openai:mine", "--base-url", base, "--judge", "openai:j", "--judge-base-url", base,
                "--tasks", "chinese_simpleqa", "--limit", "4", "-o", str(run), "--no-progress")
    assert done.returncode == 0, done.stderr[-1500:]
    f = tmp_path / "published.csv"
    # only the English side is published here: the Chinese side comes from the run
    f.write_text("".join(x + "\n" for x in CSV.splitlines() if "chinese" not in x) + "mine,simpleqa,25.0\n", encoding="utf-8")
    out = tmp_path / "ranks.json"
    done = glot("runs", "compare", str(run), "--ranks", "--published", str(f), "--a", "simpleqa", "--b", "chinese_simpleqa",
                "--json", str(out))
    assert done.returncode == 0, done.stderr
    res = json.loads(out.read_text())
    rows = {r["model"]: r for r in res["ranks"]["rows"]}
    assert set(rows) == {"mine"} and rows["mine"]["score_b"] == 1.0  # B from the run (CO, all CORRECT)
    assert set(res["ranks"]["only_in_a"]) == {"model-a", "model-b", "model-c"}


def test_bad_published_line_names_file_line_and_field(tmp_path):
    f = tmp_path / "p.csv"
    f.write_text("model,benchmark,score\nm,x,abc\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"p.csv:2: field 'score': 'abc' is not a number"):
        read_published(f)
    f.write_text("model,score\n", encoding="utf-8")
    with pytest.raises(DataError, match="lacks column"):
        read_published(f)
