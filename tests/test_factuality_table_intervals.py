"""The paper's factuality table (results.json ``factuality``) and the metric table (``metrics``,
``slices``) report intervals of the same numbers: drawn with the run's ``--seed`` and
``--bootstrap``, and, when no judge reply was unreadable (as here), the same intervals. (The table
once drew with seed 0 and 1,000 resamples whatever the run said, so one results.json held two
different intervals for CO, and ``--bootstrap 0`` did not turn the table's off.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_factuality_task import CSV_YAML

YAML = CSV_YAML.replace("name: my_trivia", "name: trivia_ci")  # the CSV task of test_factuality_task.py
PAIRS = (("CO", "factuality_co"), ("CGA", "factuality_cga"), ("F", "factuality_f"))


@pytest.fixture(scope="module")
def runs(tmp_path_factory, data_root):  # the grader prompt is read from the data folder
    """One judged task of 40 items (CORRECT / INCORRECT / NOT_ATTEMPTED mixed, two topics), run
    through the CLI in fresh processes with the default settings, ``--seed 7 --bootstrap 300`` and
    ``--bootstrap 0``; the model and the judge are the stub, answering by prompt substring."""
    from glotbench.testing.servers import start_stub, stop

    tmp = tmp_path_factory.mktemp("fact_ci")
    kinds = ["good", "good", "bad", "skip", "good"]
    rows = [f"q{k},Question {k} about {kinds[k % 5]}x?,gold{k},{'geo' if k % 3 else 'lit'}" for k in range(40)]
    (tmp / "items.csv").write_text("qid,problem,gold,topic\n" + "\n".join(rows) + "\n", encoding="utf-8")
    task = tmp / "trivia_ci.yaml"
    task.write_text(YAML % {"csv": tmp / "items.csv"}, encoding="utf-8")
    canned = [{"match": "Predicted answer: goodanswer", "response": "A"},  # the judge: its prompt holds the answer
              {"match": "Predicted answer: badanswer", "response": "B"},
              {"match": "Predicted answer: skipanswer", "response": "C"}]
    canned += [{"match": f"about {k}x?", "response": f"{k}answer"} for k in ("good", "bad", "skip")]  # the model
    (tmp / "canned.jsonl").write_text("\n".join(json.dumps(c) for c in canned), encoding="utf-8")
    base, proc = start_stub("--responses", str(tmp / "canned.jsonl"))
    out = {}
    try:
        for name, extra in (("default", []), ("seed7", ["--seed", "7", "--bootstrap", "300"]), ("none", ["--bootstrap", "0"])):
            cmd = [sys.executable, "-m", "glotbench", "run", "--model", "openai:stub", "--base-url", base,
                   "--judge", "openai:judge", "--judge-base-url", base, "--tasks", str(task),
                   "--output", str(tmp / name), "--no-progress", *extra]
            done = subprocess.run(cmd, env={**os.environ, "OPENAI_API_KEY": "x"}, capture_output=True, text=True,
                                  timeout=180)
            assert done.returncode == 0, done.stderr[-3000:]
            out[name] = json.loads((tmp / name / "results.json").read_text(encoding="utf-8"))["tasks"]["trivia_ci"]
    finally:
        stop(proc)
    return out


def _pairs(t: dict) -> list[tuple[str, list, list]]:
    """(where, the factuality table's interval, the metric table's interval) for every number both give."""
    fact = t["factuality"]
    got = [(f"overall {k}", fact["overall"]["ci"][k], t["metrics"][m]["ci95"]) for k, m in PAIRS]
    for topic, row in fact["by"]["topic"].items():
        got += [(f"{topic} {k}", row["ci"][k], t["slices"]["topic"][topic]["metrics"][m]["ci95"]) for k, m in PAIRS]
    return got


def test_the_graded_answers_are_mixed(runs):
    counts = runs["default"]["factuality"]["overall"]["counts"]
    assert counts == {"CORRECT": 24, "INCORRECT": 8, "NOT_ATTEMPTED": 8, "JUDGE_ERROR": 0}
    assert set(runs["default"]["factuality"]["by"]["topic"]) == {"geo", "lit"}


@pytest.mark.parametrize("name", ["default", "seed7"])
def test_the_table_gives_the_metric_tables_intervals(runs, name):
    pairs = _pairs(runs[name])
    assert len(pairs) == 9
    for where, table, metric in pairs:
        assert [round(x, 6) for x in table] == metric, (name, where)  # the metric table keeps 6 decimals
        assert table[0] is not None and table[0] < table[1], (name, where)  # real intervals, not both missing


def test_the_runs_seed_and_resamples_reach_the_table(runs):
    default, seed7 = runs["default"]["factuality"], runs["seed7"]["factuality"]
    assert [default["overall"]["ci"][k] for k, _ in PAIRS] != [seed7["overall"]["ci"][k] for k, _ in PAIRS]


def test_bootstrap_0_leaves_the_tables_intervals_out_too(runs):
    t = runs["none"]
    for where, table, metric in _pairs(t):
        assert table == metric == [None, None], where
    assert t["factuality"]["overall"]["CO"] == runs["default"]["factuality"]["overall"]["CO"] == pytest.approx(0.6)


def test_a_hook_written_before_the_settings_is_still_called():
    from glotbench.engine.runner import _extra_summary
    from glotbench.tasks.task import Task

    class Old(Task):
        def __init__(self):
            pass

        def extra_summary(self, records, out_dir):
            return {"old": len(records)}

    class New(Old):
        def extra_summary(self, records, out_dir, *, n_boot=1000, seed=0):
            return {"new": (n_boot, seed)}

    assert _extra_summary(Old(), [1, 2], None, n_boot=5, seed=9) == {"old": 2}
    assert _extra_summary(New(), [], None, n_boot=5, seed=9) == {"new": (5, 9)}
