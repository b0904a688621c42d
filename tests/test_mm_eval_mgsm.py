"""MM-Eval's reasoning items and their MGSM originals (issue 55): mm_eval.reasoning_en / _zh.

* the reader of MGSM's header-less TSV: ids by row, thousands separators dropped, bad lines refused in one line;
* on the real data (MM-Eval from shared/data, MGSM from a data root holding ``mgsm/`` after ``glotbench data
  pull mm_eval_transfer``): item i of mm_eval.reasoning is MGSM row i, shown by the gold answers (all 250);
* in fresh processes with the stub as the model: the three tasks run, and ``compare --crosslingual`` pairs
  mn with en and zh with en on the shared ids, with the gaps a plain computation gives; a broken MGSM file is
  refused in one line before any request.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from glotbench.benchmarks.mm_eval.mgsm import answer_value, read_mgsm_tsv
from glotbench.errors import DataError
from glotbench.tasks.registry import resolve


def test_reader_ids_and_answers(tmp_path):
    p = tmp_path / "mgsm_en.tsv"
    p.write_text("Two plus two?\t4\nBig sum?\t2,125\n\nNegative?\t-3\n", encoding="utf-8")
    rows = read_mgsm_tsv(p)
    assert rows == [{"id": "0", "question": "Two plus two?", "answer": "4"},
                    {"id": "1", "question": "Big sum?", "answer": "2125"},
                    {"id": "2", "question": "Negative?", "answer": "-3"}]
    assert [answer_value(x) for x in ("114,200", "5,600", "18", "0.5", "1,2", "12,34", "x")] == \
        ["114200", "5600", "18", "0.5", None, None, None]


@pytest.mark.parametrize(("text", "said"), [
    ("Q?\t4\textra\n", "line 1: expected 2 tab-separated fields (question, answer), got 3"),
    ("Q?\t4\nR?\tfour\n", "line 2: field 'answer': 'four' is not a number"),
    ("\t4\n", "line 1: field 'question' is empty"),
    ("\n\n", "the dataset holds no records"),
])
def test_reader_refuses_bad_lines(tmp_path, text, said):
    p = tmp_path / "mgsm_en.tsv"
    p.write_text(text, encoding="utf-8")
    with pytest.raises(DataError) as err:
        read_mgsm_tsv(p)
    assert str(err.value) == f"{p}: {said}"


def test_the_pair_is_declared():
    mn, en, zh = resolve(["mm_eval.reasoning", "mm_eval.reasoning_en", "mm_eval.reasoning_zh"])
    assert (en.spec.counterpart, en.spec.language) == ("mm_eval.reasoning", "en")
    assert (zh.spec.counterpart, zh.spec.language) == ("mm_eval.reasoning_en", "zh")
    for t in (en, zh):  # the prompt is the Mongolian task's: only the problem's language differs
        assert (t.spec.prompt.system, t.spec.fields["instruction"]) == (mn.spec.prompt.system, mn.spec.fields["instruction"])
        assert (t.spec.generation, t.spec.extractor, t.spec.scorer, t.spec.metrics) == \
            (mn.spec.generation, mn.spec.extractor, mn.spec.scorer, mn.spec.metrics)
        assert t.spec.source.fetch[0].repo == "google-research/url-nlp" and len(t.spec.source.fetch[0].revision) == 40


def _samples_or_skip(name: str):
    task = resolve([name])[0]
    try:
        return task.samples()
    except DataError as err:
        pytest.skip(f"{name}: data not present here ({err}); MM-Eval: shared/data or GLOTBENCH_DATA; "
                    "MGSM: `glotbench data pull mm_eval_transfer`, or GLOTBENCH_DATA at a root holding mgsm/")


def test_real_data_item_i_is_mgsm_row_i():
    mn = _samples_or_skip("mm_eval.reasoning")
    en = _samples_or_skip("mm_eval.reasoning_en")
    zh = _samples_or_skip("mm_eval.reasoning_zh")
    assert len(mn) == len(en) == len(zh) == 250
    assert [s.id for s in mn] == [s.id for s in en] == [s.id for s in zh] == [str(i) for i in range(250)]
    # the gold answers, compared as plain strings after dropping MGSM's thousands separators by hand
    gold = lambda samples: [str(s.target).replace(",", "") for s in samples]  # noqa: E731
    agree = sum(a == b == c for a, b, c in zip(gold(mn), gold(en), gold(zh)))
    assert agree == 250
    # a shifted alignment would not survive the answers: one row off, most disagree
    shifted = sum(a == b for a, b in zip(gold(mn)[1:], gold(en)))
    assert shifted < 25, shifted
    assert mn[0].vars["question"].startswith("Жанетийн нугас") and en[0].vars["question"].startswith("Janet’s ducks")


# ------------------------------------------------------------------ fresh processes, stub model

ITEMS = [("18", "18"), ("3", "3"), ("70000", "70000"), ("2125", "2,125"), ("5", "5"), ("7", "7")]
RIGHT = {"mn": {0, 1, 2}, "en": {0, 1, 2, 3, 4, 5}, "zh": {0, 1, 2, 3, 4}}  # which items the stub gets right


def _data_root(root: Path, bad_en: bool = False) -> None:
    (root / "mm_eval").mkdir(parents=True)
    (root / "mgsm").mkdir()
    (root / "mm_eval" / "reasoning_eval.json").write_text(json.dumps(
        [{"question": f"Бодлого [mn{i}] хэд вэ?", "answer": a} for i, (a, _) in enumerate(ITEMS)], ensure_ascii=False),
        encoding="utf-8")
    for lang in ("en", "zh"):
        lines = [f"Problem [{lang}{i}] how many?\t{b}" for i, (_, b) in enumerate(ITEMS)]
        if bad_en and lang == "en":
            lines[4] += "\textra"
        (root / "mgsm" / f"mgsm_{lang}.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _responses(path: Path) -> None:
    rows = []
    for lang, right in RIGHT.items():
        for i, (gold, _) in enumerate(ITEMS):
            rows.append({"match": f"[{lang}{i}]", "response": f"Answer: {gold if i in right else int(gold) + 1}"})
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")


def _glotbench(*args: str, cwd: Path, data: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "OPENAI_API_KEY": "x", "COLUMNS": "200", "GLOTBENCH_DATA": str(data)}
    return subprocess.run([sys.executable, "-m", "glotbench", *args], capture_output=True, text=True, timeout=300,
                          cwd=cwd, env=env)


TASKS = "mm_eval.reasoning,mm_eval.reasoning_en,mm_eval.reasoning_zh"


def test_pair_runs_and_compares_in_fresh_processes(stub_server, tmp_path):
    data = tmp_path / "data"
    _data_root(data)
    _responses(tmp_path / "responses.jsonl")
    base = stub_server("--responses", str(tmp_path / "responses.jsonl"))
    # the files here are not the published ones: the run says so and marks every output (docs/data.md)
    done = _glotbench("run", "--model", "openai:stub", "--base-url", base, "--tasks", TASKS, "--allow-modified-data",
                      "-o", str(tmp_path / "run"), "--no-progress", cwd=tmp_path, data=data)
    assert done.returncode == 0, done.stderr
    tasks = json.loads((tmp_path / "run" / "results.json").read_text(encoding="utf-8"))["tasks"]
    for lang, name in (("mn", "mm_eval.reasoning"), ("en", "mm_eval.reasoning_en"), ("zh", "mm_eval.reasoning_zh")):
        assert tasks[name]["metrics"]["numeric_match"]["value"] == pytest.approx(len(RIGHT[lang]) / len(ITEMS)), name

    cmp = _glotbench("runs", "compare", "--crosslingual", str(tmp_path / "run"), "--n-boot", "200", "--json",
                     str(tmp_path / "x.json"), cwd=tmp_path, data=data)
    assert cmp.returncode == 0, cmp.stderr
    got = json.loads((tmp_path / "x.json").read_text(encoding="utf-8"))
    assert sorted(map(tuple, got["pairs"])) == sorted([
        ("mm_eval.reasoning numeric_match", "mm_eval.reasoning", "mm_eval.reasoning_en"),
        ("mm_eval.reasoning_zh numeric_match", "mm_eval.reasoning_zh", "mm_eval.reasoning_en")])
    rows = {r["pair"]: r for r in got["crosslingual"]["rows"]}
    n = len(ITEMS)
    for native, lang in (("mm_eval.reasoning", "mn"), ("mm_eval.reasoning_zh", "zh")):
        a, b = len(RIGHT[lang]) / n, len(RIGHT["en"]) / n  # plain re-statement: (en - native) / max(en, native)
        r = rows[f"{native} numeric_match"]
        assert (r["native"], r["english"]) == (pytest.approx(a, abs=1e-6), pytest.approx(b, abs=1e-6))  # JSON: 6 digits
        assert r["relative_gap"] == pytest.approx((b - a) / max(a, b), abs=1e-6)
    gaps = {g["pair"]: g for g in got["gap_intervals"]["pairs"]}
    assert {p: g["n_items"] for p, g in gaps.items()} == {"mm_eval.reasoning numeric_match": n,
                                                           "mm_eval.reasoning_zh numeric_match": n}


def test_broken_mgsm_file_is_one_line_before_any_request(stub_server, tmp_path):
    data = tmp_path / "data"
    _data_root(data, bad_en=True)
    base = stub_server("--answer", "Answer: 1")
    done = _glotbench("run", "--model", "openai:stub", "--base-url", base, "--tasks", "mm_eval.reasoning_en",
                      "--allow-modified-data", "-o", str(tmp_path / "run"), "--no-progress", cwd=tmp_path, data=data)
    assert done.returncode != 0
    said = [ln for ln in done.stderr.splitlines() if ln.startswith("error:")]
    assert said == [f"error: {data / 'mgsm' / 'mgsm_en.tsv'}: line 5: expected 2 tab-separated fields (question, "
                    "answer), got 3"], done.stderr
    assert httpx.get(base.replace("/v1", "/_log")).json()["log"] == []
