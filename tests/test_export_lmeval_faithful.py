"""`export --format lm-eval` of a 3-shot log-likelihood HuLU run, read by lm-eval's own code.

lm-eval's side is built from lm-eval's documented output format (running lm-eval's own model offline
on HuLU is not possible here: no hub, no HuLU task in lm-eval): its ``multiple_choice`` rule
(``ConfigurableTask.process_results``: ``acc`` = argmax of the options' log-likelihoods is the gold
index, ``acc_norm`` = argmax of log-likelihood / option length in characters), its ``mean`` and
``mean_stderr`` aggregations (``lm_eval.api.metrics``), and its results layout (``results`` /
``versions`` / ``n-shot`` / ``higher_is_better``), fed with the log-likelihoods the run journaled and
the gold index read from the dataset file. Both go through ``lm_eval.utils.make_table``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

TASK = "hulu.cb"
N = 6


def cli(*args: str, cwd) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "glotbench", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    from glotbench.paths import find_data_root
    from glotbench.testing.servers import start_stub, stop

    root = find_data_root()
    if root is None or not (root / "hulu" / "HuCommitmentBank").is_dir():
        pytest.skip("HuLU data not found: put the shared data folder at ../shared/data or set GLOTBENCH_DATA")
    os.environ["GLOTBENCH_DATA"] = str(root)
    tmp = tmp_path_factory.mktemp("lmeval")
    base, proc = start_stub("--answer", "A")  # echoes per-character log-probabilities (stub_openai.echo_logprobs)
    try:
        r = cli("run", "-m", "openai:stub", "--base-url", base, "-M", "logprobs_trusted=true", "--mode", "loglikelihood",
                "-t", TASK, "-n", str(N), "-o", "run", "--no-progress", "--bootstrap", "50", "--max-retries", "0", cwd=tmp)
    finally:
        stop(proc)
    assert r.returncode == 0, r.stderr
    e = cli("runs", "export", "run", "--format", "lm-eval", "-o", "lm", cwd=tmp)
    assert e.returncode == 0, e.stderr
    [res] = list((tmp / "lm").glob("*/results_*.json"))
    [samples] = list(res.parent.glob(f"samples_{TASK}_*.jsonl"))
    return {"dir": tmp, "root": root, "results": json.loads(res.read_text()),
            "lines": [json.loads(x) for x in samples.read_text().splitlines()],
            "ours": json.loads((tmp / "run" / "results.json").read_text()),
            "records": [json.loads(x) for x in (tmp / "run" / "samples.jsonl").read_text().splitlines()]}


def _spec() -> dict:
    import glotbench

    return yaml.safe_load((Path(glotbench.__file__).parent / "benchmarks" / "hulu" / "tasks" / "cb.yaml").read_text())


def _dev_records(root: Path) -> list[dict]:
    spec = _spec()
    return json.loads((root / spec["dataset"]["splits"]["dev"]).read_text(encoding="utf-8-sig"))


def lmeval_reference(run) -> dict:
    """What lm-eval writes for this task: its multiple_choice rule and aggregations, restated."""
    import math
    import statistics

    import numpy as np

    def mean_stderr(xs):  # lm_eval.api.metrics.mean_stderr: sample_stddev(arr) / sqrt(len(arr))
        return statistics.stdev(xs) / math.sqrt(len(xs))

    values = _spec()["options"]["values"]
    dev = _dev_records(run["root"])
    acc, acc_norm = [], []
    for rec in sorted(run["records"], key=lambda r: r["idx"]):
        lls = np.array(rec["extracted"]["logprobs"])
        gold = values.index(dev[rec["idx"]]["label"])  # lm-eval's doc_to_target for multiple_choice: the index
        choices = ["A", "B", "C"]  # doc_to_choice: the option labels scored after target_delimiter " "
        completion_len = np.array([float(len(c)) for c in choices])
        acc.append(1.0 if int(np.argmax(lls)) == gold else 0.0)
        acc_norm.append(1.0 if int(np.argmax(lls / completion_len)) == gold else 0.0)
    version = float(_spec()["version"])
    return {
        "results": {TASK: {"alias": TASK, "acc,none": sum(acc) / len(acc), "acc_stderr,none": mean_stderr(acc),
                           "acc_norm,none": sum(acc_norm) / len(acc_norm), "acc_norm_stderr,none": mean_stderr(acc_norm)}},
        "group_subtasks": {TASK: []},
        "versions": {TASK: version},
        "n-shot": {TASK: 3},
        "higher_is_better": {TASK: {"acc": True, "acc_norm": True}},
        "n-samples": {TASK: {"original": len(dev), "effective": N}},
    }


def _rows(table: str) -> list[list[str]]:
    rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in table.splitlines() if line.startswith("|")]
    return rows[2:]  # header and the |---| line


def test_make_table_rows_equal_lmevals_for_a_3_shot_loglikelihood_task(run):
    pytest.importorskip("pytablewriter", reason="lm_eval.utils.make_table needs pytablewriter")
    make_table = pytest.importorskip("lm_eval.utils", reason="pip install --no-deps lm-eval").make_table

    ref = lmeval_reference(run)
    ours = _rows(make_table(run["results"]))
    theirs = _rows(make_table(ref))
    assert len(theirs) == 2 and theirs[0][3] == "3"
    # the rows lm-eval writes, in its order (metrics sorted by name: acc, acc_norm come first)
    assert ours[:2] == theirs, (ours, theirs)
    # after them only glotbench's own metrics, named as glotbench names them (docs/export-formats.md)
    assert {r[4] for r in ours[2:]} == {"accuracy_norm_bytes", "accuracy_norm_tokens", "weighted_f1", "ll_ece", "ll_brier",
                                        "ll_auroc_macro"}


def test_results_fields_are_lmevals(run):
    ref, lm = lmeval_reference(run), run["results"]
    assert lm["n-shot"] == {TASK: 3}  # the task's own 3 shots, not the run's (absent) override
    assert lm["n-samples"] == ref["n-samples"]  # original = the dev split's size, not the --limit
    assert lm["n-samples"][TASK]["original"] == 103
    assert lm["configs"][TASK]["output_type"] == "multiple_choice"
    assert lm["configs"][TASK]["num_fewshot"] == 3
    for k in ("acc,none", "acc_norm,none", "acc_stderr,none", "acc_norm_stderr,none"):
        assert lm["results"][TASK][k] == pytest.approx(ref["results"][TASK][k], abs=5e-7), k  # results.json rounds to 6 places
    assert run["ours"]["tasks"][TASK]["num_fewshot"] == 3 and run["ours"]["tasks"][TASK]["n_dataset"] == 103


def test_sample_lines_carry_the_record_and_the_gold_index(run):
    values = _spec()["options"]["values"]
    dev = _dev_records(run["root"])
    assert len(run["lines"]) == N
    for line in run["lines"]:
        rec = dev[line["doc_id"]]
        assert line["doc"] == rec  # the dataset record itself, as lm-eval's doc
        assert line["target"] == str(values.index(rec["label"]))  # lm-eval: str(doc_to_target) = the index
        args = line["arguments"]
        assert set(args) == {"gen_args_0", "gen_args_1", "gen_args_2"}
        assert [a["arg_1"] for a in args.values()] == [" A", " B", " C"]
        assert args["gen_args_0"]["arg_0"].count("Válasz:") == 4  # three shots, then the item
        assert set(line) >= {"acc", "acc_norm"}
