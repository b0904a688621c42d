"""Part 2 of `glotbench build` end to end on real parts: the embedded model (SmolLM2) as generator,
judge and the model under test, on six short Czech passages (`build qa --format lines`: SmolLM2-135M cannot follow the JSON prompt): passages -> qa -> criteria -> retrieval-check
-> filter --difficulty -> dedup -> review export/import (sheets filled by the test) -> task ->
`glotbench run --judge embedded`. Quality is not the point:
every step runs, accounts for every item (kept + dropped = in) and a rerun sends nothing."""

from __future__ import annotations

import json

import pytest

from test_build_qa import PASSAGES, cli, lines

pytestmark = pytest.mark.slow


def counts(out: str) -> tuple[int, int, int]:
    import re

    m = re.search(r"in (\d+) · kept (\d+) · dropped (\d+)", out)
    assert m, out
    return tuple(int(x) for x in m.groups())


def test_qa_pipeline_with_the_embedded_model(smollm2_path, tmp_path):
    cli("passages", "-i", str(PASSAGES), "-n", "6", "-o", "passages.jsonl", cwd=tmp_path)
    qa_args = ("qa", "-p", "passages.jsonl", "-l", "cs", "-m", "embedded", "-o", "qa.jsonl", "--format", "lines")
    out = cli(*qa_args, cwd=tmp_path)
    n_in, kept, dropped = counts(out.stdout)
    assert n_in == 6 and kept + dropped == 6
    again = cli(*qa_args, cwd=tmp_path)
    assert "calls sent 0 · from the journal" in again.stdout
    for d in lines(tmp_path / "qa.dropped.jsonl"):
        assert d["removed_by"] in ("qa", "qa_parse") and d["reason"]
    if kept == 0:  # the small model wrote no readable pair: seed one so the later steps run on real calls
        p = lines(tmp_path / "passages.jsonl")[1]
        item = {"id": f"{p['id']}-q0", "passage_id": p["id"], "title": p["title"], "passage": p["text"], "language": "cs",
                "question": "Kolik metrů měří Sněžka?", "answer": "1603",
                "provenance": [{"step": "qa", "source": p["id"], "model": "hand-made (test seed)"}]}
        (tmp_path / "qa.jsonl").write_text(json.dumps(item, ensure_ascii=False) + "\n", encoding="utf-8")
        kept = 1

    out = cli("criteria", "-i", "qa.jsonl", "--judge", "embedded", "-o", "crit.jsonl", "--criterion", "grounded", "--criterion", "time_stable",
              "--unparsed", "keep", "--max-tokens", "48", cwd=tmp_path)
    assert counts(out.stdout)[0] == kept
    for it in lines(tmp_path / "crit.jsonl") + lines(tmp_path / "crit.dropped.jsonl"):
        assert set(it["criteria"]) == {"grounded", "time_stable"}
        assert all(v["verdict"] in ("pass", "fail", "unparsed") for v in it["criteria"].values())
    crit_kept = counts(out.stdout)[1]
    if crit_kept == 0:
        pytest.skip("the embedded judge failed every item on a criterion: nothing left for the later steps")

    out = cli("retrieval-check", "-i", "crit.jsonl", "-p", "passages.jsonl", "-k", "6", "-o", "ret.jsonl", cwd=tmp_path)
    assert counts(out.stdout)[0] == crit_kept
    ret_kept = counts(out.stdout)[1]
    if ret_kept == 0:
        pytest.skip("no question shares a word with the passages (BM25 found nothing): nothing left for the later steps")
    out = cli("filter", "--difficulty", "-i", "ret.jsonl", "-o", "hard.jsonl", "-m", "embedded;max_tokens=16",
              "--max-correct", "1", cwd=tmp_path)
    assert counts(out.stdout) == (ret_kept, ret_kept, 0)  # one setting, at most one correct: all kept
    out = cli("dedup", "-i", "hard.jsonl", "-o", "final.jsonl", cwd=tmp_path)
    assert counts(out.stdout)[0] == ret_kept
    # human review (Part 1's review export/import) on the QA items: two annotators' sheets filled here,
    # A keeps everything, B drops the first item; the arbiter drops it
    import csv

    cli("review", "export", "final.jsonl", "-o", "sheet.csv", cwd=tmp_path)
    rows = list(csv.DictReader((tmp_path / "sheet.csv").open(encoding="utf-8")))
    assert [r["id"] for r in rows] == [i["id"] for i in lines(tmp_path / "final.jsonl")]
    assert rows[0]["question"] and rows[0]["answer"] and "qa" in rows[0]["provenance"]
    for name, drop_first in (("a.csv", False), ("b.csv", True)):
        with (tmp_path / name).open("w", encoding="utf-8", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(rows[0]))
            w.writeheader()
            for k, r in enumerate(rows):
                w.writerow({**r, "verdict": "drop" if drop_first and k == 0 else "keep"})
    (tmp_path / "arbiter.csv").write_text(f"id,verdict,corrected_answer,comment\n{rows[0]['id']},drop,,arbiter\n", encoding="utf-8")
    out = cli("review", "import", "final.jsonl", "a.csv", "b.csv", "--arbiter", "arbiter.csv", "-o", "reviewed.jsonl", cwd=tmp_path)
    assert "kappa" in out.stdout
    reviewed = lines(tmp_path / "reviewed.jsonl")
    assert len(reviewed) == len(rows) - 1
    if not reviewed:
        pytest.skip("one item reached review and the arbiter dropped it: no task to run")
    cli("task", "-i", "reviewed.jsonl", "-o", "task", "--name", "cs_e2e_qa", cwd=tmp_path)

    import os
    import subprocess
    import sys

    from test_build_qa import REPO

    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    p = subprocess.run([sys.executable, "-m", "glotbench", "run", "-t", "task/task.yaml", "-m", "embedded", "--judge", "embedded",
                        "--max-tokens", "16", "-o", "run", "--no-progress"], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    res = json.loads((tmp_path / "run" / "results.json").read_text(encoding="utf-8"))
    t = res["tasks"]["cs_e2e_qa"]
    assert t["n_items"] == len(reviewed)
    assert "factuality_co" in t["metrics"]
    # the SimpleQA rates recomputed from the run's own grades (samples.jsonl)
    from value_oracles import run_value_mismatches

    assert run_value_mismatches(tmp_path / "run") == []
    assert [s["step"] for s in reviewed[0]["provenance"]][-5:] == ["criteria", "retrieval_check", "difficulty", "dedup", "review"]
