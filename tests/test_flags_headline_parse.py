"""The `*` (over 20% unparseable) and `invalid` (over 50%) flags follow the headline's own parse rule.

For Czech-Bench tasks the headline is the reference's ``cb_*`` (its parse rule, unparseable answers out
of the denominator), so the flags count what the reference cannot parse, as the thesis marks "*" and "-".
Real runs over the real data, with recorded answers crafted so that glotbench's lenient extractor
and the reference rule disagree; the expected flag is recomputed from the answers with the reference
rule restated here."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"


def glot(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", ""), "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "glotbench", *args], capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=300)


def _samples(task: str, n: int):
    from glotbench.errors import DataError
    from glotbench.tasks.registry import resolve

    try:
        return resolve([task])[0].samples(limit=n)
    except DataError as err:
        pytest.skip(f"data for {task} not found: {err}")


def run_recorded(tmp_path: Path, task: str, answers: list[tuple[str, str]]) -> tuple[dict, list[dict], str]:
    """``glotbench run`` with the answers as the model; (task results, sample lines, stdout)."""
    f = tmp_path / f"{task}.jsonl"
    f.write_text("\n".join(json.dumps({"id": i, "answer": a}, ensure_ascii=False) for i, a in answers), encoding="utf-8")
    out = tmp_path / f"run_{task}"
    done = glot("run", "--model", f"recorded:{f}", "--tasks", task, "--limit", str(len(answers)), "-o", str(out),
                "--no-progress", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    res = json.loads((out / "results.json").read_text(encoding="utf-8"))["tasks"][task]
    lines = [json.loads(x) for x in (out / "samples.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]
    return res, lines, done.stdout


def _first_token(text: str) -> str:
    parts = text.split()
    return parts[0].strip().strip(")") if parts else text


def ref_letter_unparsed(text: str, gold: str) -> bool:
    """Czech-Bench klokanek/evaluate.py restated: equal to the gold is right; not a substring of ABCDE is unparseable."""
    tok = _first_token(text)
    return tok != gold and tok not in "ABCDE"


def ref_int_unparsed(text: str) -> bool:
    """Czech-Bench's int rule restated: int() of the first token."""
    try:
        int(_first_token(text))
    except ValueError:
        return True
    return False


def status_of(rate: float) -> tuple[str, str]:
    return ("invalid", "invalid") if rate > 0.5 else (("flagged", "*") if rate > 0.2 else ("ok", ""))


def test_klokanek_flag_is_the_reference_rules_star(tmp_path):
    """13/20 answers glotbench's extractor cannot read (65%: it would say invalid) but the reference
    parses 7 of them ("ABC" is a substring of "ABCDE": a wrong answer): 6/20 = 30% unparseable, "*"."""
    samples = _samples("czech_bench.klokanek", 20)
    answers = [(s.id, "nevím") for s in samples[:6]] + [(s.id, "ABC") for s in samples[6:13]] \
        + [(s.id, s.target) for s in samples[13:]]
    res, lines, stdout = run_recorded(tmp_path, "czech_bench.klokanek", answers)
    gold = {s.id: s.target for s in samples}
    ref_rate = sum(ref_letter_unparsed(a, gold[i]) for i, a in answers) / len(answers)
    ext_rate = sum(1 for x in lines if x.get("pred") is None) / len(lines)
    assert (ref_rate, ext_rate) == (0.30, 0.65)  # the two parsers disagree, as crafted
    assert res["unparseable_rate"] == pytest.approx(ref_rate)
    assert (res["status"], res["flag"]) == status_of(ref_rate) == ("flagged", "*")
    assert res["unparseable_by"] == "cb_parsed" and res["n_unparseable_extractor"] == 13
    assert res["metrics"]["cb_parsed"]["value"] == pytest.approx(1 - ref_rate)
    assert "* czech_bench.klokanek: 30% of answers unparseable by cb_parsed (over 20%)" in stdout


def test_int_rule_parse_rate_0_35_is_invalid(tmp_path):
    """'Klasifikace: 1' is a number to glotbench's extractor but no int() to the reference: with 13/20 of
    them cb_parsed is 0.350, the thesis' "-" (invalid), where the extractor alone saw nothing wrong."""
    samples = _samples("czech_bench.facebook_comments_full", 20)
    answers = [(s.id, "Klasifikace: 1") for s in samples[:13]] + [(s.id, "1") for s in samples[13:]]
    res, lines, stdout = run_recorded(tmp_path, "czech_bench.facebook_comments_full", answers)
    ref_rate = sum(ref_int_unparsed(a) for _, a in answers) / len(answers)
    assert ref_rate == 0.65 and all(x.get("pred") is not None for x in lines)
    assert res["metrics"]["cb_parsed"]["value"] == pytest.approx(0.35)
    assert res["unparseable_rate"] == pytest.approx(ref_rate)
    assert (res["status"], res["flag"]) == status_of(ref_rate) == ("invalid", "invalid")
    assert "invalid czech_bench.facebook_comments_full: 65% of answers unparseable by cb_parsed" in stdout
