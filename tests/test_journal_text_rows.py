"""The journal's JSON columns: stored as SQLite TEXT (rows are bound as UTF-8 bytes and cast), read
back with the same values, and each answer's ``request`` is the exact JSON its key hashes, so a
journal can be checked row by row (``sha256(request) == key``).

A real run through the CLI in a fresh process, against the stub server, on a task with Mongolian
and Chinese text (two to three UTF-8 bytes a character, where text and bytes differ).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from glotbench.engine.journal import Journal
from glotbench.models.base import GenRequest, LoglikelihoodRequest, canonical_json

TASK = """
name: text_rows
version: "1.0"
language: mn
dataset:
  format: csv
  splits: {test: %(csv)s}
fields:
  id: qid
  question: problem
  target: gold
prompt:
  user: "{{ question }}"
scorer: exact_match
metrics: [exact_match]
"""


def test_rows_are_text_and_requests_hash_to_their_keys(tmp_path, stub_server):
    csv = tmp_path / "items.csv"
    csv.write_text("qid,problem,gold\nq1,Монгол улсын нийслэл аль хот вэ?,Улаанбаатар\n"
                   "q2,中国的首都是哪里？,北京\nq3,2+2?,4\n", encoding="utf-8")
    task = tmp_path / "text_rows.yaml"
    task.write_text(TASK % {"csv": csv}, encoding="utf-8")
    base = stub_server("--answer", "Улаанбаатар")
    cmd = [sys.executable, "-m", "glotbench", "run", "--model", "openai:stub", "--base-url", base, "--tasks", str(task),
           "--output", str(tmp_path / "run"), "--no-progress"]
    done = subprocess.run(cmd, env={**os.environ, "OPENAI_API_KEY": "x"}, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]

    con = sqlite3.connect(tmp_path / "run" / "journal.sqlite")
    rows = con.execute("SELECT key, model_id, request, response, typeof(request), typeof(response) FROM responses").fetchall()
    assert len(rows) == 3
    for key, model_id, request, response, t_req, t_resp in rows:
        assert (t_req, t_resp) == ("text", "text")
        assert hashlib.sha256(request.encode()).hexdigest() == key  # the stored request is what the key hashes
        req = json.loads(request)
        assert req["kind"] == "generate" and req["model"] == model_id
        assert req["messages"][-1]["content"] in {"Монгол улсын нийслэл аль хот вэ?", "中国的首都是哪里？", "2+2?"}
        assert json.loads(response)["text"] == "Улаанбаатар"
    assert {r[0] for r in con.execute("SELECT typeof(record) FROM samples")} == {"text"}
    con.close()

    journal = Journal(tmp_path / "run" / "journal.sqlite")
    try:
        recs = {r["sample_id"]: r for r in journal.iter_samples()}
        assert recs["q1"]["pred"] == "Улаанбаатар" and recs["q1"]["values"]["exact_match"] == 1.0
        assert recs["q2"]["gold"] == "北京" and recs["q2"]["values"]["exact_match"] == 0.0
        assert journal.get_response(rows[0][0])["text"] == "Улаанбаатар"
        assert journal.get_request(rows[0][0])["model"] == rows[0][1]
    finally:
        journal.close()
    lines = [json.loads(x) for x in (tmp_path / "run" / "samples.jsonl").read_text(encoding="utf-8").splitlines()]
    assert {x["sample_id"]: x["gold"] for x in lines} == {"q1": "Улаанбаатар", "q2": "北京", "q3": "4"}


def test_keyed_json_is_the_canonical_json_of_the_key():
    for req, kind in ((GenRequest(messages=({"role": "user", "content": "Сайн уу? 你好"},), max_tokens=5), "generate"),
                      (LoglikelihoodRequest(context="Асуулт:", continuation=" Б"), "loglikelihood")):
        text = req.keyed_json("m1")
        assert text == canonical_json({"kind": kind, "model": "m1", **req.to_dict()}).encode()
        assert req.key("m1") == hashlib.sha256(text).hexdigest()
        assert req.keyed_json("m2") != text and req.key("m2") != req.key("m1")


def test_rows_with_a_lone_surrogate_are_kept(tmp_path):
    """A reply decoded by the standard library may hold a lone surrogate (``"\\ud800"`` in the JSON),
    which has no UTF-8: the row is written with escapes and reads back the same."""
    journal = Journal(tmp_path / "journal.sqlite")
    try:
        journal.put_response("k", role="model", kind="generate", model_id="m", request={"prompt": "x"},
                             response={"text": "a\ud800b", "raw": {}}, latency_s=0.1)
        journal.put_sample("r", "t", "s1", 0, "scored", {"outputs": [{"text": "a\ud800b"}], "pred": "\udfff"})
        journal.flush()
        assert journal.get_response("k")["text"] == "a\ud800b"
        rec = next(journal.iter_samples())
        assert rec["outputs"][0]["text"] == "a\ud800b" and rec["pred"] == "\udfff"
    finally:
        journal.close()
