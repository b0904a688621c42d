"""#54 CircularEval (OpenCompass) end to end, in fresh processes against the stub server: ``run
--circular`` asks every rotation of each multiple-choice item's options; results.json reports
``circular_accuracy`` (an item counts when every rotation is right) beside the plain accuracy of the
unrotated order, with intervals, equal to a plain loop over samples.jsonl
(tests/value_oracles.py:plain_circular_accuracy) and to the hand count of the planted answers. The
option is in the fingerprint and the journal's config; a task that is not multiple-choice is refused
before any request."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from mc_task import mc_task_yaml
from value_oracles import plain_circular_accuracy

SRC = str(Path(__file__).resolve().parents[1] / "src")
ENV = {**os.environ, "OPENAI_API_KEY": "x", "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
TINY = Path(__file__).parent / "fixtures" / "tiny_task" / "tiny.yaml"

LABELS = "ABCD"
# (question, options, gold label, how the model answers): right in every rotation; always "A"; right
# only in the dataset's order; unparseable in rotation 2; wrong in rotation 3 only
ITEMS = [
    ("Q01", ["red", "green", "blue", "gray"], "B", "right"),
    ("Q02", ["one", "two", "three", "four"], "A", "always_a"),
    ("Q03", ["cat", "dog", "cow", "hen"], "C", "plain_only"),
    ("Q04", ["oak", "elm", "ash", "yew"], "D", "unparseable_2"),
    ("Q05", ["tin", "zinc", "gold", "lead"], "A", "wrong_3"),
]


def _answer(kind: str, k: int, right: str) -> str:
    wrong = next(x for x in LABELS if x != right)
    return {"right": right, "always_a": "A", "plain_only": right if k == 0 else wrong,
            "unparseable_2": "hmm" if k == 2 else right, "wrong_3": wrong if k == 3 else right}[kind]


def _setup(tmp: Path) -> tuple[Path, Path]:
    data = tmp / "items.jsonl"
    data.write_text("".join(json.dumps({"id": q, "q": q, "opts": o, "gold": g}) + "\n" for q, o, g, _ in ITEMS))
    spec = tmp / "circ.yaml"
    spec.write_text(mc_task_yaml("demo.circ", data, choice_format="{{ label }}) {{ text }}"), encoding="utf-8")
    canned = []
    for q, opts, gold, kind in ITEMS:
        g = LABELS.index(gold)
        for k in range(4):
            moved = opts[k:] + opts[:k]
            right = LABELS[(g - k) % 4]
            canned.append({"match": f"{q}\nA) {moved[0]}\nB) {moved[1]}", "response": _answer(kind, k, right)})
    responses = tmp / "responses.jsonl"
    responses.write_text("".join(json.dumps(c) + "\n" for c in canned), encoding="utf-8")
    return spec, responses


def _run(base: str, out: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "glotbench", "run", "--model", "openai:stub", "--base-url", base,
                           "--output", str(out), "--no-progress", "--bootstrap", "200", *args],
                          env=ENV, capture_output=True, text=True, timeout=300, cwd=out.parent)


def test_circular_accuracy_equals_a_plain_loop_and_the_hand_count(stub_server, tmp_path):
    spec, responses = _setup(tmp_path)
    base = stub_server("--responses", str(responses), "--answer", "zzz")
    done = _run(base, tmp_path / "circ", "--tasks", str(spec), "--circular")
    assert done.returncode == 0, done.stderr[-2000:]
    res = json.loads((tmp_path / "circ" / "results.json").read_text())
    t = res["tasks"]["demo.circ"]
    samples = [json.loads(x) for x in (tmp_path / "circ" / "samples.jsonl").read_text().splitlines()]
    assert len(samples) == 20 and sorted({s["sample_id"] for s in samples})[:2] == ["Q01", "Q01@rot1"]
    plain, circ, n = plain_circular_accuracy(samples)
    # by hand: in the dataset's order all five are right (Q02's gold is A; Q04 and Q05 go wrong only in
    # later rotations); in every rotation only Q01
    assert (plain, circ, n) == (1.0, 0.2, 5)
    assert t["metrics"]["accuracy"]["value"] == plain
    assert t["metrics"]["circular_accuracy"]["value"] == circ
    lo, hi = t["metrics"]["circular_accuracy"]["ci95"]
    assert 0.0 <= lo <= circ <= hi <= 1.0
    assert t["circular"] == {"n_items": 5, "n_incomplete": 0, "n_rotations": 20, "n_right_every_rotation": 1}
    assert t["n_unparseable"] == 0  # counted on the plain order; the unparseable rotation is wrong in circular
    assert t["metric_definitions"]["circular_accuracy"]["role"] == "secondary"
    assert res["settings"]["circular"] is True
    # journaled: the run's config in the journal says --circular, and the printed table shows both numbers
    con = sqlite3.connect(tmp_path / "circ" / "journal.sqlite")
    cfg = json.loads(dict(con.execute("select key, value from meta").fetchall())["config"])
    assert cfg["circular"] is True
    assert "circular_accuracy" in done.stdout
    # the same items without --circular: another fingerprint; the plain accuracy is the same number
    plain_run = _run(base, tmp_path / "plain", "--tasks", str(spec))
    assert plain_run.returncode == 0, plain_run.stderr[-2000:]
    p = json.loads((tmp_path / "plain" / "results.json").read_text())["tasks"]["demo.circ"]
    assert p["metrics"]["accuracy"]["value"] == plain and "circular_accuracy" not in p["metrics"]
    assert p["fingerprint"]["id"] != t["fingerprint"]["id"]
    # resuming the circular run's folder without --circular is refused (the answers would mix)
    mixed = _run(base, tmp_path / "circ", "--tasks", str(spec))
    assert mixed.returncode == 2 and "--circular" in mixed.stderr, mixed.stderr[-1500:]


def test_a_task_that_is_not_multiple_choice_is_refused_before_any_request(stub_server, tmp_path):
    base = stub_server()
    done = _run(base, tmp_path / "out", "--tasks", str(TINY), "--circular")
    lines = [x for x in done.stderr.splitlines() if x.strip()]
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-1500:]
    assert len(lines) == 1 and "--circular" in lines[0] and "tiny.count" in lines[0] and "generate" in lines[0], lines
    assert httpx.get(base.replace("/v1", "/_log")).json()["log"] == []


def test_loglikelihood_mode_rotates_too_and_its_calibration_reads_the_plain_order(stub_server, tmp_path):
    spec, _ = _setup(tmp_path)
    base = stub_server("--answer", "A")
    done = _run(base, tmp_path / "ll", "--tasks", str(spec), "--circular", "--mode", "loglikelihood",
                "-M", "logprobs_trusted=true", "-M", "chat=false")
    assert done.returncode == 0, done.stderr[-2000:]
    t = json.loads((tmp_path / "ll" / "results.json").read_text())["tasks"]["demo.circ"]
    samples = [json.loads(x) for x in (tmp_path / "ll" / "samples.jsonl").read_text().splitlines()]
    plain, circ, n = plain_circular_accuracy(samples)
    assert n == 5 and t["metrics"]["accuracy"]["value"] == pytest.approx(plain)
    assert t["metrics"]["circular_accuracy"]["value"] == pytest.approx(circ)
    assert t["ll_calibration"]["n_used"] == 5  # the dataset's order, not the 20 rotations
    assert t["ll_calibration"]["ece"] == pytest.approx(t["metrics"]["ll_ece"]["value"], abs=1e-6)
