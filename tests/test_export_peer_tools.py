"""The peers' own tools read glotbench's exports:

* ``export --format lm-eval`` through lm-eval's ``utils.make_table``, its ``WandbLogger`` (wandb in
  offline mode, a fresh process) and its ``scripts/zeno_visualize.py`` reading logic. The zeno script
  is not in lm-eval's wheel (and needs ``zeno_client``): its file discovery is lm-eval's own
  ``lm_eval.utils`` functions, imported; its ``generate_dataset`` / ``generate_system_df`` are restated
  below from lm-evaluation-harness' scripts/zeno_visualize.py, the parts that read the files. Both
  readers take ``sample[metric]`` for every metric in the task's ``metric_list``: a corpus metric
  (mcc, ll_ece) or a byte-normalised accuracy listed without a per-sample value was a ``KeyError``.
* ``export --format inspect`` through ``inspect_ai.log.read_eval_log``: token counts, per-sample
  times, the answer choices and ids in numeric order (0, 1, 2, ..., 10, 11).

The run: hulu.cola (mcc) in --mode loglikelihood and, generated, mm_eval.syntax and hulu.cola, 12 items
each (ids past 9), against the stub server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

N = 12


def cli(*args: str, cwd) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "glotbench", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    from glotbench.paths import find_data_root
    from glotbench.testing.servers import start_stub, stop

    root = find_data_root()
    if root is None or not (root / "mm_eval").is_dir() or not (root / "hulu").is_dir():
        pytest.skip("benchmark data not found: put the shared data folder at ../shared/data or set GLOTBENCH_DATA")
    os.environ["GLOTBENCH_DATA"] = str(root)
    tmp = tmp_path_factory.mktemp("peers")
    base, proc = start_stub("--answer", "A")
    try:
        ll = cli("run", "-m", "openai:stub", "--base-url", base, "--mode", "loglikelihood", "-M", "logprobs_trusted=true",
                 "-t", "hulu.cola", "-n", str(N), "-o", "ll", "--no-progress", "--bootstrap", "20", "--max-retries", "0",
                 cwd=tmp)
        gen = cli("run", "-m", "openai:stub", "--base-url", base, "-t", "mm_eval.syntax,hulu.cola", "-n", str(N), "-o",
                  "gen", "--no-progress", "--bootstrap", "20", "--max-retries", "0", cwd=tmp)
    finally:
        stop(proc)
    assert ll.returncode == 0, ll.stderr
    assert gen.returncode == 0, gen.stderr
    for run in ("ll", "gen"):
        e = cli("runs", "export", run, "--format", "lm-eval", "-o", f"lm_{run}", cwd=tmp)
        assert e.returncode == 0, e.stderr
    return tmp


def _lmeval_files(tmp: Path, run: str) -> tuple[dict, dict[str, list[dict]], Path]:
    [res] = list((tmp / f"lm_{run}").glob("*/results_*.json"))
    results = json.loads(res.read_text())
    samples = {}
    for task in results["configs"]:
        [f] = list(res.parent.glob(f"samples_{task}_*.jsonl"))
        samples[task] = [json.loads(x) for x in f.read_text().splitlines()]
    return results, samples, res.parent


@pytest.mark.parametrize("run", ["ll", "gen"])
def test_make_table_reads_the_export(runs, run):
    utils = pytest.importorskip("lm_eval.utils", reason="pip install --no-deps lm-eval")
    results, _, _ = _lmeval_files(runs, run)
    table = utils.make_table(json.loads(json.dumps(results)))
    ours = json.loads((runs / run / "results.json").read_text())
    for task, t in ours["tasks"].items():
        for m, v in t["metrics"].items():
            name = {"accuracy": "acc", "accuracy_norm": "acc_norm"}.get(m, m)
            row = next((r for r in table.splitlines() if f"|{name}" in r.replace(" ", "")), None)
            assert row is not None, f"{task}/{name} missing from make_table:\n{table}"
            if v["value"] is not None:
                assert f"{v['value']:.4f}" in table


# ---- lm-evaluation-harness scripts/zeno_visualize.py, restated: the parts that read the files ----
def zeno_generate_dataset(data, config):
    import pandas as pd

    ids = [x["doc_id"] for x in data] if not config.get("filter_list") else [f"{x['doc_id']}.{x['filter']}" for x in data]
    labels = [x["target"] for x in data]
    instance = [""] * len(ids)
    if config["output_type"] == "loglikelihood":
        instance = [x["arguments"]["gen_args_0"]["arg_0"] for x in data]
        labels = [x["arguments"]["gen_args_0"]["arg_1"] for x in data]
    elif config["output_type"] == "multiple_choice":
        instance = [x["arguments"]["gen_args_0"]["arg_0"] + "\n\n" + "\n".join([f"- {y[1]}" for y in x["arguments"]])
                    for x in data]
    elif config["output_type"] in ("loglikelihood_rolling", "generate_until"):
        instance = [x["arguments"]["gen_args_0"]["arg_0"] for x in data]
    return pd.DataFrame({"id": ids, "doc_id": [x["doc_id"] for x in data], "data": instance,
                         "input_len": [len(x) for x in instance], "labels": labels, "output_type": config["output_type"]})


def zeno_generate_system_df(data, config):
    import pandas as pd

    ids = [x["doc_id"] for x in data] if not config.get("filter_list") else [f"{x['doc_id']}.{x['filter']}" for x in data]
    system_dict = {"id": ids, "doc_id": [x["doc_id"] for x in data]}
    system_dict["output"] = [""] * len(ids)
    if config["output_type"] == "loglikelihood":
        system_dict["output"] = ["correct" if x["filtered_resps"][0][1] is True else "incorrect" for x in data]
    elif config["output_type"] == "multiple_choice":
        system_dict["output"] = [", ".join([str(y[0]) for y in x["filtered_resps"]]) for x in data]
        system_dict["num_answers"] = [len(x["filtered_resps"]) for x in data]
    elif config["output_type"] in ("loglikelihood_rolling", "generate_until"):
        system_dict["output"] = [str(x["filtered_resps"][0]) for x in data]
    metrics = {metric["metric"]: [x[metric["metric"]] for x in data] for metric in config["metric_list"]}
    system_dict.update(metrics)
    return pd.DataFrame(system_dict)


@pytest.mark.parametrize("run", ["ll", "gen"])
def test_zeno_script_reads_the_export(runs, run):
    utils = pytest.importorskip("lm_eval.utils", reason="pip install --no-deps lm-eval")
    pytest.importorskip("pandas")
    _, _, model_dir = _lmeval_files(runs, run)
    # the script's discovery: lm-eval's own functions over the files of the model folder
    files = [p.as_posix() for p in model_dir.iterdir() if p.is_file()]
    latest = utils.get_latest_filename(utils.get_results_filenames(files))
    configs = json.load(open(latest, encoding="utf-8"))["configs"]
    json.load(open(latest, encoding="utf-8"))["config"]["model_args"]  # the script reads it
    ours = json.loads((runs / run / "results.json").read_text())
    assert set(configs) == set(ours["tasks"])
    for task, config in configs.items():
        sample_files = [p for p in utils.get_sample_results_filenames(files) if utils.get_file_task_name(Path(p).name) == task]
        data = [json.loads(line) for line in open(utils.get_latest_filename(sample_files), encoding="utf-8")]
        ds = zeno_generate_dataset(data, config)
        sysdf = zeno_generate_system_df(data, config)
        assert len(ds) == len(sysdf) == N
        recs = {r["idx"]: r for r in map(json.loads, (runs / run / "samples.jsonl").read_text().splitlines())
                if r["task"] == task}
        defs = ours["tasks"][task]["metric_definitions"]
        for m in ours["tasks"][task]["metrics"]:
            name = {"accuracy": "acc", "accuracy_norm": "acc_norm"}.get(m, m)
            col = list(sysdf[name])
            for doc_id, value in zip(sysdf["doc_id"], col):
                rec = recs[doc_id]
                if name == "acc":
                    assert value == rec["values"]["correct"]
                elif defs[m].get("kind") == "mean":
                    assert value == rec["values"][defs[m]["params"]["key"]]
                else:  # a corpus metric: the item's (gold, prediction), as lm-eval logs mcc
                    assert value == [rec["gold"], rec["pred"]]
        if config["output_type"] == "multiple_choice":
            assert list(sysdf["num_answers"]) == [len(recs[i]["outputs"]) for i in sysdf["doc_id"]]


WANDB_SCRIPT = textwrap.dedent("""
    import ast, json, sys
    from pathlib import Path
    import wandb
    from lm_eval.loggers import WandbLogger

    res_path, out = Path(sys.argv[1]), sys.argv[2]
    results = json.loads(res_path.read_text())

    def leaf(x):  # lm-eval's sanitize_list wrote every leaf as str(); the logger gets the live values
        if isinstance(x, list):
            return [leaf(y) for y in x]
        try:
            return ast.literal_eval(x)
        except (ValueError, SyntaxError):
            return x

    samples = {}
    for task in results["configs"]:
        [f] = res_path.parent.glob(f"samples_{task}_*.jsonl")
        lines = [json.loads(x) for x in f.read_text().splitlines()]
        for s in lines:  # the inverse of EvaluationTracker.save_results_samples: arguments as tuples
            s["arguments"] = [tuple(a[f"arg_{j}"] for j in range(len(a))) for a in
                              (s["arguments"][f"gen_args_{i}"] for i in range(len(s["arguments"])))]
            if results["configs"][task]["output_type"] != "generate_until":  # generated answers are texts already
                s["resps"], s["filtered_resps"] = leaf(s["resps"]), leaf(s["filtered_resps"])
        samples[task] = lines
    logger = WandbLogger(init_args={"project": "glotbench-export", "mode": "offline", "dir": out})
    logger.post_init(results)
    logger.log_eval_result()
    logger.log_eval_samples(samples)
    summary = {k: logger.run.summary[k] for k in logger.run.summary.keys() if "/" in k and not k.startswith("_")}
    offline_dir = logger.run.dir
    logger.run.finish()
    print(json.dumps({"summary": summary, "dir": offline_dir}, default=str))
