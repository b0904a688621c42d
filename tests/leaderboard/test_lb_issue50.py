"""Leaderboard items of issue 50: ``admin add-task --metric chrF`` (as the pages spell it) is the
registered ``chrf``; the task page's example submission names the task's own item ids; the
leaderboard's interval is the one `glotbench run` reports for the same predictions (the same
bootstrap draw: 1000 resamples, seed 1234, items in the gold file's order) and the page says so."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

SRC = str(Path(__file__).resolve().parents[2] / "src")
TEXTS = [("q01", "Praha je hlavní město České republiky."), ("q02", "Dunaj protéká Budapeští."),
         ("q03", "Ulánbátar je hlavní město Mongolska.")]


def _admin(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": SRC}
    return subprocess.run([sys.executable, "-m", "glotbench", "admin", *args], capture_output=True, text=True,
                          timeout=300, env=env)


def test_add_task_metric_in_any_case_and_the_page_shows_the_tasks_ids(tmp_path, sessions, db_url, client_factory):
    gold = tmp_path / "gold.json"
    gold.write_text(json.dumps([{"id": i, "label": t} for i, t in TEXTS], ensure_ascii=False), encoding="utf-8")
    done = _admin("add-task", "demo.chrf", "--gold", str(gold), "--metric", "chrF", "--db", db_url)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "metric chrf" in done.stdout
    done = _admin("add-task", "demo.bleu", "--gold", str(gold), "--metric", "BLEU", "--db", db_url)
    assert done.returncode == 0 and "metric bleu" in done.stdout, done.stderr[-2000:]
    done = _admin("add-task", "demo.x", "--gold", str(gold), "--metric", "chrFF", "--db", db_url)
    assert done.returncode != 0 and "'chrFF' is not a registered metric" in done.stderr + done.stdout
    page = client_factory().get("/tasks/demo.chrf")
    assert page.status_code == 200
    example = re.search(r'<pre class="code" id="example">(.*?)</pre>', page.text, re.DOTALL).group(1)
    assert "&#34;q01&#34;" in example or '"q01"' in example or "&quot;q01&quot;" in example, example
    assert not re.search(r"(&#34;|&quot;|\")0(&#34;|&quot;|\")", example), example
    assert 'id="interval-note"' in page.text and "seed 1234" in page.text


ITEMS = [{"id": f"q{k:02d}", "gold": str(k), "ask": str(k if k % 3 else k + 1)} for k in range(1, 31)]


def test_leaderboard_interval_equals_the_runs(tmp_path, stub_server):
    """A run's numeric_match interval (default --bootstrap and --seed) and the leaderboard's
    interval of the same predictions against the same gold, in the same order, are equal."""
    from glotbench.leaderboard.scoring import score_interval, score_predictions

    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps({"id": r["id"], "q": f"Mennyi? GOLD={r['ask']}", "gold": r["gold"]}) + "\n"
                            for r in ITEMS), encoding="utf-8")
    spec = tmp_path / "demo.yaml"
    spec.write_text("""name: demo.lbci
version: "1"
language: hu
dataset:
  format: jsonl
  splits: {test: d.jsonl}
fields: {id: id, question: q, target: gold}
prompt: {user: "{{ question }}"}
extractor: {name: number}
scorer: numeric
metrics: [numeric_match]
""", encoding="utf-8")
    base = stub_server("--echo-gold")
    env = {**os.environ, "PYTHONPATH": SRC, "OPENAI_API_KEY": "x"}
    env.pop("GLOTBENCH_CACHE", None)
    done = subprocess.run([sys.executable, "-m", "glotbench", "run", "-m", "openai:stub", "--base-url", base, "-t", str(spec),
                           "-o", str(tmp_path / "run"), "--no-progress"], capture_output=True, text=True, timeout=300,
                          env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    res = json.loads((tmp_path / "run" / "results.json").read_text())
    m = res["tasks"]["demo.lbci"]["metrics"]["numeric_match"]
    preds = {json.loads(x)["sample_id"]: json.loads(x)["pred"] for x in (tmp_path / "run" / "samples.jsonl").read_text().splitlines()}
    gold = {r["id"]: r["gold"] for r in ITEMS}
    assert score_predictions(gold, {k: str(v) for k, v in preds.items()}, "numeric_match") == pytest.approx(m["value"])
    assert 0 < m["value"] < 1
    lo, hi = score_interval(gold, {k: str(v) for k, v in preds.items()}, "numeric_match")
    assert (lo, hi) == pytest.approx(tuple(m["ci95"]), abs=5e-7)  # results.json keeps 6 decimals
