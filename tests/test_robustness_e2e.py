"""#54's end-to-end check on the embedded model (SmolLM2 GGUF): mm_eval.knowledge with its 3 prompts
(``--prompt-variants all``) clean and with ``--perturb translit`` (Mongolian, MNS 5217:2012), hulu.cola
clean and with ``--perturb strip_diacritics``; results.json and the printed report carry the variant
spread with intervals, and ``compare --paired`` the drop rate with an item-paired interval, equal to
a plain loop over the runs' samples. Loglikelihood mode, so every item has a prediction (a
135M-parameter model's generated Mongolian is mostly unparseable: an invalid score has no spread)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from glotbench.prompts.perturb import strip_diacritics
from value_oracles import plain_drop_rate, plain_variant_spread

pytestmark = pytest.mark.slow

SRC = Path(__file__).resolve().parents[1] / "src"
N = 8


def _cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run([sys.executable, "-m", "glotbench", *args], env=env, capture_output=True, text=True,
                          timeout=1200, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def _run(tmp_path: Path, task: str, out: str, *args: str) -> subprocess.CompletedProcess:
    limit = () if "--sample" in args else ("--limit", str(N))
    return _cli(tmp_path, "run", "-m", "embedded", "-t", task, *limit, "--mode", "loglikelihood",
                "--bootstrap", "300", "-o", str(tmp_path / out), "--no-progress", *args)


def _samples(run: Path) -> list[dict]:
    return [json.loads(x) for x in (run / "samples.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]


def _prompt_text(rec: dict) -> str:
    p = rec["prompt"]
    return p if isinstance(p, str) else json.dumps(p, ensure_ascii=False)


def _check_drop(tmp_path: Path, clean: str, pert: str) -> list[dict]:
    _cli(tmp_path, "runs", "compare", "--paired", str(tmp_path / clean), str(tmp_path / pert), "--n-boot", "500", "--json",
         str(tmp_path / f"{pert}.json"))
    rows = [r for r in json.loads((tmp_path / f"{pert}.json").read_text())["paired"] if r["metric"] == "accuracy"]
    a, b = _samples(tmp_path / clean), _samples(tmp_path / pert)
    for row in rows:
        va = {r["sample_id"]: r["values"]["correct"] for r in a if r["task"] == row["task"]}
        vb = {r["sample_id"]: r["values"]["correct"] for r in b if r["task"] == row["task"]}
        ids = list(va)
        want = plain_drop_rate([va[i] for i in ids], [vb[i] for i in ids], n=500, seed=0)
        if row["score_a"]:
            assert row["drop_rate"] == pytest.approx(want[0]), row
            assert [row["drop_low"], row["drop_high"]] == pytest.approx([want[1], want[2]]), row
            assert row["drop_low"] <= row["drop_rate"] <= row["drop_high"]
        else:  # no clean score to drop from: undefined, shown as "-"
            assert row["drop_rate"] is None or row["drop_rate"] != row["drop_rate"]
    return rows


def test_variants_and_perturbations_on_the_embedded_model(smollm2_path, data_root, tmp_path):
    names = ["mm_eval.knowledge", "mm_eval.knowledge@mn_instruction", "mm_eval.knowledge@bare"]
    clean = _run(tmp_path, "mm_eval.knowledge", "mn_clean", "--prompt-variants", "all")
    assert "mm_eval.knowledge: accuracy over 3 prompts" in clean.stdout and "best" in clean.stdout
    res = json.loads((tmp_path / "mn_clean" / "results.json").read_text())
    assert list(res["tasks"]) == names
    block = res["prompt_variants"]["mm_eval.knowledge"]
    assert block["headline"] == "declared" and block["variants"] == ["declared", "mn_instruction", "bare"]
    s = block["metrics"]["accuracy"]
    recs = _samples(tmp_path / "mn_clean")
    val = {(r["task"], r["sample_id"]): r["values"]["correct"] for r in recs}
    order = [r["sample_id"] for r in recs if r["task"] == names[0]]
    want = plain_variant_spread([[val[(t, i)] for t in names] for i in order], n=300, seed=1234)
    for key in ("mean", "min", "max", "std"):
        assert s[key] == pytest.approx(want[key]) and s[f"{key}_ci"] == pytest.approx(want[f"{key}_ci"]), key
    assert s["headline_score"] == pytest.approx(res["tasks"][names[0]]["metrics"]["accuracy"]["value"])

    _run(tmp_path, "mm_eval.knowledge", "mn_translit", "--prompt-variants", "all", "--perturb", "translit")
    pert = _samples(tmp_path / "mn_translit")
    assert len(pert) == 3 * N
    for r in pert:  # the question and options are in Latin; the task's own text (answer cue, instruction) is kept
        text = _prompt_text(r)
        if r["task"] != "mm_eval.knowledge@mn_instruction":
            assert not re.search("[\u0400-\u04ff]", text.replace("Хариулт:", "")), text[:300]
        else:
            assert "Дараах асуултад" in text
    mn_rows = _check_drop(tmp_path, "mn_clean", "mn_translit")
    assert sorted(r["task"] for r in mn_rows) == sorted(names)

    # HuCOLA dev opens with ten label-1 items: --limit's first N are one class, so N items are drawn over both labels
    # (--sample, seeded); no few-shot examples: short prompts, for the test's time on 2 cores
    cola = ("--num-fewshot", "0", "--sample", str(N), "--stratify", "gold")
    _run(tmp_path, "hulu.cola", "hu_clean", *cola)
    _run(tmp_path, "hulu.cola", "hu_plain", *cola, "--perturb", "strip_diacritics")
    clean_p = {r["sample_id"]: _prompt_text(r) for r in _samples(tmp_path / "hu_clean")}
    plain_p = {r["sample_id"]: _prompt_text(r) for r in _samples(tmp_path / "hu_plain")}
    assert any(clean_p[i] != plain_p[i] for i in clean_p)
    for i, text in plain_p.items():  # the item's sentence lost its accents; the task's own text kept them
        sentence = re.findall(r"Mondat: (.*?)\n", clean_p[i])[-1]  # the item's (few-shot examples come first)
        assert f"Mondat: {strip_diacritics(sentence)}" in text and "Válaszolj" in text, text[:300]
    hu_rows = _check_drop(tmp_path, "hu_clean", "hu_plain")
    assert [r["task"] for r in hu_rows] == ["hulu.cola"]
    report = _cli(tmp_path, "runs", "compare", "--paired", str(tmp_path / "hu_clean"), str(tmp_path / "hu_plain"), "--n-boot", "200")
    assert "drop 1 - B/A" in report.stdout
