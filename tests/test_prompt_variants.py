"""``run --prompt-variants all|N``: the prompts a task declares (``prompts:`` inline or from a file),
each run as a task of its own and journaled (a rerun sends nothing), the spread (per-variant scores,
mean, min, max, std, best, each with an item-resampled interval) in results.json, equal to a plain
loop (tests/value_oracles.py); a bad variant or request refused before any request. CLI calls are
fresh subprocesses against the stub server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import numpy as np
import pytest

from glotbench.report.analysis.robustness import variant_spread
from value_oracles import plain_variant_spread

SRC = Path(__file__).resolve().parents[1] / "src"


def test_variant_spread_equals_a_plain_loop():
    rng = np.random.default_rng(5)
    values = (rng.random((41, 3)) < [0.3, 0.5, 0.8]).astype(float).tolist()
    got = variant_spread(values, ["declared", "a", "b"], n=300, seed=9)
    want = plain_variant_spread(values, n=300, seed=9)
    assert got.scores == pytest.approx(want["scores"], abs=1e-12)
    for key in ("mean", "min", "max", "std"):
        assert getattr(got, key) == pytest.approx(want[key], abs=1e-12), key
        assert getattr(got, f"{key}_ci") == pytest.approx(want[f"{key}_ci"], abs=1e-12), key
    assert sum(got.score_ci, []) == pytest.approx(sum(want["score_ci"], []), abs=1e-12)
    assert got.best == ["declared", "a", "b"][want["best"]] and got.best_ci == pytest.approx(want["max_ci"])


def _task(tmp_path: Path, prompts: str) -> Path:
    (tmp_path / "items.jsonl").write_text("".join(json.dumps({"id": f"i{k}", "q": f"otázka {k}", "a": "ano"},
                                                             ensure_ascii=False) + "\n" for k in range(8)), encoding="utf-8")
    (tmp_path / "filed.yaml").write_text('user: "Otázka: {{ question }}"\n', encoding="utf-8")
    path = tmp_path / "task.yaml"
    path.write_text("\n".join(["name: my.variants", 'version: "1"', "language: cs",
                               f"dataset: {{format: jsonl, splits: {{test: {tmp_path / 'items.jsonl'}}}}}",
                               "fields: {id: id, question: q, target: a}", "output_type: generate",
                               "prompt: {user: 'Q: {{ question }}'}", prompts,
                               "scorer: exact_match", "metrics: [exact_match]"]) + "\n", encoding="utf-8")
    return path


PROMPTS = "prompts:\n  - {name: short, user: '{{ question }}?!'}\n  - {name: filed, file: filed.yaml}"


def _stub(stub_server, tmp_path: Path) -> str:
    rules = [("Otázka: ", "ano"), ("Q: otázka 1", "ano"), ("Q: otázka 2", "ano"), ("otázka 3?!", "ano")]
    (tmp_path / "responses.jsonl").write_text("".join(json.dumps({"match": m, "response": r}, ensure_ascii=False) + "\n"
                                                      for m, r in rules), encoding="utf-8")
    return stub_server("--answer", "ne", "--responses", str(tmp_path / "responses.jsonl"))


def _run(base: str, task: Path, out: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "OPENAI_API_KEY": "x", "PYTHONPATH": str(SRC)}
    return subprocess.run([sys.executable, "-m", "glotbench", "run", "-m", "openai:stub", "--base-url", base, "-t",
                           str(task), "-o", str(out), "--no-progress", "--bootstrap", "200", *args], env=env,
                          capture_output=True, text=True, timeout=240, cwd=out.parent)


def _sent(base: str) -> int:
    return len(httpx.get(base.replace("/v1", "/_log")).json()["log"])


def test_all_variants_run_journaled_with_the_spread_and_its_intervals(stub_server, tmp_path):
    base = _stub(stub_server, tmp_path)
    task = _task(tmp_path, PROMPTS)
    out = tmp_path / "run"
    done = _run(base, task, out, "--prompt-variants", "all")
    assert done.returncode == 0, done.stderr
    assert _sent(base) == 24
    res = json.loads((out / "results.json").read_text())
    assert list(res["tasks"]) == ["my.variants", "my.variants@short", "my.variants@filed"]
    assert res["tasks"]["my.variants"]["metrics"]["exact_match"]["value"] == pytest.approx(0.25)  # the headline: declared
    fps = {n: t["fingerprint"]["id"] for n, t in res["tasks"].items()}
    assert len(set(fps.values())) == 3
    block = res["prompt_variants"]["my.variants"]
    assert block["variants"] == ["declared", "short", "filed"] and block["headline"] == "declared"
    s = block["metrics"]["exact_match"]
    assert s["scores"] == pytest.approx([0.25, 0.125, 1.0]) and s["best"] == "filed"
    assert s["headline_score"] == pytest.approx(0.25)
    # the same spread from the samples, in a plain loop
    recs = [json.loads(x) for x in (out / "samples.jsonl").read_text().splitlines() if x.strip()]
    order = [r["sample_id"] for r in recs if r["task"] == "my.variants"]
    val = {(r["task"], r["sample_id"]): r["values"]["exact_match"] for r in recs}
    matrix = [[val[(t, i)] for t in block["tasks"]] for i in order]
    want = plain_variant_spread(matrix, n=200, seed=1234)
    for key in ("mean", "min", "max", "std"):
        assert s[key] == pytest.approx(want[key]) and s[f"{key}_ci"] == pytest.approx(want[f"{key}_ci"]), key
    assert sum(s["score_ci"], []) == pytest.approx(sum(want["score_ci"], []))
    assert "over 3 prompts" in done.stdout and "best" in done.stdout
    # a rerun resumes: nothing is sent again, the spread is there again
    again = _run(base, task, out, "--prompt-variants", "all")
    assert again.returncode == 0, again.stderr
    assert _sent(base) == 24
    assert "results re-read" in again.stdout + again.stderr  # the finished run is re-reported, not recomputed
    assert json.loads((out / "results.json").read_text())["prompt_variants"]["my.variants"]["metrics"]["exact_match"][
        "scores"] == pytest.approx([0.25, 0.125, 1.0])


def test_the_first_n_variants_and_a_declared_headline(stub_server, tmp_path):
    base = _stub(stub_server, tmp_path)
    task = _task(tmp_path, PROMPTS.replace("file: filed.yaml}", "file: filed.yaml, headline: true}"))
    out = tmp_path / "run2"
    done = _run(base, task, out, "--prompt-variants", "2")
    assert done.returncode == 0, done.stderr
    res = json.loads((out / "results.json").read_text())
    assert list(res["tasks"]) == ["my.variants", "my.variants@short"]
    assert _sent(base) == 16
    block = res["prompt_variants"]["my.variants"]
    assert block["headline"] == "filed" and block["metrics"]["exact_match"]["headline_score"] is None


@pytest.mark.parametrize("prompts, args, words", [
    (PROMPTS, ("--prompt-variants", "4"), "declares 3 prompt(s) (declared, short, filed); ask for at most 3"),
    (PROMPTS, ("--prompt-variants", "some"), "give all, or a whole number"),
    ("", ("--prompt-variants", "all"), "no selected task declares prompt variants"),
    ("prompts:\n  - {name: bad, user: '{{ question '}", ("--prompt-variants", "all"), "prompts[0] (bad): field 'user'"),
    ("prompts:\n  - {name: gone, file: nowhere.yaml}", ("--prompt-variants", "all"), "nowhere.yaml: cannot read prompt file"),
    ("prompts:\n  - {name: declared, user: x}", ("--prompt-variants", "all"), "the name 'declared' is used twice"),
    ("prompts:\n  - {name: Bad Name, user: x}", ("--prompt-variants", "all"), "prompts.0.name"),
])
def test_a_bad_variant_is_refused_before_any_request(stub_server, tmp_path, prompts, args, words):
    base = _stub(stub_server, tmp_path)
    done = _run(base, _task(tmp_path, prompts), tmp_path / "run", *args)
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = [x for x in done.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and words in lines[0], done.stderr
    assert _sent(base) == 0
    assert not (tmp_path / "run" / "journal.sqlite").exists()


def test_write_out_shows_every_variants_prompt_and_the_perturbed_input(stub_server, tmp_path):
    base = _stub(stub_server, tmp_path)
    done = _run(base, _task(tmp_path, PROMPTS), tmp_path / "run", "--prompt-variants", "all", "--write-out", "1",
                "--perturb", "strip_diacritics")
    assert done.returncode == 0, done.stderr
    for shown in ("my.variants · item i0", "my.variants@short · item i0", "my.variants@filed · item i0",
                  "Q: otazka 0", "otazka 0?!", "Otázka: otazka 0"):  # the template's own accent is kept
        assert shown in done.stdout, (shown, done.stdout[-2000:])
    assert _sent(base) == 0


def test_a_corpus_metrics_spread_equals_a_plain_loop_with_sklearn():
    from glotbench.report.analysis.robustness import corpus_variant_spread
    from glotbench.scoring.metrics import ScoredItem, get_metric
    from value_oracles import METRIC_ORACLES, plain_corpus_variant_spread

    rng = np.random.default_rng(2)
    gold = rng.integers(0, 2, 60)
    items = [[ScoredItem(gold=str(g), pred=str(g if rng.random() < p else 1 - g)) for g in gold] for p in (0.6, 0.75, 0.9)]
    mcc = get_metric("mcc")
    got = corpus_variant_spread(lambda v, idx: mcc([items[v][int(j)] for j in idx]), 60, ["declared", "a", "b"], n=200,
                                seed=4)
    want = plain_corpus_variant_spread(items, METRIC_ORACLES["mcc"].compute, n=200, seed=4)
    assert got.scores == pytest.approx(want["scores"], abs=1e-9)
    for key in ("mean", "min", "max", "std"):
        assert getattr(got, key) == pytest.approx(want[key], abs=1e-9), key
        assert getattr(got, f"{key}_ci") == pytest.approx(want[f"{key}_ci"], abs=1e-9), key
    assert got.best == "b"


def test_a_corpus_metric_gets_a_spread_too(stub_server, tmp_path):
    """MCC is recomputed per resample (no per-item value): its spread is in results.json beside accuracy's."""
    rows = [{"id": f"i{k}", "q": f"věta {k}", "a": "AB"[k % 2], "c": ["ano", "ne"]} for k in range(10)]
    (tmp_path / "mc.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    task = tmp_path / "mc.yaml"
    task.write_text("\n".join(["name: my.mc", 'version: "1"', "language: cs",
                               f"dataset: {{format: jsonl, splits: {{test: {tmp_path / 'mc.jsonl'}}}}}",
                               "fields: {id: id, question: q, target: a, choices: c}",
                               "output_type: multiple_choice", "prompt: {user: '{{ question }}: {{ choices_block }}'}",
                               "metrics: [accuracy, mcc]",
                               "prompts:\n  - {name: other, user: 'Jinak {{ question }}: {{ choices_block }}'}"]) + "\n",
                    encoding="utf-8")
    rules = [("Jinak věta 1:", "B"), ("Jinak věta 3:", "B"), ("věta 5:", "B")]
    (tmp_path / "r.jsonl").write_text("".join(json.dumps({"match": m, "response": r}, ensure_ascii=False) + "\n"
                                              for m, r in rules), encoding="utf-8")
    base = stub_server("--answer", "A", "--responses", str(tmp_path / "r.jsonl"))
    done = _run(base, task, tmp_path / "run", "--prompt-variants", "all")
    assert done.returncode == 0, done.stderr
    block = json.loads((tmp_path / "run" / "results.json").read_text())["prompt_variants"]["my.mc"]
    assert set(block["metrics"]) == {"accuracy", "mcc"}, block["notes"]
    s = block["metrics"]["mcc"]
    res = json.loads((tmp_path / "run" / "results.json").read_text())["tasks"]
    assert s["scores"] == pytest.approx([res["my.mc"]["metrics"]["mcc"]["value"], res["my.mc@other"]["metrics"]["mcc"]["value"]], abs=1e-5)
    assert s["scores"][0] != s["scores"][1]
    assert s["mean_ci"][0] <= s["mean"] <= s["mean_ci"][1] and s["best"] == "other"


def test_variants_and_a_perturbation_on_shards(stub_server, tmp_path):
    """Shard workers expand the variants and perturb the items as the driver does: the same numbers."""
    base = _stub(stub_server, tmp_path)
    task = _task(tmp_path, PROMPTS)
    done = _run(base, task, tmp_path / "sharded", "--prompt-variants", "all", "--perturb", "strip_diacritics", "--shards", "2")
    assert done.returncode == 0, done.stderr
    res = json.loads((tmp_path / "sharded" / "results.json").read_text())
    assert list(res["tasks"]) == ["my.variants", "my.variants@short", "my.variants@filed"]
    # the items lost their accents ("otazka 1"): only the filed prompt's own "Otázka: " still matches a rule
    s = res["prompt_variants"]["my.variants"]["metrics"]["exact_match"]
    assert s["scores"] == pytest.approx([0.0, 0.0, 1.0])
    assert _sent(base) == 24
    assert (tmp_path / "sharded" / "shards").is_dir()
