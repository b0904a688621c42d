"""issue 48: journal rows carry a checksum of their content. An answer edited in place, or a
response row of invalid JSON, is found by `glotbench doctor` (which names it) and the rerun sends
exactly that item's request again; a journal written before checksums is still read. Fresh
subprocesses against the stub; requests counted at the stub."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys

import httpx
import pytest

TASK = "mm_eval.semantics"
ENV = {**os.environ, "OPENAI_API_KEY": "x"}


def _cli(*args, timeout=180):
    return subprocess.run([sys.executable, "-m", "glotbench", *map(str, args)], env=ENV, capture_output=True, text=True,
                          timeout=timeout)


def _run(base, out, n=10):
    done = _cli("run", "--model", "openai:stub", "--base-url", base, "--tasks", TASK, "--limit", n, "--concurrency", 2,
                "--output", out, "--no-progress", "--bootstrap", 20)
    assert done.returncode == 0, done.stderr[-2000:]
    return done


def _sent(base):
    return [e["hash"] for e in httpx.get(base.replace("/v1", "/_log")).json()["log"]]


def _first_key(db):
    con = sqlite3.connect(db)
    try:
        return con.execute("SELECT key FROM responses ORDER BY key LIMIT 1").fetchone()[0]
    finally:
        con.close()


def _edit(db, sql, *params):
    con = sqlite3.connect(db)
    con.execute(sql, params)
    con.commit()
    con.close()


@pytest.mark.parametrize("damage", ["edited answer", "invalid JSON"])
def test_damaged_response_row_is_named_by_doctor_and_the_rerun_resends_exactly_it(damage, stub_server, data_root,
                                                                                   tmp_path):
    base = stub_server("--answer", "B")
    out = tmp_path / "run"
    _run(base, out)
    db = out / "journal.sqlite"
    key = _first_key(db)
    if damage == "edited answer":  # valid JSON, another answer: only the checksum tells
        _edit(db, "UPDATE responses SET response = replace(response, '\"B\"', '\"A\"') WHERE key = ?", key)
    else:
        _edit(db, "UPDATE responses SET response = '{\"text\": \"B\"' WHERE key = ?", key)
    check = _cli("runs", "doctor", out, "--check")
    assert check.returncode == 1, check.stdout + check.stderr
    assert "row damage: 1 row(s)" in check.stdout and f"key {key[:12]}" in check.stdout, check.stdout
    n = len(_sent(base))
    again = _run(base, out)
    new = _sent(base)[n:]
    assert len(new) == 1, (len(new), again.stderr[-1000:])  # exactly the damaged item's request
    con = sqlite3.connect(db)
    text = json.loads(con.execute("SELECT response FROM responses WHERE key = ?", (key,)).fetchone()[0])["text"]
    con.close()
    assert text == "B"  # the fresh answer replaced the damaged row
    results = json.loads((out / "results.json").read_text())
    assert results["tasks"][TASK]["n_scored"] == 10
    assert _cli("runs", "doctor", out, "--check").returncode == 0


def test_doctor_repairs_and_the_rerun_resends_exactly_the_dropped(stub_server, data_root, tmp_path):
    base = stub_server("--answer", "B")
    out = tmp_path / "run"
    _run(base, out)
    db = out / "journal.sqlite"
    key = _first_key(db)
    _edit(db, "UPDATE responses SET response = replace(response, '\"B\"', '\"C\"') WHERE key = ?", key)
    fix = _cli("runs", "doctor", out)
    assert fix.returncode == 0 and "left out" in fix.stdout, fix.stdout + fix.stderr
    assert _cli("runs", "doctor", out, "--check").returncode == 0
    n = len(_sent(base))
    _run(base, out)
    assert len(_sent(base)) - n == 1


def test_edited_sample_record_is_rescored_without_a_request(stub_server, data_root, tmp_path):
    base = stub_server("--answer", "B")
    out = tmp_path / "run"
    _run(base, out)
    before = json.loads((out / "results.json").read_text())["tasks"][TASK]["metrics"]
    db = out / "journal.sqlite"
    con = sqlite3.connect(db)
    sid, rec = con.execute("SELECT sample_id, record FROM samples ORDER BY idx LIMIT 1").fetchone()
    rec = json.loads(rec)
    rec["values"] = {k: 1 - v if isinstance(v, (int, float)) else v for k, v in (rec.get("values") or {}).items()}
    con.execute("UPDATE samples SET record = ? WHERE sample_id = ?", (json.dumps(rec), sid))
    con.commit()
    con.close()
    check = _cli("runs", "doctor", out, "--check")
    assert check.returncode == 1 and f"item {sid}: fails its checksum" in check.stdout, check.stdout
    n = len(_sent(base))
    _run(base, out)
    assert len(_sent(base)) == n  # rescored from its answer: nothing sent
    assert json.loads((out / "results.json").read_text())["tasks"][TASK]["metrics"] == before


def test_journal_without_checksums_is_read_and_gets_the_column(tmp_path):
    from glotbench.engine.journal import SCHEMA, Journal

    db = tmp_path / "journal.sqlite"
    old = SCHEMA.replace(",\n    sum TEXT                       -- row_sum(key, response); NULL in journals written before checksums", "")
    old = old.replace("    sum TEXT,                      -- row_sum(run_key, task, sample_id, status, record)\n", "")
    old = old.replace("    sum TEXT,                      -- row_sum(judge_id, task, sample_id, sample_index, record)\n", "")
    assert "sum TEXT" not in old
    con = sqlite3.connect(db)
    con.executescript(old)
    con.execute("INSERT INTO responses VALUES ('k1', 'model', 'generate', 'm', '{}', '{\"text\": \"A\"}', 0.1, 1.0)")
    con.execute("INSERT INTO responses VALUES ('k2', 'model', 'generate', 'm', '{}', '{\"text\": ', 0.1, 1.0)")
    con.execute("INSERT INTO samples VALUES ('rk', 't', 's1', 0, 'scored', '{\"request_keys\": [\"k1\"]}', 1.0)")
    con.execute("INSERT INTO samples VALUES ('rk', 't', 's2', 1, 'scored', '{\"request_keys\": [\"k2\"]}', 1.0)")
    con.commit()
    con.close()
    j = Journal(db)
    try:
        assert j.get_response("k1") == {"text": "A"}
        assert j.get_response("k2") is None and j.damaged_keys == {"k2"}  # invalid JSON: a miss, sent again
        assert j.scored_ids("rk", "t") == {"s1"}  # s2's answer is damaged: the item is redone
    finally:
        j.close()
