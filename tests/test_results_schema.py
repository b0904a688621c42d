"""results.json is typed and versioned, and a metric definition in it is data (a kind and its
parameters, never a Python import path): a fresh run writes ``schema_version`` and no import path;
every committed run (the five suites' fixture runs, and files written by the previous version,
tests/fixtures/old_runs) is read through ``migrate()`` and every stored metric value and interval is
recomputed from its kind, equal to the stored one; a reader without a plugin's kind shows the stored
number and says why there is no paired test."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import glotbench.catalog; glotbench.catalog.build()  # noqa: E702  every built-in metric and kind
from glotbench.output.run_result import SCHEMA_VERSION, RunResult, migrate
from glotbench.report.items import scored_items
from glotbench.report.runs import load_run
from glotbench.scoring.metric_kinds import GENERIC_KINDS, METRIC_KINDS, OLD_FUNCTIONS
from glotbench.scoring.metrics import METRICS, Metric, bootstrap_ci, get_metric

REPO = Path(__file__).resolve().parents[1]
SRC = str(REPO / "src")
FIXTURES = REPO / "tests" / "fixtures"
RUNS = sorted(p.parent for p in [*FIXTURES.glob("suite_runs/*/results.json"), *FIXTURES.glob("old_runs/*/results.json")])
IMPORT_PATH = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_][\w.]*")  # module:qualname


def _env() -> dict:
    return {**os.environ, "OPENAI_API_KEY": "x", "PYTHONPATH": os.pathsep.join(p for p in (SRC, os.environ.get("PYTHONPATH", "")) if p)}


def _glotbench(*args: str, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "glotbench", *args], env=_env(), capture_output=True, text=True,
                          timeout=timeout)


def _label_task(folder: Path) -> Path:
    golds = ["A", "B", "A", "A", "B", "A"]
    rows = [{"id": f"q{k}", "question": f"Q{k}?", "choices": ["a", "b"], "answer": g} for k, g in enumerate(golds)]
    (folder / "data.json").write_text(json.dumps(rows), encoding="utf-8")
    path = folder / "labels.yaml"
    path.write_text("""name: t.labels
