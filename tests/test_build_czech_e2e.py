"""The Czech example of docs/building-a-benchmark.md (Part 1), end to end on real text, every
command in a fresh subprocess: 200 sentences from the CTKFacts evidence -> a cloze task with
part-of-speech-matched distractors (MorphoDiTa + MorfFlex) and a word-order task -> `glotbench run`
on both with the embedded model -> the AGREE sequential filter with two stub models (A, then B) ->
review export -> two annotators' fixture sheets -> kappa, disagreements, arbiter, final dataset."""

from __future__ import annotations

import collections
import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from glotbench.build.provenance import read_items

pytestmark = pytest.mark.slow
FIX = Path(__file__).parent / "fixtures" / "build"
SRC = str(Path(__file__).resolve().parents[1] / "src")


@pytest.fixture(scope="module")
def ctkfacts() -> Path:
    from glotbench.paths import find_data_root

    root = find_data_root()
    files = sorted((root / "czech_bench" / "ctkfacts").glob("*.jsonl")) if root else []
    if not files:
        pytest.skip("CTKFacts evidence not found: ../shared/data/czech_bench/ctkfacts/*.jsonl (or $GLOTBENCH_DATA)")
    return files[0]


@pytest.fixture(scope="module")
def czech_pos():
    try:
        import ufal.morphodita  # noqa: F401
    except ImportError:
        pytest.skip("ufal.morphodita is not installed (pip install ufal.morphodita)")
    from glotbench.languages.cs_morpho import find_dictionary

    if find_dictionary() is None:
        pytest.skip("MorfFlex dictionary not found: czech_bench/morphology/czech-morfflex/*.dict in the data root")
    from glotbench.build.pos import CzechPos

    return CzechPos()


def _cli(*args, cwd: Path, timeout=600, expect: int = 0):
    env = {**os.environ, "OPENAI_API_KEY": "x",
           "PYTHONPATH": os.pathsep.join(p for p in (SRC, os.environ.get("PYTHONPATH", "")) if p)}
    done = subprocess.run([sys.executable, "-m", "glotbench", *args], env=env, capture_output=True, text=True,
                          cwd=cwd, timeout=timeout)
    assert done.returncode == expect, done.stdout + done.stderr
    return done.stdout


SENTENCES = ["--field", "evidence", "--split-sentences", "--lang", "cs", "--limit", "200", "--max-words", "30"]


def _log(base: str) -> list:
    return httpx.get(base.replace("/v1", "/_log")).json()["log"]


