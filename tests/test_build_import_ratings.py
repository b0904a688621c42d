"""`build review import-ratings RUN_DIR SHEET...` (issue 55; Czech-Bench §4.1's human evaluation of
model outputs): human ratings joined on a real run's sample ids (the stub as the model), their
agreement with the automatic per-item scores (Spearman's rho / Cohen's kappa) with a percentile
bootstrap interval, checked against plain restatements (tests/value_oracles.py); the report shows
it; a sheet naming a sample the run lacks is one line, nothing written. Fresh processes."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from value_oracles import plain_cohen_kappa, plain_rating_bootstrap, plain_spearman

from glotbench.build.human_ratings import bootstrap, statistic

REPO = Path(__file__).resolve().parents[1]
TINY = REPO / "tests" / "fixtures" / "tiny_task" / "tiny.yaml"


def gb(*args: str, cwd: Path, check: bool = True) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    p = subprocess.run([sys.executable, "-m", "glotbench", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    if check:
        assert p.returncode == 0, p.stdout + p.stderr
    return p


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= 1e-9


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 5), st.sampled_from([0.0, 0.5, 1.0])), min_size=0, max_size=25))
def test_spearman_equals_the_plain_restatement(pairs):
    h, a = [float(x) for x, _ in pairs], [y for _, y in pairs]
    want = plain_spearman(h, a) if len(h) >= 2 else float("nan")
    assert _same(statistic("rating", h, a), want)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("abc"), st.sampled_from("abc")), min_size=0, max_size=25))
def test_cohen_kappa_equals_the_plain_restatement(pairs):
    h, a = [x for x, _ in pairs], [y for _, y in pairs]
    want = plain_cohen_kappa(h, a) if len(h) >= 2 and len(set(h) | set(a)) >= 2 else float("nan")
    assert _same(statistic("label", h, a), want)


@pytest.mark.parametrize("kind", ["rating", "label"])
def test_bootstrap_interval_equals_the_plain_loop(kind):
    import random

    rng = random.Random(7)
    if kind == "rating":
        h = [float(rng.randint(1, 5)) for _ in range(15)]
        a = [float(x >= 3) if rng.random() < 0.8 else float(rng.randint(0, 1)) for x in h]
    else:
        h = [rng.choice("xy") for _ in range(15)]
        a = [x if rng.random() < 0.7 else rng.choice("xy") for x in h]
    lo, hi, und = bootstrap(kind, h, a, n_boot=300, seed=3)
    plo, phi, pund = plain_rating_bootstrap(kind, h, a, 300, 3)
    assert und == pund and abs(lo - plo) < 1e-9 and abs(hi - phi) < 1e-9


@pytest.fixture()
def run_dir(stub_server, tmp_path) -> Path:
    resp = tmp_path / "r.jsonl"  # items 1-3 answered right, the rest wrong (the stub's default answer 5)
    resp.write_text("".join(json.dumps({"match": f"Count from {k} to", "response": str(60 + k)}) + "\n" for k in (1, 2, 3)),
                    encoding="utf-8")
    base = stub_server("--answer", "5", "--responses", str(resp))
    gb("run", "-t", str(TINY), "-m", "openai:stub", "--base-url", base, "-o", "run1", "--limit", "8", cwd=tmp_path)
    return tmp_path / "run1"


def test_ratings_join_the_run_and_show_in_the_report(run_dir, tmp_path):
    samples = [json.loads(x) for x in (run_dir / "samples.jsonl").read_text(encoding="utf-8").splitlines()]
    auto = {s["sample_id"]: s["values"]["numeric_match"] for s in samples}
    assert sorted(auto.values()) == [0.0] * 5 + [1.0] * 3
    r1 = {"1": 5, "2": 4, "3": 5, "4": 2, "5": 1, "6": 3, "7": "", "8": 2}  # 7: not rated by annotator 1
    r2 = {"1": 4, "2": 5, "3": 3, "4": 1, "5": 2, "6": 1, "7": 2, "8": "2,5"}  # decimal comma read as 2.5
    (tmp_path / "ann1.csv").write_text("sample_id,task,rating\n" + "".join(f"{k},tiny.count,{v}\n" for k, v in r1.items()),
                                       encoding="utf-8")
    (tmp_path / "ann2.tsv").write_text("sample_id\trating\tcomment\n" + "".join(f"{k}\t{v}\tok\n" for k, v in r2.items()),
                                       encoding="utf-8")
    out = gb("build", "review", "import-ratings", "run1", "ann1.csv", "ann2.tsv", "--n-boot", "400", "--seed", "5", cwd=tmp_path)
    data = json.loads((run_dir / "human_ratings.json").read_text(encoding="utf-8"))["tasks"]["tiny.count"]
    human = {}
    for r in (r1, r2):
        for k, v in r.items():
            if v != "":
                human.setdefault(k, []).append(float(str(v).replace(",", ".")))
    ids = [s["sample_id"] for s in samples]
    h = [sum(human[i]) / len(human[i]) for i in ids]
    a = [auto[i] for i in ids]
    assert data["automatic"] == "numeric_match" and data["n_items"] == 8 and data["blank_rows"] == 1 and data["annotators"] == 2
    assert abs(data["value"] - plain_spearman(h, a)) < 1e-9
    lo, hi, und = plain_rating_bootstrap("rating", h, a, 400, 5)
    assert abs(data["ci95"][0] - lo) < 1e-9 and abs(data["ci95"][1] - hi) < 1e-9 and data["undefined_resamples"] == und
    assert f"Spearman's rho {plain_spearman(h, a):.3f}" in out.stdout
    import krippendorff  # the annotators' own agreement, against the krippendorff package

    table = [[float(str(r[i]).replace(",", ".")) if r[i] != "" else float("nan") for i in ids] for r in (r1, r2)]
    want = krippendorff.alpha(reliability_data=table, level_of_measurement="interval")
    assert abs(data["annotators_alpha"] - want) < 1e-9 and data["annotators_alpha_level"] == "interval"
    gb("runs", "report", "run1", "-o", "report.html", cwd=tmp_path)
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "Human ratings vs automatic scores" in html and f"spearman rho {data['value']:.3f}" in html
    assert f"2 ({want:.3f})" in html and f"Krippendorff's alpha (interval) {want:.3f}" in out.stdout
    # labels: the human's reading of the answer against the run's prediction (Cohen's kappa)
    (tmp_path / "labels.jsonl").write_text("".join(json.dumps({"sample_id": s["sample_id"], "label": str(s["pred"]) if i < 6 else "0"}) + "\n"
                                                   for i, s in enumerate(samples)), encoding="utf-8")
    out = gb("build", "review", "import-ratings", "run1", "labels.jsonl", "--kind", "label", "--n-boot", "50", cwd=tmp_path)
    both = json.loads((run_dir / "human_ratings.json").read_text(encoding="utf-8"))["tasks"]["tiny.count"]
    preds = [str(s["pred"]) for s in samples]
    humans = [p if i < 6 else "0" for i, p in enumerate(preds)]
    assert both["statistic"] == "cohen_kappa" and abs(both["value"] - plain_cohen_kappa(humans, preds)) < 1e-9


@pytest.mark.parametrize("sheet,want", [
    ("sample_id,rating\n1,5\n99,3\n", "ann.csv: row 3: field 'sample_id': '99' is not a sample of task 'tiny.count'"),
    ("sample_id,rating\n1,good\n", "ann.csv: row 2: field 'rating': 'good' is not a number"),
    ("sample_id,score\n1,5\n", "ann.csv: row 2: field 'rating': missing"),
    ("id_x,rating\n1,5\n", "ann.csv: row 2: field 'sample_id': missing"),
])
def test_a_bad_sheet_is_one_line_and_nothing_is_written(run_dir, tmp_path, sheet, want):
    (tmp_path / "ann.csv").write_text(sheet, encoding="utf-8")
    out = gb("build", "review", "import-ratings", "run1", "ann.csv", cwd=tmp_path, check=False)
    err = [x for x in out.stderr.splitlines() if x.strip()]
    assert out.returncode != 0 and len(err) == 1 and want in err[0], out.stderr
    assert not (run_dir / "human_ratings.json").exists()
