"""lm-eval's ``process_results`` delegated (``--lm-eval-hooks``) for its other output types, on the task
files as shipped in the installed lm-eval wheel: truthfulqa_mc2 (``multiple_choice``: the normalised
probability mass of the true options, from every option's log-likelihood) and mlqa_de_de
(``generate_until``: MLQA's own German exact match and F1, with its ``process_docs``). Each is converted
and run by the CLI (fresh processes) against the stub on local records in the dataset's shape; every
item's values equal lm-eval's own ``process_results`` on the same log-likelihoods / output texts, and
the task's numbers their mean (the aggregation the files name). Without ``--lm-eval-hooks`` such a file
is refused in one line; a metric whose aggregation is not ``mean`` is refused too."""

from __future__ import annotations

import json

import pytest
from test_lm_eval_filters import lm_eval_scores
from test_lm_eval_zoo_import import _tasks_dir, cli, lm_eval_requests

N = 6
ANSWERS = ["Berlin", "die Stadt Berlin.", "  Goethe ", "weiß nicht", "1871", "Rhein und Main"]


def _mc2(i: int) -> dict:
    return {"question": f"Question number {i}?",
            "mc1_targets": {"choices": [f"True {i}", "False"], "labels": [1, 0]},
            "mc2_targets": {"choices": [f"Right {i}", "Also right", f"Wrong {i}", "Very wrong answer"],
                            "labels": [1, 1, 0, 0] if i % 2 else [1, 0, 0, 0]}}


def _mlqa(i: int, split: str) -> dict:
    golds = [["Berlin"], ["Berlin", "die Stadt Berlin"], ["Goethe"], ["Schiller"], ["1871"], ["am Rhein"]][i % N]
    return {"context": f"Ein Text ({split} q{i}) über {golds[0]}.", "question": f"Was ist Nummer {i}?", "id": f"{split}{i}",
            "answers": {"answer_start": [0] * len(golds), "text": golds}}


def _convert_and_run(tmp_path, rel, task, splits, *run_flags, responses=None):
    from glotbench.testing.servers import start_stub, stop

    (tmp_path / "data").mkdir()
    files = {}
    for split, recs in splits.items():
        files[split] = tmp_path / "data" / f"{task}_{split}.jsonl"
        files[split].write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs), encoding="utf-8")
    c = cli("tasks", "import", str(_tasks_dir() / rel), "--lm-eval-hooks", "--data-dir", "data", "-o",
            f"{task}.yaml", cwd=tmp_path)
    assert c.returncode == 0, c.stderr
    stub_args = ("--responses", str(responses)) if responses else ("--answer", "A")
    base, proc = start_stub(*stub_args)
    try:
        r = cli("run", "-m", "openai:stub", "--base-url", base, "-t", f"{task}.yaml", *run_flags, "-o", "run",
                "--no-progress", "--bootstrap", "20", "--max-retries", "0", cwd=tmp_path)
    finally:
        stop(proc)
    assert r.returncode == 0, r.stderr[-2000:]
    recs = {int(x["idx"]): x for x in map(json.loads, (tmp_path / "run" / "samples.jsonl").read_text().splitlines())}
    [entry] = json.loads((tmp_path / "run" / "results.json").read_text())["tasks"].values()
    return recs, entry, files


def test_truthfulqa_mc2_process_results_delegated(tmp_path):
    from lm_eval.api.task import ConfigurableTask  # noqa: F401 - lm-eval importable, or skip below
    from lm_eval.tasks._yaml_loader import load_yaml

    tasks_dir = _tasks_dir()
    rel = "truthfulqa/truthfulqa_mc2.yaml"
    recs, entry, files = _convert_and_run(tmp_path, rel, "truthfulqa_mc2", {"validation": [_mc2(i) for i in range(N)]},
                                          "--mode", "loglikelihood", "-M", "logprobs_trusted=true")
    theirs = lm_eval_requests(tasks_dir, rel, 0, files)
    fn = load_yaml(tasks_dir / rel, resolve_func=True)["process_results"]  # lm-eval's own utils.process_results_mc2
    want = []
    for i in range(N):
        lls = recs[i]["extracted"]["logprobs"]
        assert len(lls) == len(theirs[i]) == 4 and len(set(lls)) > 1
        want.append(float(fn(_mc2(i), [(ll, False) for ll in lls])["acc"]))
        assert recs[i]["values"]["acc"] == pytest.approx(want[-1], rel=1e-12)
    assert entry["mode"] == "loglikelihood" and list(entry["metrics"]) == ["mean:acc"]
    assert entry["metrics"]["mean:acc"]["value"] == pytest.approx(sum(want) / N)
    assert 0 < min(want) < max(want) < 1  # a probability mass, not a 0/1 accuracy
    # export --format lm-eval keys it as lm-eval does (acc,none), its stderr lm-eval's mean_stderr
    from lm_eval.api.metrics import mean_stderr

    e = cli("runs", "export", "run", "--format", "lm-eval", "-o", "lm", cwd=tmp_path)
    assert e.returncode == 0, e.stderr
    [res] = (tmp_path / "lm").glob("*/results_*.json")
    lm = json.loads(res.read_text())
    [(name, got)] = lm["results"].items()
    assert {k: v for k, v in got.items() if "," in k} == {"acc,none": pytest.approx(sum(want) / N),
                                                          "acc_stderr,none": pytest.approx(mean_stderr(want))}
    assert lm["higher_is_better"][name] == {"acc": True}
    [samples] = res.parent.glob("samples_*.jsonl")
    lines = [json.loads(x) for x in samples.read_text().splitlines()]
    assert [x["acc"] for x in lines] == pytest.approx(want) and {x["filter"] for x in lines} == {"none"}