""")


@pytest.mark.parametrize("run", ["ll", "gen"])
def test_wandb_logger_reads_the_export_offline(runs, run, tmp_path):
    pytest.importorskip("wandb")
    pytest.importorskip("lm_eval.loggers", reason="pip install --no-deps lm-eval")
    pytest.importorskip("pandas")
    [res] = list((runs / f"lm_{run}").glob("*/results_*.json"))
    env = {**os.environ, "WANDB_MODE": "offline", "WANDB_SILENT": "true", "WANDB_DIR": str(tmp_path),
           "WANDB_CONFIG_DIR": str(tmp_path / "config"), "WANDB_CACHE_DIR": str(tmp_path / "cache")}
    r = subprocess.run([sys.executable, "-c", WANDB_SCRIPT, str(res), str(tmp_path)], capture_output=True, text=True,
                       timeout=300, env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    ours = json.loads((runs / run / "results.json").read_text())
    for task, t in ours["tasks"].items():
        for m, v in t["metrics"].items():
            name = {"accuracy": "acc", "accuracy_norm": "acc_norm"}.get(m, m)
            if v["value"] is not None:
                assert out["summary"][f"{task}/{name}"] == pytest.approx(v["value"])
    assert list(tmp_path.glob("wandb/offline-run-*/run-*.wandb"))  # the offline run was written


def test_inspect_log_has_tokens_times_choices_and_numeric_ids(runs):
    log_api = pytest.importorskip("inspect_ai.log", reason="pip install 'glotbench[inspect]'")
    r = cli("runs", "export", "gen", "--format", "inspect", "-o", "insp", cwd=runs)
    assert r.returncode == 0, r.stderr
    recs = [json.loads(x) for x in (runs / "gen" / "samples.jsonl").read_text().splitlines()]
    import sqlite3

    db = sqlite3.connect(runs / "gen" / "journal.sqlite")
    latency = dict(db.execute("SELECT key, latency_s FROM responses").fetchall())
    db.close()
    from glotbench.tasks.registry import resolve

    for task in ("mm_eval.syntax", "hulu.cola"):
        log = log_api.read_eval_log(str(runs / "insp" / f"{task}.eval"))
        assert [s.id for s in log.samples] == list(range(N))  # 0, 1, 2, ..., 10, 11: numeric order
        mine = {int(r["sample_id"]): r for r in recs if r["task"] == task}
        [t] = resolve([task])
        options = {s.index: s.choices for s in t.samples()}
        total_in = total_out = 0
        for s in log.samples:
            rec = mine[s.id]
            o = rec["outputs"][0]
            assert s.output.usage.input_tokens == o["input_tokens"] and s.output.usage.output_tokens == o["output_tokens"]
            assert s.model_usage[log.eval.model].total_tokens == o["input_tokens"] + o["output_tokens"]
            total_in, total_out = total_in + o["input_tokens"], total_out + o["output_tokens"]
            want = sum(latency[k] for k in rec["request_keys"])
            assert s.total_time == pytest.approx(want) and s.working_time == pytest.approx(want) and want > 0
            assert s.choices == options[rec["idx"]] and len(s.choices) >= 2
        usage = log.stats.model_usage[log.eval.model]
        assert (usage.input_tokens, usage.output_tokens) == (total_in, total_out)
