"""``export --format lm-eval`` of a converted lm-eval task with answer filters keys each filter's score
as lm-eval does, ``<metric>,<filter name>``: gsm8k's ``exact_match,strict-match`` and
``exact_match,flexible-extract`` (not ``mean:exact_match_flexible-extract,none``). lm-eval's gsm8k.yaml
from the installed wheel is converted, run against the stub (fresh processes, canned answers per item)
and exported; the export is read by lm-eval's own ``make_table`` and its ``WandbLogger`` (wandb
offline, a fresh process). The values come from lm-eval's own ConfigurableTask on the same output
texts (its filters, then its ``process_results``), the stderrs from its ``mean_stderr``; the samples
file holds one line per item and filter, filter after filter, as lm-eval's evaluator logs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from test_export_peer_tools import WANDB_SCRIPT
from test_lm_eval_filters import CASES, lm_eval_scores
from test_lm_eval_zoo_import import _tasks_dir, cli

TASK = "lm_eval.gsm8k"
FILTERS = ["strict-match", "flexible-extract"]


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    from glotbench.testing.servers import start_stub, stop

    tasks_dir = _tasks_dir()
    rel, shots, make, outputs, _ = CASES["gsm8k"]
    tmp = tmp_path_factory.mktemp("gsm8k_export")
    (tmp / "data").mkdir()
    files = {}
    for split in ("train", "test"):
        files[split] = tmp / "data" / f"gsm8k_{split}.jsonl"
        files[split].write_text("".join(json.dumps(make(i, split)) + "\n" for i in range(len(outputs))),
                                encoding="utf-8")
    c = cli("tasks", "import", str(tasks_dir / rel), "--data-dir", "data", "-o", "gsm8k.yaml", cwd=tmp)
    assert c.returncode == 0, c.stderr
    (tmp / "responses.jsonl").write_text("".join(json.dumps({"match": f"(test q{i})", "response": out}) + "\n"
                                                 for i, out in enumerate(outputs)), encoding="utf-8")
    base, proc = start_stub("--responses", str(tmp / "responses.jsonl"))
    try:
        r = cli("run", "-m", "openai:stub", "--base-url", base, "-M", "chat=false", "-t", "gsm8k.yaml", "-o", "run",
                "--no-progress", "--bootstrap", "20", "--max-retries", "0", cwd=tmp)
    finally:
        stop(proc)
    assert r.returncode == 0, r.stderr[-2000:]
    e = cli("runs", "export", "run", "--format", "lm-eval", "-o", "lm", cwd=tmp)
    assert e.returncode == 0, e.stderr
    [res] = list((tmp / "lm").glob("*/results_*.json"))
    [samples] = list(res.parent.glob("samples_*.jsonl"))
    theirs = lm_eval_scores(tasks_dir, rel, shots, files, dict(enumerate(outputs)))
    assert list(theirs[0][0]) == FILTERS  # lm-eval's own filter names, in its order
    return tmp, res, [json.loads(x) for x in samples.read_text().splitlines()], theirs


def _lm_eval_means(theirs) -> dict[str, tuple[float, float]]:
    """``exact_match,<filter>`` -> (mean, stderr) by lm-eval's own aggregation functions."""
    from lm_eval.api.metrics import mean, mean_stderr

    out = {}
    for f in FILTERS:
        vals = [values[f"exact_match,{f}"] for _, values in theirs.values()]
        out[f"exact_match,{f}"] = (mean(vals), mean_stderr(vals))
    return out


def test_results_key_each_filter_as_lm_eval_does(exported):
    _, res, _, theirs = exported
    doc = json.loads(res.read_text())
    want = _lm_eval_means(theirs)
    assert want["exact_match,strict-match"][0] != want["exact_match,flexible-extract"][0]  # told apart
    got = doc["results"][TASK]
    for key, (value, stderr) in want.items():
        metric, _, f = key.partition(",")
        assert got[key] == pytest.approx(value)
        assert got[f"{metric}_stderr,{f}"] == pytest.approx(stderr)
    assert not [k for k in got if k.startswith("mean:") or k.endswith(",none")]
    assert doc["higher_is_better"][TASK] == {"exact_match": True}
    [entry] = doc["configs"][TASK]["metric_list"]
    assert entry["metric"] == "exact_match" and entry["aggregation"] == "mean" and entry["higher_is_better"] is True
    assert [f["name"] for f in doc["configs"][TASK]["filter_list"]] == FILTERS
    assert doc["n-samples"][TASK] == {"original": len(theirs), "effective": len(theirs)}


def test_sample_lines_per_item_and_filter(exported):
    _, _, lines, theirs = exported
    n = len(theirs)
    assert [(x["filter"], x["doc_id"]) for x in lines] == [(f, i) for f in FILTERS for i in range(n)]
    for x in lines:
        picked, values = theirs[x["doc_id"]]
        assert x["filtered_resps"] == [picked[x["filter"]]]
        assert x["metrics"] == ["exact_match"]
        assert x["exact_match"] == values[f"exact_match,{x['filter']}"], (x["doc_id"], x["filter"])
    schema = pytest.importorskip("lm_eval.result_schema")
    assert all(schema.SampleResult.__required_keys__ <= set(x) for x in lines)
    assert all(isinstance(a, str) for x in lines for a in x["filtered_resps"])
    # zeno's ids for a task with filters: doc_id.filter, each once
    assert len({f"{x['doc_id']}.{x['filter']}" for x in lines}) == len(lines) == 2 * n


def test_make_table_reads_each_filter(exported):
    utils = pytest.importorskip("lm_eval.utils", reason="pip install --no-deps lm-eval")
    _, res, _, theirs = exported
    table = utils.make_table(json.loads(res.read_text()))
    rows = [[c.strip() for c in r.strip("|").split("|")] for r in table.splitlines()[2:]]
    # columns: Tasks | Version | Filter | n-shot | Metric | (hib) | Value | ± | Stderr
    got = {(r[2], r[4]): (r[6], r[8], r[5]) for r in rows}
    for key, (value, stderr) in _lm_eval_means(theirs).items():
        metric, _, f = key.partition(",")
        shown, shown_se, arrow = got[(f, metric)]  # make_table prints 4 decimals (the writer may drop a 0)
        assert (float(shown), float(shown_se), arrow) == (pytest.approx(value, abs=5e-5),
                                                          pytest.approx(stderr, abs=5e-5), "↑"), table
    assert len(rows) == len(FILTERS), table


def test_wandb_logger_reads_each_filter_offline(exported, tmp_path):
    pytest.importorskip("wandb")
    pytest.importorskip("lm_eval.loggers", reason="pip install --no-deps lm-eval")
    pytest.importorskip("pandas")
    _, res, _, theirs = exported
    env = {**os.environ, "WANDB_MODE": "offline", "WANDB_SILENT": "true", "WANDB_DIR": str(tmp_path),
           "WANDB_CONFIG_DIR": str(tmp_path / "config"), "WANDB_CACHE_DIR": str(tmp_path / "cache")}
    r = subprocess.run([sys.executable, "-c", WANDB_SCRIPT, str(res), str(tmp_path)], capture_output=True, text=True,
                       timeout=300, env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    summary = json.loads(r.stdout.strip().splitlines()[-1])["summary"]
    for key, (value, stderr) in _lm_eval_means(theirs).items():
        metric, _, f = key.partition(",")
        assert summary[f"{TASK}/{key}"] == pytest.approx(value)
        assert summary[f"{TASK}/{metric}_stderr,{f}"] == pytest.approx(stderr)
    assert list(tmp_path.glob("wandb/offline-run-*/run-*.wandb"))