def test_mlqa_process_results_and_process_docs_delegated(tmp_path):
    tasks_dir = _tasks_dir()
    rel = "mlqa/mlqa_de_de.yaml"
    (tmp_path / "responses.jsonl").write_text("".join(json.dumps({"match": f"(test q{i})", "response": a}) + "\n"
                                                      for i, a in enumerate(ANSWERS)), encoding="utf-8")
    recs, entry, files = _convert_and_run(tmp_path, rel, "mlqa_de_de",
                                          {s: [_mlqa(i, s) for i in range(N)] for s in ("validation", "test")},
                                          "-M", "chat=false", responses=tmp_path / "responses.jsonl")
    theirs = lm_eval_scores(tasks_dir, rel, 0, files, dict(enumerate(ANSWERS)))
    for i in range(N):
        assert recs[i]["outputs"][0]["text"] == ANSWERS[i]
        _, values = theirs[i]
        assert {k: recs[i]["values"][k] for k in ("exact_match", "f1")} == {
            "exact_match": values["exact_match,none"], "f1": values["f1,none"]}, i
    assert list(entry["metrics"]) == ["mean:exact_match", "mean:f1"]
    for m in ("exact_match", "f1"):
        assert entry["metrics"][f"mean:{m}"]["value"] == pytest.approx(sum(v[f"{m},none"] for _, v in theirs.values()) / N)
    f1s = [v["f1,none"] for _, v in theirs.values()]
    assert 0 < sum(f1s) and any(0 < f < 1 for f in f1s)  # partial credit: lm-eval's F1 ran, not an exact match


def test_without_hooks_process_results_is_refused_in_one_line(tmp_path):
    r = cli("tasks", "import", str(_tasks_dir() / "truthfulqa" / "truthfulqa_mc2.yaml"), "-o", "out.yaml",
            cwd=tmp_path)
    assert r.returncode == 2 and not (tmp_path / "out.yaml").exists()
    [line] = r.stderr.strip().splitlines()
    assert "process_results" in line and "utils.process_results_mc2" in line


def test_a_delegated_metric_not_averaged_by_mean_is_refused(tmp_path):
    import yaml

    _tasks_dir()
    (tmp_path / "utils.py").write_text("def pr(doc, results):\n    return {'f1': (1, 1)}\n", encoding="utf-8")
    (tmp_path / "t.yaml").write_text(yaml.safe_dump({
        "task": "t", "dataset_path": "x", "output_type": "generate_until", "test_split": "test",
        "doc_to_text": "{{q}}", "doc_to_target": "{{a}}", "metric_list": [{"metric": "f1"}]})
        + "process_results: !function utils.pr\n", encoding="utf-8")
    r = cli("tasks", "import", "t.yaml", "--lm-eval-hooks", "-o", "out.yaml", cwd=tmp_path)
    assert r.returncode == 2 and not (tmp_path / "out.yaml").exists()
    [line] = r.stderr.strip().splitlines()
    assert "metric_list.f1: aggregation its default" in line


def test_a_multiple_choice_task_in_generate_mode_is_refused_before_any_request(tmp_path):
    """lm-eval's multiple_choice prompt shows no options: generate mode would score any reply as an
    answer. The run says so in one line and sends nothing; --mode loglikelihood runs."""
    import httpx

    from glotbench.testing.servers import start_stub, stop

    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "truthfulqa_mc2_validation.jsonl").write_text(
        "".join(json.dumps(_mc2(i)) + "\n" for i in range(2)), encoding="utf-8")
    c = cli("tasks", "import", str(_tasks_dir() / "truthfulqa" / "truthfulqa_mc1.yaml"), "--data-dir", "data",
            "-o", "mc1.yaml", cwd=tmp_path)
    assert c.returncode == 0, c.stderr
    (tmp_path / "data" / "truthfulqa_mc1_validation.jsonl").write_text(
        (tmp_path / "data" / "truthfulqa_mc2_validation.jsonl").read_text(), encoding="utf-8")
    base, proc = start_stub("--answer", "A")
    try:
        r = cli("run", "-m", "openai:stub", "--base-url", base, "-t", "mc1.yaml", "-o", "run", "--no-progress",
                "--max-retries", "0", cwd=tmp_path)
        log = httpx.get(base.replace("/v1", "/_log"), timeout=10).json()["log"]
        ok = cli("run", "-m", "openai:stub", "--base-url", base, "-t", "mc1.yaml", "-o", "run_ll", "--no-progress",
                 "--mode", "loglikelihood", "-M", "logprobs_trusted=true", "--bootstrap", "20", "--max-retries", "0",
                 cwd=tmp_path)
    finally:
        stop(proc)
    assert r.returncode == 2 and log == [] and not (tmp_path / "run" / "samples.jsonl").exists()
    [line] = r.stderr.strip().splitlines()
    assert "mc1.yaml" in line and "--mode loglikelihood" in line and "shows no options" in line
    assert ok.returncode == 0, ok.stderr[-2000:]
