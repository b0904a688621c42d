"""``--model recorded:FILE``: answers a user already has, scored like live answers.

Every CLI call runs in a fresh subprocess (no module imported by pytest can help it).
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from glotbench.paths import find_data_root

pytestmark = pytest.mark.slow

NEEDS_DATA = pytest.mark.skipif(find_data_root() is None or not (find_data_root() / "mm_eval").exists(),
                                reason="benchmark data not found: put the shared data folder at ../shared/data")


def glotbench(*args: str, timeout: int = 900) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "glotbench", *args], capture_output=True, text=True, timeout=timeout)


def _samples(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "samples.jsonl").read_text(encoding="utf-8").splitlines()]


def _metrics(run_dir: Path, task: str) -> dict:
    res = json.loads((run_dir / "results.json").read_text(encoding="utf-8"))
    t = res["tasks"][task]
    return {"n_scored": t["n_scored"], "n_unparseable": t["n_unparseable"],
            **{name: (m["value"], m["ci95"]) for name, m in t["metrics"].items()}}


@NEEDS_DATA
def test_recorded_answers_from_a_real_run_score_identically(tmp_path):
    live = tmp_path / "live"
    done = glotbench("run", "--tasks", "mm_eval.knowledge,mm_eval.reasoning", "--limit", "5", "--max-tokens", "24",
                     "--no-progress", "-o", str(live))
    assert done.returncode == 0, done.stderr
    # the answers as a user would have them: a CSV with their own column names
    rows = [{"item": r["sample_id"], "task_name": r["task"], "response": r["outputs"][0]["text"]} for r in _samples(live)]
    answers = tmp_path / "answers.csv"
    with answers.open("w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=["item", "task_name", "response"])
        w.writeheader()
        w.writerows(rows)
    rec = tmp_path / "rec"
    done = glotbench("run", "--model", f"recorded:{answers}", "-M", "id=item", "-M", "answer=response",
                     "-M", "task=task_name", "--tasks", "mm_eval.knowledge,mm_eval.reasoning", "--limit", "5",
                     "--max-tokens", "24", "--no-progress", "-o", str(rec))
    assert done.returncode == 0, done.stderr
    for task in ("mm_eval.knowledge", "mm_eval.reasoning"):
        assert _metrics(rec, task) == _metrics(live, task)
    live_preds = {(r["task"], r["sample_id"]): r.get("pred") for r in _samples(live)}
    rec_preds = {(r["task"], r["sample_id"]): r.get("pred") for r in _samples(rec)}
    assert rec_preds == live_preds and len(rec_preds) == 10
    res = json.loads((rec / "results.json").read_text(encoding="utf-8"))
    assert res["model"]["backend"] == "recorded" and len(res["model"]["sha256"]) == 64
    assert res["model"]["model_id"].startswith("recorded:answers.csv@")


def _task_items(task_name: str, n: int) -> list:
    from glotbench.tasks.registry import resolve

    (task,) = resolve([task_name])
    return task.samples(None, n)


@NEEDS_DATA
def test_match_by_question_text_counts_missing_and_ambiguous(tmp_path):
    items = _task_items("mm_eval.knowledge", 6)
    assert "question" in items[0].vars, sorted(items[0].vars)
    rows = []
    for k, s in enumerate(items[:4]):
        # other ids, other whitespace: matched by the normalised question text
        q = "  " + "\n".join(str(s.vars["question"]).split(" ")) + " "
        rows.append({"qid": f"theirs-{k}", "question": q, "answer": "A"})
    # item 5: two rows with different answers (ambiguous); item 6: absent
    rows.append({"qid": "dup-1", "question": items[4].vars["question"], "answer": "A"})
    rows.append({"qid": "dup-2", "question": items[4].vars["question"], "answer": "B"})
    path = tmp_path / "answers.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "run"
    done = glotbench("run", "--model", f"recorded:{path}", "-M", "question=question", "--tasks", "mm_eval.knowledge",
                     "--limit", "6", "--no-progress", "-o", str(out))
    assert "1 item(s) not in the file" in done.stderr, done.stderr
    assert "1 item(s) matched by several rows" in done.stderr, done.stderr
    recs = {r["sample_id"]: r for r in _samples(out)}
    scored = [sid for sid, r in recs.items() if r["status"] == "scored"]
    assert sorted(scored) == sorted(s.id for s in items[:4])
    assert recs[items[4].id]["status"] == "error" and "ambiguous" in recs[items[4].id]["error"]
    assert recs[items[5].id]["status"] == "error" and "not in the recorded answers" in recs[items[5].id]["error"]
    for s in items[:4]:
        assert recs[s.id]["outputs"][0]["text"] == "A"
    res = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert any("not in the file" in n for n in res["model_notes"])
    assert res["tasks"]["mm_eval.knowledge"]["n_scored"] == 4 and res["tasks"]["mm_eval.knowledge"]["n_errors"] == 2


def test_bad_grade_and_missing_column_are_one_line(tmp_path, data_root):
    path = tmp_path / "a.csv"
    path.write_text("id,answer,grade\nx1,foo,CORRECT\nx2,bar,maybe\n", encoding="utf-8")
    done = glotbench("run", "--model", f"recorded:{path}", "-M", "grade=grade", "--tasks", "mm_eval.knowledge",
                     "--limit", "2", "--no-progress", "-o", str(tmp_path / "r"))
    assert done.returncode == 2
    assert "row 2: field 'grade' (the grade): unknown grade 'maybe'" in done.stderr
    assert "Traceback" not in done.stderr
    done = glotbench("run", "--model", f"recorded:{path}", "-M", "answer=reply", "--tasks", "mm_eval.knowledge",
                     "--limit", "2", "--no-progress", "-o", str(tmp_path / "r2"))
    assert done.returncode == 2 and "column 'reply' (the answer column) is in no row" in done.stderr
    assert "Traceback" not in done.stderr


CSQA = pytest.mark.skipif(find_data_root() is None or not (find_data_root() / "chinese_simpleqa").exists(),
                          reason="Chinese SimpleQA data not found under ../shared/data")

# Grades written by hand for this test (not a published release): they only have to be a fixed,
# known set of grades for the judge agreement to be computed against.
HAND_GRADES = ["CORRECT", "INCORRECT", "NOT_ATTEMPTED", "B"]


@CSQA
def test_compare_judges_live_judge_against_recorded_grades(tmp_path):
    items = _task_items("chinese_simpleqa", 4)
    rows = [{"id": s.id, "answer": str(s.target) if k == 0 else ("我不知道" if k == 2 else "巴黎"), "grade": HAND_GRADES[k]}
            for k, s in enumerate(items)]
    path = tmp_path / "graded.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "run"
    done = glotbench("run", "--model", f"recorded:{path}", "-M", "grade=grade", "--judge", "embedded",
                     "--tasks", "chinese_simpleqa", "--limit", "4",
                     "--no-progress", "-o", str(out))
    assert done.returncode == 0, done.stderr
    done = glotbench("judge", "compare", str(out))
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert "recorded-grades:graded.jsonl" in text and "Cohen" in text
    assert "Grades:" in text and "(rows)" in text, text
    # the recorded judge's grades are exactly the hand-written ones
    import sqlite3

    con = sqlite3.connect(out / "journal.sqlite")
    rows_db = con.execute("SELECT sample_id, record FROM judgments WHERE judge_id LIKE 'recorded-grades:%'").fetchall()
    got = {sid: json.loads(rec)["grade"] for sid, rec in rows_db}
    want = {s.id: {"B": "INCORRECT"}.get(g, g) for s, g in zip(items, HAND_GRADES)}
    assert got == want