def test_czech_example_end_to_end(tmp_path, ctkfacts, czech_pos, smollm2_path, stub_server):
    # 1. cloze and word-order from 200 sentences
    out = _cli("build", "cloze", str(ctkfacts), *SENTENCES, "-o", "cloze.jsonl", cwd=tmp_path)
    assert out.splitlines()[:4] == ["cloze: 615 sentences read, 200 items kept, 415 dropped",
                                    "  dropped by dedup: 362", "  dropped by max_words: 53",
                                    "wrote cloze.jsonl (200 items), cloze.dropped.jsonl, cloze.yaml"]
    out = _cli("build", "word-order", str(ctkfacts), *SENTENCES, "-o", "wo.jsonl", cwd=tmp_path)
    assert out.splitlines()[0] == "word-order: 615 sentences read, 200 items kept, 415 dropped"
    cloze, wo = read_items(tmp_path / "cloze.jsonl"), read_items(tmp_path / "wo.jsonl")
    assert len(cloze) == len(wo) == 200
    assert collections.Counter(d["removed_by"] for d in read_items(tmp_path / "cloze.dropped.jsonl")) == {
        "dedup": 362, "max_words": 53}
    for it in cloze:
        texts = [c["text"] for c in it["choices"]]
        answer = texts["ABCD".index(it["answerKey"])]
        assert answer == it["answer"] and len(set(texts)) == 4
        assert it["question"].replace("_", answer, 1).split() == it["provenance"][0]["sentence"].split()
        for d in texts:
            if d != answer:
                assert (czech_pos.group(d) or czech_pos.group(d.lower())) == it["pos"], (it["id"], d)
                assert not czech_pos.same(d, answer), (it["id"], d)
    for it in wo:
        texts = [c["text"] for c in it["choices"]]
        assert texts.count(it["answer"]) == 1 and len(set(texts)) == 4

    # 2. glotbench run on both with the embedded model
    for name in ("cloze", "wo"):
        _cli("run", "--model", "embedded", "--tasks", f"{name}.yaml", "--limit", "5", "-o", f"run_{name}", cwd=tmp_path)
        res = json.loads((tmp_path / f"run_{name}" / "results.json").read_text(encoding="utf-8"))
        (task,) = res["tasks"].values()
        assert task["n_items"] == 5 and task["n_errors"] == 0

    # 3. AGREE: model 1 (always "A") on all, model 2 (always "B") on what it missed
    a, b = stub_server("--answer", "A"), stub_server("--answer", "B")
    keys = collections.Counter(it["answerKey"] for it in cloze)
    args = ["build", "filter", "--sequential", "cloze.jsonl", "-o", "filtered.jsonl", "-m", "openai:a", "-m", "openai:b",
            "-M", f"1:base_url={a}", "-M", f"2:base_url={b}"]
    out = _cli(*args, cwd=tmp_path)
    assert f"round 1: openai:a base_url={a} on 200 items: {keys['A']} answered" in out
    assert f"on {200 - keys['A']} items: {keys['B']} answered" in out
    residue = list(csv.DictReader((tmp_path / "filtered.residue.csv").open(encoding="utf-8")))
    assert len(residue) == keys["C"] + keys["D"]
    sent = (len(_log(a)), len(_log(b)))
    assert sent == (200, 200 - keys["A"])
    assert _cli(*args, cwd=tmp_path) == out  # rerun: each round answers from its journal ...
    assert (len(_log(a)), len(_log(b))) == sent  # ... and nothing is sent twice

    # 4. review: export, two annotators (fixtures: the first ten residue items), arbiter
    _cli("build", "review", "export", "filtered.jsonl", "-o", "all.tsv", cwd=tmp_path)
    assert len((tmp_path / "all.tsv").read_text(encoding="utf-8").splitlines()) == 201
    ids = [r["id"] for r in csv.DictReader((FIX / "annotator_a.csv").open(encoding="utf-8"))]
    assert ids == [r["id"] for r in residue[:10]]
    out = _cli("build", "review", "import", "filtered.jsonl", str(FIX / "annotator_a.csv"),
               str(FIX / "annotator_b.tsv"), "-o", "final.jsonl", cwd=tmp_path, expect=2)  # no --arbiter: refused
    p_o, p_e = 8 / 10, (6 * 4 + 3 * 5 + 1 * 1) / 100  # fixtures/build/README.md
    assert f"Cohen's kappa, annotators 1-2: {(p_o - p_e) / (1 - p_e):.3f}" in out
    assert "reviewed 10 items: 8 agreed, 2 disagreements; 190 not reviewed" in out
    assert not (tmp_path / "final.jsonl").exists()
    out = _cli("build", "review", "import", "filtered.jsonl", str(FIX / "annotator_a.csv"),
               str(FIX / "annotator_b.tsv"), "-o", "final.jsonl", "--arbiter", str(FIX / "arbiter.csv"), cwd=tmp_path)
    assert "wrote final.jsonl: 196 items kept (1 fixed), 4 dropped by review" in out
    final = read_items(tmp_path / "final.jsonl")
    assert [p["step"] for p in final[0]["provenance"]] == ["cloze", "filter-sequential"]
    assert sorted(d["id"] for d in read_items(tmp_path / "final.dropped.jsonl")) == sorted(
        ["cloze-497eb24a630a", "cloze-ee0a9b65908a", "cloze-cf5ff8f67bf7", "cloze-95efea37de90"])
    _cli("run", "--model", "openai:a", "--base-url", a, "--tasks", "final.yaml", "-o", "run_final", cwd=tmp_path)
    res = json.loads((tmp_path / "run_final" / "results.json").read_text(encoding="utf-8"))
    assert next(iter(res["tasks"].values()))["n_items"] == 196


def test_czech_cloze_agree_variant(tmp_path, ctkfacts, czech_pos):
    """--agree (glotbench's variant): distractors also share number and case (adjectives: gender)."""
    out = _cli("build", "cloze", str(ctkfacts), *SENTENCES, "--agree", "-o", "agree.jsonl", cwd=tmp_path)
    assert out.splitlines()[0] == "cloze: 615 sentences read, 197 items kept, 418 dropped"
    assert "  dropped by cloze: fewer than 3 noun/pronoun distractors of the same form in the vocabulary: 2" in out
    items = read_items(tmp_path / "agree.jsonl")
    assert len(items) == 197
    for it in items:
        assert it["provenance"][0]["distractors"] == "same group and form"
        for c in it["choices"]:
            d = c["text"]
            if d != it["answer"]:
                assert czech_pos.agrees(d, it["answer"]) or czech_pos.agrees(d.lower(), it["answer"]), (it["id"], d)
                assert not czech_pos.same(d, it["answer"])
