"""HuLU tasks: real data, Hungarian prompts, paper metrics (checked against scikit-learn), unlabelled
test splits, and leaderboard submission files that the leaderboard's own validator accepts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from sklearn.metrics import accuracy_score, f1_score, matthews_corrcoef

from glotbench.engine.config import RunConfig
from glotbench.engine.session import run_evaluation
from glotbench.errors import DataError, TaskSpecError
from glotbench.leaderboard.submission_format import validate_submission
from glotbench.benchmarks.hulu.submissions import (
    build_submissions,
    majority_label,
    write_submissions,
)
from glotbench.tasks.registry import all_specs, make_task, resolve

# split -> record count, from data/hulu/SOURCE.md
COUNTS = {
    "hulu.cola": {"train": 7274, "dev": 910, "test": 910},
    "hulu.copa": {"train": 400, "dev": 100, "test": 500},
    "hulu.sst": {"train": 9328, "dev": 1165, "test": 1165},
    "hulu.wnli": {"train": 562, "dev": 60, "test": 134},
    "hulu.rte": {"train": 2132, "dev": 243, "test": 2123},
    "hulu.cb": {"train": 250, "dev": 103, "test": 250},
}
# the paper's metric (MSZNY 2023, section 4) comes first
PAPER_METRIC = {"hulu.cola": "mcc", "hulu.copa": "mcc", "hulu.rte": "mcc", "hulu.sst": "accuracy",
                "hulu.wnli": "accuracy", "hulu.cb": "weighted_f1"}
SKLEARN = {"mcc": matthews_corrcoef, "accuracy": accuracy_score,
           "weighted_f1": lambda g, p: f1_score(g, p, average="weighted", labels=sorted(set(g)), zero_division=0)}
MAX_BYTES = 5 << 20


@pytest.fixture(scope="module")
def hulu_data():
    from glotbench.paths import find_data_root

    root = find_data_root()
    if root is None or not (root / "hulu" / "HuCOLA").is_dir():
        pytest.skip("HuLU data not found: put the shared data folder at ../shared/data or set GLOTBENCH_DATA")
    return root


def task(name):
    return make_task(*all_specs()[name])


def test_suite_has_the_six_tasks_with_paper_metrics():
    names = {t.name for t in resolve(["hulu"])}
    assert names == set(COUNTS)
    for name in names:
        spec = task(name).spec
        assert spec.language == "hu" and spec.metrics[0] == PAPER_METRIC[name]
        assert spec.dataset.eval_split == ("test" if name == "hulu.wnli" else "dev")


@pytest.mark.parametrize("name", sorted(COUNTS))
def test_real_data_loads_with_labels_only_where_published(hulu_data, name):
    t = task(name)
    for split, n in COUNTS[name].items():
        samples = t.samples(split)
        assert len(samples) == n
        labelled = split != "test" or name == "hulu.wnli"
        assert all((s.target is not None) == labelled for s in samples)
        if labelled:  # gold is the dataset's own label string
            assert {s.target for s in samples} <= set(t.spec.options["values"])


def test_commitmentbank_bom_file_loads(hulu_data):
    assert (hulu_data / "hulu/HuCommitmentBank/hucb_dev.json").read_bytes()[:3] == b"\xef\xbb\xbf"
    s = task("hulu.cb").samples("dev")[0]
    assert s.id == "0" and s.target in {"entailment", "contradiction", "neutral"}


def test_sst_prompt_is_hungarian_with_fewshot_from_train(hulu_data):
    t = task("hulu.sst")
    s = t.samples("dev")[0]
    msgs = t.chat_messages(s)
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "user", "assistant", "user", "assistant", "user"]
    assert "magyarul" in msgs[0]["content"]
    last = msgs[-1]["content"]
    assert "A. pozitív\nB. semleges\nC. negatív" in last and "(A, B vagy C)" in last and s.vars["text"] in last
    train = {x.vars["text"]: x for x in t.samples("train")}
    shots = [m["content"].split("Mondat: ")[1].split("\n\n")[0] for m in msgs[1:-1:2]]
    answers = [m["content"] for m in msgs[2:-1:2]]
    # each shot is a train sentence, answered with its gold option label
    assert [train[text].vars["answer_label"] for text in shots] == answers
    # seeded: the same shots every time
    assert t.chat_messages(s) == msgs


def test_copa_prompt_asks_cause_or_effect_in_hungarian(hulu_data):
    t = task("hulu.copa")
    by_q = {}
    for s in t.samples("dev"):
        by_q.setdefault(s.vars["question"], s)
    cause, effect = t.render_user(by_q["cause"]), t.render_user(by_q["effect"])
    assert "Kérdés: Mi volt az oka?" in cause and "Kérdés: Mi lett a következménye?" in effect
    s = by_q["cause"]
    assert f"1. {s.choices[0]}\n2. {s.choices[1]}" in cause and "(1 vagy 2)" in cause
    plain = t.plain_prompt(s)
    assert plain.endswith("Válasz:") and plain.count("Premissza:") == 4


@pytest.mark.parametrize("name,words", [("hulu.cola", ["A. helyes", "B. helytelen"]),
                                        ("hulu.rte", ["A. következik", "B. nem következik"]),
                                        ("hulu.wnli", ["A. következik", "B. nem következik"]),
                                        ("hulu.cb", ["A. következik", "B. ellentmond", "C. semleges"])])
def test_option_words_are_hungarian(hulu_data, name, words):
    t = task(name)
    text = t.render_user(t.samples()[0])
    assert all(w in text for w in words)


def test_bad_records_give_one_line_errors(hulu_data, tmp_path):
    spec = yaml.safe_load(Path(all_specs()["hulu.sst"][1]).read_text(encoding="utf-8"))
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"id": "0", "Sent": "x", "label": "positive"}, {"id": "1", "Sent": "y"}]), encoding="utf-8")
    spec["dataset"]["splits"]["dev"] = str(bad)
    path = tmp_path / "sst.yaml"
    path.write_text(yaml.safe_dump(spec, allow_unicode=True), encoding="utf-8")
    t = resolve([str(path)])[0]
    with pytest.raises(DataError, match=r"bad.json: record 1: missing field 'label'"):
        t.samples("dev")
    bad.write_text(json.dumps([{"id": "0", "Sent": "x", "label": "pozitív"}]), encoding="utf-8")
    with pytest.raises(DataError, match=r"record 0: field 'label': label 'pozitív' is not one of"):
        t.samples("dev")
    spec["options"]["texts"] = ["pozitív", "semleges"]
    path.write_text(yaml.safe_dump(spec, allow_unicode=True), encoding="utf-8")
    with pytest.raises(TaskSpecError, match=r"sst.yaml: field 'options': .*2 option texts/fields for 3 values"):
        resolve([str(path)])[0].samples("dev")


def test_loglikelihood_mode_predicts_dataset_labels(hulu_data):
    from glotbench.models.base import LoglikelihoodResult

    t = task("hulu.sst")
    s = next(x for x in t.samples("dev") if x.target == "neutral")
    lps = [LoglikelihoodResult(logprob=lp, is_greedy=False, n_tokens=1) for lp in (-3.0, -1.0, -2.0)]  # B wins
    scored = t.score(s, lps, mode="loglikelihood")
    assert scored.pred == "neutral" and scored.values["correct"] == 1.0
    assert t.metric_names("loglikelihood") == ["accuracy", "accuracy_norm", "accuracy_norm_bytes", "accuracy_norm_tokens",
                                               "ll_ece", "ll_brier", "ll_auroc_macro"]
    # the option probabilities (softmax of the log-likelihoods) are keyed by the dataset's labels, as the gold is
    import math

    z = sum(math.exp(x) for x in (-3.0, -1.0, -2.0))
    probs = {k: v for k, v in scored.values.items() if k.startswith("ll_p:")}
    assert set(probs) == {f"ll_p:{v}" for v in s.vars["option_values"].values()}
    assert probs["ll_p:neutral"] == pytest.approx(math.exp(-1.0) / z)
    assert scored.extracted["pred_norm"] == scored.extracted["pred_norm_tokens"] == "neutral"  # dataset labels
    unlabelled = task("hulu.sst").samples("test")[0]
    assert t.score(unlabelled, lps, mode="loglikelihood").pred == "neutral"


# ---------------------------------------------------------------- through the engine

def _fake_rule(item_id: str, gold_label: str, labels: list[str]) -> str:
    """Deterministic fake answers: right for 2 items in 3, a fixed wrong-or-right label otherwise,
    unparseable ("?") for every 11th item."""
    k = int(item_id)
    if k % 11 == 0:
        return "?"
    return gold_label if k % 3 else labels[k % len(labels)]


FAKE_TEMPLATE = ("\n\nGOLD={% if (item_id|int) % 11 == 0 %}?{% elif (item_id|int) % 3 %}{{ answer_label }}"
                 "{% else %}{{ labels[(item_id|int) % (labels|length)] }}{% endif %}")


def _echo_task_files(tmp_path: Path) -> list[str]:
    """Copies of the six task files whose prompt ends with the fake answer for the echo stub."""
    paths = []
    for name in sorted(COUNTS):
        spec = yaml.safe_load(Path(all_specs()[name][1]).read_text(encoding="utf-8"))
        spec["fields"]["item_id"] = "id"
        spec["prompt"]["user"] += FAKE_TEMPLATE
        p = tmp_path / f"{name}.yaml"
        p.write_text(yaml.safe_dump(spec, allow_unicode=True), encoding="utf-8")
        paths.append(str(p))
    return paths


def test_metrics_match_sklearn_on_real_dev_sets(hulu_data, stub_server, tmp_path):
    base = stub_server("--echo-gold", "--answer", "?")
    files = _echo_task_files(tmp_path)
    cfg = RunConfig(model="openai:stub", base_url=base, tasks=files, num_fewshot=0, limit=150,
                    output=str(tmp_path / "run"), bootstrap=20)
    results, out = run_evaluation(cfg, show_progress=False)
    records = [json.loads(line) for line in (out / "samples.jsonl").read_text(encoding="utf-8").splitlines()]
    for name in sorted(COUNTS):
        t = task(name)
        values = t.spec.options["values"]
        samples = t.samples(t.spec.dataset.eval_split, 150)
        golds, preds = [], []
        for s in samples:
            fake = _fake_rule(s.id, s.vars["answer_label"], s.labels)
            golds.append(s.target)
            preds.append("<unparseable>" if fake == "?" else values[s.labels.index(fake)])
        res = results["tasks"][name]
        assert res["n_scored"] == len(samples) and res["n_unparseable"] == preds.count("<unparseable>")
        for metric in t.spec.metrics:
            assert res["metrics"][metric]["value"] == pytest.approx(SKLEARN[metric](golds, preds), abs=1e-6), (name, metric)
        # stored predictions and gold are the dataset's own labels
        mine = [r for r in records if r["task"] == name]
        assert {r["pred"] for r in mine} <= set(values) | {None}
        assert {r["gold"] for r in mine} <= set(values)
        assert 0.2 < res["metrics"][PAPER_METRIC[name]]["value"] < 1.0


def _validate(path: Path, name: str, hulu_root: Path):
    t = task(name)
    ids = {s.id for s in t.samples("test")}
    return validate_submission(path.read_bytes(), ids, set(t.spec.options["values"]), MAX_BYTES, expected_task=name)


def test_test_split_runs_without_labels_and_writes_valid_submissions(hulu_data, stub_server, tmp_path):
    base = stub_server("--answer", "A")  # "A" is no HuCoPA option (1/2): every HuCoPA answer falls back
    cfg = RunConfig(model="openai:stub", base_url=base, tasks=["hulu.cb", "hulu.copa", "hulu.wnli"], split="test",
                    output=str(tmp_path / "run"), bootstrap=20)
    results, out = run_evaluation(cfg, show_progress=False)
    cb = results["tasks"]["hulu.cb"]
    assert cb["n_scored"] == 250 and cb["n_errors"] == 0 and list(cb["metrics"]) == ["answered"]
    assert cb["metrics"]["answered"]["value"] == 1.0
    assert list(results["tasks"]["hulu.wnli"]["metrics"]) == ["accuracy"]  # HuWNLI's test labels are public
    rec = next(json.loads(line) for line in (out / "samples.jsonl").open(encoding="utf-8"))
    assert rec["gold"] is None and rec["pred"] == "entailment" and rec["values"] == {}

    summaries = {s.task: s for s in build_submissions(out, tmp_path / "subs")}
    assert set(summaries) == {"hulu.cb", "hulu.copa", "hulu.wnli"}
    copa = summaries["hulu.copa"]
    assert copa.n_fallback == 500 and copa.n_predicted == 0 and copa.fallback_label == majority_label(task("hulu.copa"))
    assert summaries["hulu.cb"].n_fallback == 0 and summaries["hulu.cb"].n_predicted == 250
    for name, s in summaries.items():
        parsed, problems = _validate(s.path, name, hulu_data)
        assert problems == [], (name, problems)
        assert parsed.task == name and parsed.model.startswith("openai:stub")
    doc = json.loads(summaries["hulu.copa"].path.read_text(encoding="utf-8"))
    assert doc["glotbench"]["n_fallback"] == 500 and {p["label"] for p in doc["predictions"]} == {copa.fallback_label}
    assert set(json.loads(summaries["hulu.cb"].path.read_text(encoding="utf-8"))["predictions"][0].values()) == {"0", "entailment"}


def test_partial_run_submission_is_rejected_unless_filled(hulu_data, stub_server, tmp_path):
    base = stub_server("--answer", "B")
    cfg = RunConfig(model="openai:stub", base_url=base, tasks=["hulu.cb"], split="test", limit=5,
                    output=str(tmp_path / "run"), bootstrap=20)
    _, out = run_evaluation(cfg, show_progress=False)
    [s] = build_submissions(out, tmp_path / "a")
    assert (s.n_predicted, s.n_missing) == (5, 245)
    _, problems = _validate(s.path, "hulu.cb", hulu_data)
    assert any("245 missing id(s)" in p for p in problems)
    [path] = write_submissions(out, tmp_path / "b", fill_missing=True)
    parsed, problems = _validate(path, "hulu.cb", hulu_data)
    assert problems == [] and list(parsed.predictions.values())[:5] == ["contradiction"] * 5
    # an interrupted run has only its journal: the predictions come from there
    (out / "samples.jsonl").unlink()
    (out / "results.json").unlink()
    [s2] = build_submissions(out, tmp_path / "c", model_name="mine")
    assert (s2.n_predicted, s2.n_missing) == (5, 245)
    assert json.loads(s2.path.read_text(encoding="utf-8"))["model"] == "mine"


def test_submission_command_and_dev_runs_are_skipped(hulu_data, stub_server, tmp_path):
    from typer.testing import CliRunner

    from glotbench.cli import _register, app

    base = stub_server("--answer", "A")
    _, out = run_evaluation(RunConfig(model="openai:stub", base_url=base, tasks=["hulu.cb"], split="test",
                                      output=str(tmp_path / "test-run"), bootstrap=20), show_progress=False)
    _register()
    res = CliRunner().invoke(app, ["runs", "submission", str(out), "-o", str(tmp_path / "subs")])
    assert res.exit_code == 0, res.output
    assert "hulu.cb" in res.output and (tmp_path / "subs" / "hulu.cb.json").is_file()

    _, dev = run_evaluation(RunConfig(model="openai:stub", base_url=base, tasks=["hulu.cb"], limit=3,
                                      output=str(tmp_path / "dev-run"), bootstrap=20), show_progress=False)
    [s] = build_submissions(dev, tmp_path / "none")
    assert s.path is None and "--split test" in s.skipped
    res = CliRunner().invoke(app, ["runs", "submission", str(dev), "-o", str(tmp_path / "none")])
    assert res.exit_code == 1 and "skipped" in res.output
