"""Every metric declares a role (headline / secondary / diagnostic); every built-in task gets a headline
that is a score, never a parse rate, and the reference's metric heads a task that lists it first."""

from __future__ import annotations

import pytest

from glotbench.scoring.metrics import METRICS, ROLES, Metric, get_metric
from glotbench.scoring.roles import headline_metric, headline_metrics, metric_roles
from glotbench.tasks.registry import all_specs


def _heads(task: str) -> tuple[list[str], str | None]:
    spec = all_specs()[task][0]
    defs = [get_metric(m) for m in spec.metrics]
    return headline_metrics(defs), headline_metric(defs)


def test_every_registered_metric_declares_a_known_role_that_survives_results_json():
    for name in METRICS.names():
        m = get_metric(name)
        assert m.role in ROLES, name
        back = Metric.from_dict(m.to_dict())
        assert (back.role, back.measured, back.parsed_key) == (m.role, m.measured, m.parsed_key), name
    assert get_metric("cb_parsed").role == "diagnostic" and get_metric("answered").role == "diagnostic"
    assert get_metric("cb_mae").role == "secondary" and get_metric("factuality_na").role == "secondary"


def test_every_builtin_task_has_a_headline_score():
    specs = all_specs()
    assert len(specs) > 40
    for task, (spec, _) in specs.items():
        defs = [get_metric(m) for m in spec.metrics]
        head = headline_metric(defs)
        assert head is not None and get_metric(head).role == "headline", (task, head)
        if any(m.startswith("cb_") for m in spec.metrics):  # Czech-Bench: the reference rule is the headline
            assert head.startswith("cb_"), (task, head)


@pytest.mark.parametrize("task, heads", [
    ("czech_bench.anli", ["cb_accuracy", "cb_macro_f1"]),      # not accuracy / macro_f1 (same measures), not cb_parsed
    ("czech_bench.gsm8k", ["cb_accuracy"]),                   # cb_mae / cb_mre secondary, numeric_match a duplicate
    ("czech_bench.mmlu", ["cb_topic_accuracy"]),
    ("czech_bench.klokanek", ["cb_accuracy"]),
    ("mm_eval.reasoning", ["numeric_match"]),
    ("hulu.cola", ["mcc", "accuracy"]),                       # the HuLU headline MCC first
    ("openhueval.hu_standardfib", ["blank_accuracy_reference", "question_accuracy"]),
    ("openhueval.hu_proverbrea_2cq", ["accuracy_2cq"]),
    ("chinese_simpleqa", ["factuality_co", "factuality_cga", "factuality_f"]),
])
def test_headline_metrics_of_builtin_tasks(task, heads):
    got, head = _heads(task)
    assert got == heads and head == heads[0]


def test_roles_as_a_task_uses_them():
    defs = [get_metric(m) for m in ("cb_accuracy", "cb_macro_f1", "accuracy", "macro_f1", "cb_parsed")]
    assert metric_roles(defs) == {"cb_accuracy": "headline", "cb_macro_f1": "headline", "accuracy": "secondary",
                                  "macro_f1": "secondary", "cb_parsed": "diagnostic"}
    # only diagnostics: the first metric stands in
    assert headline_metric([get_metric("cb_parsed")]) == "cb_parsed" and headline_metrics([get_metric("cb_parsed")]) == []
    with pytest.raises(ValueError, match="role"):
        Metric("x", key="x", role="main")  # type: ignore[arg-type]


def test_rank_table_ranks_on_the_headline_not_a_parse_rate_listed_first(tmp_path):
    """`compare --ranks` by default ranks on each task's headline: a task listing the diagnostic
    `answered` before `accuracy` (a run written before roles: the registered roles apply) is ranked
    on accuracy; --metric answered ranks on that instead."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    from scipy.stats import rankdata

    scores = {"m1": {"answered": 1.0, "accuracy": 0.30}, "m2": {"answered": 0.9, "accuracy": 0.80},
              "m3": {"answered": 0.5, "accuracy": 0.55}}
    dirs = []
    for model, s in scores.items():
        d = tmp_path / model
        d.mkdir()
        tasks = {t: {"language": "en", "status": "ok", "metrics": {m: {"value": v} for m, v in s.items()}} for t in ("x", "y")}
        (d / "results.json").write_text(json.dumps({"model": {"model_id": model}, "tasks": tasks}), encoding="utf-8")
        dirs.append(str(d))
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}

    def ranks(*extra: str) -> dict[str, int]:
        out = tmp_path / "r.json"
        done = subprocess.run([sys.executable, "-m", "glotbench", "runs", "compare", "--ranks", *dirs, "--a", "x", "--b", "y",
                               *extra, "--json", str(out)], capture_output=True, text=True, env=env, timeout=120)
        assert done.returncode == 0, done.stderr
        return {r["model"]: r["rank_a"] for r in json.loads(out.read_text())["ranks"]["rows"]}

    def expected(metric: str) -> dict[str, int]:  # competition ranks, 1 = best
        models = list(scores)
        r = rankdata([-scores[m][metric] for m in models], method="min")
        return {m: int(k) for m, k in zip(models, r)}

    assert ranks() == expected("accuracy") == {"m1": 3, "m2": 1, "m3": 2}
    assert ranks("--metric", "answered") == expected("answered") == {"m1": 1, "m2": 2, "m3": 3}
