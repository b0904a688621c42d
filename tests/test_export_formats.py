"""`glotbench export RUN --format lm-eval|csv|samples` on a run made against the stub server, each
command in a fresh subprocess."""

from __future__ import annotations

import csv
import json
import math
import os
import statistics
import subprocess
import sys

import pytest

TASKS = ["mm_eval.knowledge", "mm_eval.semantics"]


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
    tmp = tmp_path_factory.mktemp("export")
    base, proc = start_stub("--answer", "A")
    try:
        r = cli("run", "-m", "openai:stub", "--base-url", base, "-t", ",".join(TASKS), "-n", "6", "-o", "run",
                "--no-progress", "--bootstrap", "50", "--max-retries", "0", cwd=tmp)
    finally:
        stop(proc)
    assert r.returncode == 0, r.stderr
    return tmp / "run"


def test_lmeval_results_layout_and_values(run_dir):
    r = cli("runs", "export", str(run_dir), "--format", "lm-eval", "-o", str(run_dir / "lm"), cwd=run_dir.parent)
    assert r.returncode == 0, r.stderr
    ours = json.loads((run_dir / "results.json").read_text())
    [res_path] = list((run_dir / "lm").glob("*/results_*.json"))  # lm-eval: OUT/<model_name_sanitized>/
    lm = json.loads(res_path.read_text())
    assert res_path.parent.name == lm["model_name_sanitized"]
    for key in ("results", "configs", "versions", "n-shot", "higher_is_better", "n-samples", "config"):
        assert key in lm, key
    assert lm["config"]["model_args"]["model_id"] == ours["model"]["model_id"]
    date_id = res_path.stem.removeprefix("results_")
    for task in TASKS:
        want = ours["tasks"][task]["metrics"]["accuracy"]["value"]
        assert lm["results"][task]["acc,none"] == want
        assert lm["versions"][task] == float(ours["tasks"][task]["version"])
        assert lm["higher_is_better"][task] == {"acc": True}
        lines = [json.loads(x) for x in (res_path.parent / f"samples_{task}_{date_id}.jsonl").read_text().splitlines()]
        assert len(lines) == ours["tasks"][task]["n_items"] == 6
        for line in lines:
            for key in ("doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "acc"):
                assert key in line, key
        # lm-eval's stderr of a mean, restated: sample stdev / sqrt(n) over the per-item scores
        accs = [x["acc"] for x in lines]
        assert math.isclose(sum(accs) / len(accs), want, abs_tol=1e-5)
        assert len(set(accs)) > 1, "the stub always answers A: some items right, some wrong"
        assert math.isclose(lm["results"][task]["acc_stderr,none"], statistics.stdev(accs) / math.sqrt(len(accs)))


def test_csv_one_row_per_sample(run_dir):
    r = cli("runs", "export", str(run_dir), "--format", "csv", cwd=run_dir.parent)
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader((run_dir / "samples.csv").open(encoding="utf-8")))
    samples = [json.loads(x) for x in (run_dir / "samples.jsonl").read_text().splitlines()]
    assert len(rows) == len(samples) == 12
    assert list(rows[0])[:6] == ["task", "id", "idx", "status", "gold", "pred"] and "error" in rows[0]
    for row, s in zip(rows, samples):
        assert (row["task"], row["id"], row["gold"], row["pred"]) == (s["task"], s["sample_id"], str(s["gold"]), str(s["pred"]))
        assert float(row["correct"]) == s["values"]["correct"]


def test_samples_stays_the_default_and_bad_format_is_one_line(run_dir):
    (run_dir / "samples.jsonl").unlink()
    r = cli("runs", "export", str(run_dir), cwd=run_dir.parent)
    assert r.returncode == 0, r.stderr
    assert len((run_dir / "samples.jsonl").read_text().splitlines()) == 12
    bad = cli("runs", "export", str(run_dir), "--format", "parquet", cwd=run_dir.parent)
    assert bad.returncode != 0 and "unknown format 'parquet'" in bad.stderr


FIXTURE = __import__("pathlib").Path(__file__).parent / "fixtures" / "run_main_d456fe5"