version: "1.0"
language: en
dataset: {format: json, splits: {test: data.json}, eval_split: test}
fields: {id: id, question: question, choices: choices, target: answer}
output_type: multiple_choice
prompt: {user: "{{ question }}"}
extractor: {name: choice}
scorer: label
metrics: [accuracy, macro_f1, weighted_f1, mcc, answered]
""", encoding="utf-8")
    return path


def test_a_fresh_run_writes_its_schema_version_and_no_import_path(stub_server, tmp_path):
    base = stub_server("--answer", "A")
    done = _glotbench("run", "-m", "openai:stub", "--base-url", base, "-t", str(_label_task(tmp_path)),
                      "-o", str(tmp_path / "run"), "--no-progress")
    assert done.returncode == 0, done.stderr[-2000:]
    text = (tmp_path / "run" / "results.json").read_text(encoding="utf-8")
    res = json.loads(text)
    assert res["schema_version"] == SCHEMA_VERSION == 2
    assert [ln for ln in text.splitlines() if '"function"' in ln] == []  # grep -n '"function"' finds nothing
    defs = res["tasks"]["t.labels"]["metric_definitions"]
    assert defs["macro_f1"]["kind"] == "label" and defs["macro_f1"]["params"] == {"stat": "macro_f1"}
    for d in defs.values():
        assert d["kind"] in GENERIC_KINDS
        assert not IMPORT_PATH.search(json.dumps(d["params"])), d  # parameters are words and numbers
    # the typed result is the file: reading it back and writing it again gives the same JSON
    assert RunResult.from_json(res).to_json() == res
    # the numbers: 4 of 6 answers (all "A") right, and a fresh process recomputes them from the kinds
    t = res["tasks"]["t.labels"]["metrics"]
    assert t["accuracy"]["value"] == pytest.approx(4 / 6, abs=1e-6) and t["answered"]["value"] == 1.0
    _recomputes_every_stored_number(tmp_path / "run")


def _recomputes_every_stored_number(run_dir: Path) -> int:
    """Each task metric of the run recomputed from its (migrated) definition over the run's scored
    samples: the value and the interval the run stored, to the 6 decimals it rounds to."""
    run = load_run(run_dir)
    cfg = run.results.get("config") or {}
    n_boot, seed = int(cfg.get("bootstrap") or 1000), int(cfg.get("seed") or 0)
    checked = 0
    for name, t in run.tasks.items():
        items = scored_items([s for s in run.samples if s.task == name and s.is_scored])
        for m, stored in (t.get("metrics") or {}).items():
            d = (t.get("metric_definitions") or {}).get(m)
            if not isinstance(d, dict):
                continue
            assert "function" not in d and d["kind"] in GENERIC_KINDS, (run_dir, name, d)
            metric = Metric.from_dict(d)
            value = metric(items) if items else float("nan")
            want = stored["value"]
            assert (want is None and (value != value)) or round(value, 6) == pytest.approx(want, abs=1e-9), \
                (run_dir.name, name, m, value, want)
            if stored.get("ci95") and stored["ci95"][0] is not None:
                lo, hi = bootstrap_ci(items, metric, n_resamples=n_boot, seed=seed)
                assert [round(lo, 6), round(hi, 6)] == pytest.approx(stored["ci95"], abs=1e-9), (run_dir.name, name, m)
            checked += 1
    return checked


@pytest.mark.parametrize("run_dir", RUNS, ids=[f"{p.parent.name}/{p.name}" for p in RUNS])
def test_every_committed_run_recomputes_every_number_from_its_migrated_definitions(run_dir):
    raw = json.loads((run_dir / "results.json").read_text(encoding="utf-8"))
    assert "schema_version" not in raw  # written by the previous version: read through migrate()
    assert _recomputes_every_stored_number(run_dir) > 3


def test_the_five_suites_and_the_old_files_are_all_here():
    names = {f"{p.parent.name}/{p.name}" for p in RUNS}
    assert {f"suite_runs/{s}" for s in ("czech_bench", "factuality", "hulu", "mm_eval", "openhueval")} <= names
    assert {"old_runs/czech_bench_v1", "old_runs/factuality_before_the_move"} <= names


@pytest.mark.parametrize("run_dir", RUNS, ids=[f"{p.parent.name}/{p.name}" for p in RUNS])
def test_migrate_maps_every_old_function_to_a_kind_and_keeps_everything_else(run_dir):
    raw = json.loads((run_dir / "results.json").read_text(encoding="utf-8"))
    new = migrate(raw)
    assert new["schema_version"] == SCHEMA_VERSION and migrate(new) == new and raw != new
    assert {k for k in new if k != "tasks"} == {k for k in raw if k != "tasks"} | {"schema_version"}
    for name, t in raw["tasks"].items():
        nt = new["tasks"][name]
        assert {k: v for k, v in nt.items() if k != "metric_definitions"} == {k: v for k, v in t.items() if k != "metric_definitions"}
        for m, d in (t.get("metric_definitions") or {}).items():
            got = nt["metric_definitions"][m]
            if "function" in d:  # the table names every function a committed file names
                assert d["function"] in OLD_FUNCTIONS, d["function"]
            assert "function" not in got and "per_item" not in got and got["kind"] in GENERIC_KINDS
            # what the definition says besides how to compute it is kept
            assert {k: got[k] for k in ("direction", "role", "format") if k in d} == {k: d[k] for k in ("direction", "role", "format") if k in d}
            # and it is the definition this version writes for the same registered metric
            if m in METRICS:
                assert {k: got[k] for k in ("kind", "params")} == {k: get_metric(m).to_dict()[k] for k in ("kind", "params")}, m
    assert not IMPORT_PATH.search(json.dumps({n: t.get("metric_definitions") for n, t in new["tasks"].items()}))
    typed = RunResult.from_json(raw)
    assert typed.to_json() == new
    head = next(iter(typed.tasks.values()))
    assert head.metrics and all(r.definition.get("kind") for r in head.metrics.values())


OLD = sorted(p.parent for p in FIXTURES.glob("old_runs/*/results.json"))


@pytest.mark.parametrize("run", OLD, ids=[p.name for p in OLD])
def test_an_old_file_re_reports_and_compares_in_a_fresh_process(run, tmp_path):
    done = _glotbench("runs", "report", str(run), "-o", str(tmp_path / "r.html"))
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-2000:]
    out = tmp_path / "paired.json"
    done = _glotbench("runs", "compare", "--paired", str(run), str(run), "--json", str(out))
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert "not installed" not in done.stdout + done.stderr
    rows = json.loads(out.read_text(encoding="utf-8"))["paired"]
    stored = json.loads((run / "results.json").read_text(encoding="utf-8"))["tasks"]
    # each metric recomputed on both sides (corpus ones from their kind) is the stored value
    assert rows
    for r in rows:
        want = stored[r["task"]]["metrics"][r["metric"]]["value"]
        assert r["score_a"] == pytest.approx(want, abs=1e-6) and r["difference"] == 0, r


def test_a_kind_this_process_does_not_have_shows_the_stored_number_and_says_why(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(FIXTURES / "old_runs" / "czech_bench_v1", run)
    res = migrate(json.loads((run / "results.json").read_text(encoding="utf-8")))
    task = "czech_bench.ctkfacts_full"
    res["tasks"][task]["metric_definitions"]["macro_f1"].update(kind="nopkg.macro_f1", params={})
    (run / "results.json").write_text(json.dumps(res), encoding="utf-8")
    m = Metric.from_dict(res["tasks"][task]["metric_definitions"]["macro_f1"])
    assert not m.available
    done = _glotbench("runs", "compare", "--paired", str(run), str(run))
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-2000:]
    flat = " ".join(done.stdout.split())
    assert f"{task} macro_f1: its kind 'nopkg.macro_f1' is not installed here" in flat
    assert "no paired test is computed" in flat
    done = _glotbench("runs", "report", str(run), "-o", str(tmp_path / "r.html"))  # the stored values, as written
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-2000:]


def test_a_file_from_a_newer_glotbench_is_one_line():
    from glotbench.errors import DataError

    with pytest.raises(DataError, match=r"field 'schema_version' is 99; this glotbench reads versions up to 2"):
        migrate({"schema_version": 99, "tasks": {}}, "x/results.json")


def test_every_generic_kind_is_registered_and_value_tested_through_a_registered_metric():
    from value_oracles import METRIC_ORACLES

    for kind in GENERIC_KINDS:
        assert kind in METRIC_KINDS, kind
        users = [n for n in METRICS.names() if get_metric(n).kind == kind]
        assert any(n in METRIC_ORACLES for n in users), f"kind {kind!r}: no registered metric of it has a value oracle"


def test_a_benchmark_kind_takes_a_dotted_name_and_no_generic_word():
    from glotbench.errors import TaskSpecError
    from glotbench.scoring.metric_kinds import MetricKind, register_kind

    with pytest.raises(TaskSpecError, match="is named '<package>.<kind>'"):
        register_kind(MetricKind("topic_accuracy", fn=lambda items: 0.0))
    with pytest.raises(Exception, match="already registered"):
        register_kind(MetricKind("label", fn=lambda items: 0.0))


def test_a_version_1_plugin_function_is_found_by_its_metric_name_when_the_plugin_is_here():
    """Version 1 named a plugin's function (``mypkg.metrics:first_letter``): not in the table, so the
    migrated definition's kind is the metric's name, found through the metric registered under that
    name (the plugin installed); without it, the metric is not available (stored numbers only)."""
    from glotbench.scoring.metric_kinds import MetricKind
    from glotbench.scoring.metrics import ScoredItem, register_metric

    old = {"name": "test_first_letter", "kind": "corpus", "function": "mypkg.metrics:first_letter", "direction": "higher"}
    assert not Metric.from_dict(old).available
    kind = MetricKind("test.first_letter", fn=lambda items: sum(str(i.pred)[:1] == str(i.gold)[:1] for i in items) / len(items))
    register_metric(Metric("test_first_letter", kind=kind))
    try:
        m = Metric.from_dict(old)
        assert m.to_dict()["kind"] == "test_first_letter" and m.available
        items = [ScoredItem(gold="Praha", pred="Paříž"), ScoredItem(gold="Brno", pred="Ostrava")]
        assert m(items) == 0.5
    finally:
        METRICS.pop("test_first_letter")
        METRIC_KINDS.pop("test.first_letter")
