"""`glotbench compare` on real runs made here: three stub "models" answering A, B and C on real
Klokánek and MM-Eval items, plus a Mongolian task and an English-prompt twin (`counterpart`).
The printed numbers are checked against the analysis library run on the same files."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from glotbench.report.analysis.crosslingual import crosslingual_table
from glotbench.report.analysis.paired import mcnemar, paired_bootstrap
from glotbench.report.analysis.ranks import rank_movement
from glotbench.cli import _register, app
from glotbench.engine.config import RunConfig
from glotbench.engine.session import run_evaluation
from glotbench.paths import resolve_data_file
from glotbench.tasks.registry import all_specs
from glotbench.testing.servers import start_stub, stop

TASKS = ["czech_bench.klokanek", "mm_eval.knowledge", "xl.knowledge_mn", "xl.knowledge_en"]


def _twin_tasks(folder):
    """mm_eval.knowledge as a pair: the Mongolian original and an English-prompt twin."""
    spec = yaml.safe_load(all_specs()["mm_eval.knowledge"][1].read_text(encoding="utf-8"))
    mn = {**spec, "name": "xl.knowledge_mn", "suites": ["xl"], "counterpart": "xl.knowledge_en"}
    en = {**spec, "name": "xl.knowledge_en", "suites": ["xl"], "language": "en", "counterpart": "xl.knowledge_mn",
          "prompt": {**spec["prompt"], "system": "You are a helpful assistant.", "answer_cue": "Answer:"}}
    for d in (mn, en):
        (folder / f"{d['name']}.yaml").write_text(yaml.safe_dump(d, allow_unicode=True), encoding="utf-8")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    for rel in ("czech_klokanek/dataset.json", "mm_eval/knowledge_eval.json"):
        if not resolve_data_file(rel).is_file():
            pytest.skip(f"benchmark data not found ({rel}); put shared/data in place or set GLOTBENCH_DATA")
    root = tmp_path_factory.mktemp("compare")
    (root / "tasks").mkdir()
    _twin_tasks(root / "tasks")
    mp = pytest.MonkeyPatch()
    mp.setenv("GLOTBENCH_TASKS_PATH", str(root / "tasks"))
    out = {}
    try:
        for name, answer in (("A", "A"), ("B", "Odpověď: B"), ("C", "C")):
            base, proc = start_stub("--answer", answer)
            try:
                cfg = RunConfig(model="openai:stub", base_url=base, tasks=TASKS, limit=24, output=str(root / f"run_{name}"),
                                bootstrap=50, retry_base_delay=0.01)
                run_evaluation(cfg, show_progress=False)
            finally:
                stop(proc)
            out[name] = root / f"run_{name}"
        yield out
    finally:
        mp.undo()


def _cli(*args):
    _register()
    res = CliRunner().invoke(app, ["runs", "compare", *map(str, args)])
    assert res.exit_code == 0, (res.output, res.exception)
    return res.output


def _results(run):
    return json.loads((run / "results.json").read_text())["tasks"]


def test_crosslingual(runs, tmp_path):
    out = _cli("--crosslingual", *runs.values(), "--json", tmp_path / "x.json")
    rows = []
    for name, run in runs.items():
        t = _results(run)
        # a score the run marked invalid (over 50% unparseable) is missing, as Czech-Bench's "-"
        score = {k: None if t[k]["status"] == "invalid" else t[k]["metrics"]["accuracy"]["value"]
                 for k in ("xl.knowledge_mn", "xl.knowledge_en")}
        rows.append((f"openai:stub (run_{name})", "xl.knowledge_mn accuracy", score["xl.knowledge_mn"], score["xl.knowledge_en"]))
    expected = crosslingual_table(rows)
    assert expected.models["openai:stub (run_B)"].n_missing == 1  # "Odpověď: B" is no Mongolian/English answer
    for g in expected.models.values():
        assert f"{100 * g.average_relative_gap:.1f}%" in out if not math.isnan(g.average_relative_gap) else True
    for r in expected.rows:
        if r.native is not None and r.english is not None:
            assert f"{r.native:.3f}" in out and f"{r.english:.3f}" in out
    got = json.loads((tmp_path / "x.json").read_text())["crosslingual"]["models"]
    for m, g in expected.models.items():
        assert got[m]["n_pairs"] == g.n_pairs
        if g.n_pairs:
            assert got[m]["average_relative_gap"] == pytest.approx(g.average_relative_gap)
    assert "Average relative gap" in out


def test_ranks(runs, tmp_path):
    # czech_bench.klokanek's headline is Czech-Bench's cb_accuracy (unparseable answers out of the denominator),
    # undefined for stub runs whose answers the reference rule cannot read: rank on glotbench's accuracy
    out = _cli("--ranks", *runs.values(), "--a", "mm_eval", "--b", "czech_bench.klokanek", "--metric", "accuracy",
               "--json", tmp_path / "r.json")
    # suite score = mean of its tasks' metric; mm_eval has only knowledge in these runs. A score the
    # run marks invalid (run B's Czech "Odpověď: B" on the Mongolian task: nothing parses) is no
    # score: that model is left out of the side, with a note (issue 41; --crosslingual does the same)
    sa = {f"openai:stub (run_{n})": _results(r)["mm_eval.knowledge"]["metrics"]["accuracy"]["value"] for n, r in runs.items()
          if _results(r)["mm_eval.knowledge"]["status"] != "invalid"}
    sb = {f"openai:stub (run_{n})": _results(r)["czech_bench.klokanek"]["metrics"]["accuracy"]["value"] for n, r in runs.items()}
    assert len(sa) == 2 and "openai:stub (run_B)" not in sa
    exp = rank_movement(sa, sb)
    got = json.loads((tmp_path / "r.json").read_text())["ranks"]
    assert [(r["model"], r["rank_a"], r["rank_b"], r["movement"]) for r in got["rows"]] == \
        [(r.model, r.rank_a, r.rank_b, r.movement) for r in exp.rows]
    for r in exp.rows:
        assert r.movement in out and f"{r.score_b:.3f}" in out
    assert "openai:stub (run_B): left out of A (its mm_eval.knowledge score is invalid)" in out
    if not math.isnan(exp.tau):
        assert f"Kendall's tau-b = {exp.tau:.3f}" in out


def test_paired(runs, tmp_path):
    # run B's answers ("Odpověď: B") are unparseable by mm_eval's rule: its accuracy is invalid, never a number
    out_b = _cli("--paired", runs["A"], runs["B"], "--n-boot", 200, "--json", tmp_path / "pb.json")
    got_b = json.loads((tmp_path / "pb.json").read_text())
    assert ("mm_eval.knowledge", "accuracy") not in {(r["task"], r["metric"]) for r in got_b["paired"]}
    bad = {(r["task"], r["metric"]): r for r in got_b["invalid"]}
    assert bad[("mm_eval.knowledge", "accuracy")]["invalid"] == "B"
    assert bad[("mm_eval.knowledge", "accuracy")]["difference"] is None
    assert "invalid" in next(x for x in out_b.splitlines() if "mm_eval.knowledge" in x and "accuracy" in x)

    a, b = runs["A"], runs["C"]
    out = _cli("--paired", a, b, "--n-boot", 2000, "--json", tmp_path / "p.json")
    got = {(r["task"], r["metric"]): r for r in json.loads((tmp_path / "p.json").read_text())["paired"]}

    def load(run):
        return {(s["task"], s["sample_id"]): s for s in map(json.loads, (run / "samples.jsonl").open())}

    sa, sb = load(a), load(b)
    for task in ("czech_bench.klokanek", "mm_eval.knowledge"):
        keys = sorted(k for k in sa if k[0] == task and k in sb)
        ca = [float(sa[k]["pred"] is not None and str(sa[k]["pred"]) == str(sa[k]["gold"])) for k in keys]
        cb = [float(sb[k]["pred"] is not None and str(sb[k]["pred"]) == str(sb[k]["gold"])) for k in keys]
        # the CLI keeps the journal order; the statistics do not depend on it except the bootstrap draw
        boot = paired_bootstrap(np.array(ca), np.array(cb), n=2000, seed=0)
        mc = mcnemar(ca, cb)
        row = got[(task, "accuracy")]
        assert row["n_items"] == len(keys)
        assert row["difference"] == pytest.approx(boot.difference)
        assert (row["mcnemar_b"], row["mcnemar_c"]) == (mc.b, mc.c)
        assert row["p_value"] == pytest.approx(mc.p_value)
        assert abs(row["low"] - boot.low) < 0.1 and abs(row["high"] - boot.high) < 0.1
        assert f"{boot.difference:+.3f}" in out and f"{mc.b}/{mc.c}" in out


def test_compare_needs_one_mode(runs):
    from glotbench.errors import GlotbenchError

    _register()
    res = CliRunner().invoke(app, ["runs", "compare", str(runs["A"])])
    assert isinstance(res.exception, GlotbenchError) and "exactly one" in str(res.exception)