def test_lmeval_on_an_older_run_directory_and_without_a_journal(tmp_path):
    """A run written by an older main (3 tasks incl. hulu.cb); then the same with only samples.jsonl left."""
    import shutil

    run = tmp_path / "run"
    shutil.copytree(FIXTURE, run)
    ours = json.loads((run / "results.json").read_text())
    for keep_journal in (True, False):
        if not keep_journal:
            (run / "journal.sqlite").unlink()
        out = tmp_path / f"lm_{keep_journal}"
        r = cli("runs", "export", str(run), "--format", "lm-eval", "-o", str(out), cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        [res_path] = list(out.glob("*/results_*.json"))
        lm = json.loads(res_path.read_text())
        assert set(lm["results"]) == set(ours["tasks"])
        for task, t in ours["tasks"].items():
            for m, v in t["metrics"].items():
                key = "acc" if m == "accuracy" else m
                assert lm["results"][task][f"{key},none"] == v["value"], (task, m)
            assert len(list(out.glob(f"*/samples_{task}_*.jsonl"))) == 1
        c = cli("runs", "export", str(run), "--format", "csv", "-o", str(tmp_path / f"s_{keep_journal}.csv"), cwd=tmp_path)
        assert c.returncode == 0, c.stderr
        assert len(list(csv.DictReader((tmp_path / f"s_{keep_journal}.csv").open(encoding="utf-8")))) == 9


def test_lmeval_keys_match_lm_evals_own_schema(run_dir):
    """Every key lm-eval's own result schema (lm_eval.result_schema, 0.4.13) marks as fixed is there,
    and ours outside it are only the documented ``glotbench`` block; sample lines likewise, with
    lm-eval's string forms (target, resps, filtered_resps) and ``gen_args_<i>/arg_<j>`` arguments."""
    schema = pytest.importorskip("lm_eval.result_schema", reason="pip install --no-deps lm-eval (schema check only)")
    out = run_dir / "lm_schema"
    r = cli("runs", "export", str(run_dir), "--format", "lm-eval", "-o", str(out), cwd=run_dir.parent)
    assert r.returncode == 0, r.stderr
    [res_path] = list(out.glob("*/results_*.json"))
    lm = json.loads(res_path.read_text())
    allowed = set(schema.EvalResults.__annotations__)
    assert set(lm) - allowed == {"glotbench"}, set(lm) - allowed
    for key in ("results", "group_subtasks", "configs", "versions", "n-shot", "higher_is_better", "n-samples", "config",
                "date", "task_hashes", "model_source", "model_name", "model_name_sanitized",
                "total_evaluation_time_seconds", "system_instruction", "chat_template"):
        assert key in lm, key
    assert set(lm["config"]) - set(schema._EvalConfig.__annotations__) == {"glotbench_settings"}
    for task in TASKS:
        assert schema._TaskMetrics.__required_keys__ <= set(lm["results"][task])
        assert lm["results"][task]["sample_len"] == 6 and lm["n-samples"][task]["effective"] == 6
        assert set(lm["task_hashes"]) == set(TASKS) and len(lm["task_hashes"][task]) == 64
        [path] = res_path.parent.glob(f"samples_{task}_*.jsonl")
        for line in map(json.loads, path.read_text().splitlines()):
            assert schema.SampleResult.__required_keys__ <= set(line)
            assert isinstance(line["target"], str)
            assert set(line["arguments"]) == {"gen_args_0"} and set(line["arguments"]["gen_args_0"]) == {"arg_0", "arg_1"}
            assert isinstance(line["arguments"]["gen_args_0"]["arg_1"], dict)  # the generation kwargs
            assert all(isinstance(x, str) for row in line["resps"] for x in row)
            assert all(isinstance(x, str) for x in line["filtered_resps"])


def test_inspect_log_reads_back_with_inspect_ai(run_dir):
    """`--format inspect` writes one .eval log per task through inspect_ai.log; inspect_ai.log.read_eval_log
    reads it back with the run's samples, per-item scores and metrics (with their 95% intervals)."""
    log_api = pytest.importorskip("inspect_ai.log", reason="pip install 'glotbench[inspect]'")
    out = run_dir / "inspect"
    r = cli("runs", "export", str(run_dir), "--format", "inspect", "-o", str(out), cwd=run_dir.parent)
    assert r.returncode == 0, r.stderr
    ours = json.loads((run_dir / "results.json").read_text())
    recs = [json.loads(x) for x in (run_dir / "samples.jsonl").read_text().splitlines()]
    for task in TASKS:
        log = log_api.read_eval_log(str(out / f"{task}.eval"))
        assert log.status == "success" and log.eval.task == task and log.eval.run_id == ours["fingerprint"]
        assert log.eval.model == f"glotbench/{ours['model']['model_id']}"
        mine = {r["sample_id"]: r for r in recs if r["task"] == task}
        assert len(log.samples) == len(mine) == 6
        for s in log.samples:
            rec = mine[str(s.id)]  # integer ids when every id is one (numeric order in Inspect)
            assert s.target == str(rec["gold"])
            assert s.output.completion == rec["outputs"][0]["text"]
            score = s.scores["glotbench"]
            assert score.value == rec["values"] and score.answer == rec["outputs"][0]["text"]
            assert score.metadata["pred"] == rec["pred"]
            assert isinstance(s.input, list) and s.input[-1].role == "user"  # chat messages kept as chat
        [ev] = log.results.scores
        acc = ours["tasks"][task]["metrics"]["accuracy"]
        assert ev.metrics["accuracy"].value == acc["value"]
        assert [ev.metrics["accuracy"].metadata["ci95_low"], ev.metrics["accuracy"].metadata["ci95_high"]] == acc["ci95"]
        assert log.results.completed_samples == ours["tasks"][task]["n_scored"]


def test_inspect_without_the_package_is_one_line(run_dir):
    code = ("import sys; sys.modules['inspect_ai'] = None  # the package is absent\n"
            "from glotbench.cli import main; sys.argv = ['glotbench', *sys.argv[1:]]; main()")
    out = run_dir / "inspect_absent"
    r = subprocess.run([sys.executable, "-c", code, "runs", "export", str(run_dir), "--format", "inspect", "-o", str(out)],
                       cwd=run_dir.parent, env={**os.environ, "NO_COLOR": "1"}, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 2 and "glotbench[inspect]" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not out.exists()
