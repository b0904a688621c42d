"""Re-reporting a finished run from its stored summary (engine/stored_summary.py): the same results
as recomputing, and every change that could alter them (settings, data, a replaced or added journal
row, a deleted samples.jsonl, an unfinished run) takes the full path instead."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from glotbench.engine.journal import Journal

REUSED = "results re-read, not recomputed"


def _task(tmp: Path, n: int = 40) -> Path:
    rows = [{"id": f"q{k}", "question": f"Question {k}?",
             "choices": [{"label": lab, "text": f"option {lab} {k}"} for lab in "ABCD"],
             "answerKey": "ABCD"[(k * 7) % 4], "level": f"L{k % 3}"} for k in range(n)]
    (tmp / "data.json").write_text(json.dumps(rows), encoding="utf-8")
    spec = tmp / "stored.yaml"
    spec.write_text("""name: t.stored
version: "1.0"
language: en
dataset: {format: json, splits: {test: data.json}, eval_split: test}
fields: {id: id, question: question, choices: "choices[*].text", labels: "choices[*].label", target: answerKey, level: level}
output_type: multiple_choice
prompt:
  user: "{{ question }}\\n{{ choices_block }}"
generation: {max_tokens: 4, temperature: 0.0}
extractor: {name: choice}
scorer: label
metrics: [accuracy, macro_f1]
slice_by: [level]
""", encoding="utf-8")
    return spec


def _run(spec: Path, base: str, out: Path, *extra: str, ok: tuple[int, ...] = (0,)) -> subprocess.CompletedProcess:
    env = {**os.environ, "OPENAI_API_KEY": "x"}
    p = subprocess.run([sys.executable, "-m", "glotbench", "run", "-m", "openai:stub", "--base-url", base, "-t", str(spec),
                        "-o", str(out), "--no-progress", *extra], capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode in ok, p.stderr
    return p


def _tasks(out: Path) -> dict:
    return json.loads((out / "results.json").read_text(encoding="utf-8"))["tasks"]


def test_rerun_of_a_finished_run_reuses_its_results_and_every_change_recomputes(tmp_path, stub_server):
    base = stub_server("--answer", "B")
    spec, out = _task(tmp_path), tmp_path / "run"
    first = _run(spec, base, out)
    assert REUSED not in first.stderr
    computed = _tasks(out)

    again = _run(spec, base, out)  # nothing changed: re-read
    assert REUSED in again.stderr and "all 40 item(s)" in again.stderr
    assert _tasks(out) == computed
    assert len(json.loads((out / "results.json").read_text())["run"]["sessions"]) == 2
    assert _run(spec, base, out, "--note", "only a note").stderr.count(REUSED) == 1  # the note computes nothing

    other = _run(spec, base, out, "--bootstrap", "200")  # another setting: recomputed (other intervals)
    assert REUSED not in other.stderr
    assert _tasks(out)["t.stored"]["metrics"]["accuracy"]["ci95"] != computed["t.stored"]["metrics"]["accuracy"]["ci95"]
    assert REUSED in _run(spec, base, out, "--bootstrap", "200").stderr

    (out / "samples.jsonl").unlink()  # a deleted export is written again
    assert REUSED not in _run(spec, base, out, "--bootstrap", "200").stderr
    assert sum(1 for _ in (out / "samples.jsonl").open()) == 40

    # a record replaced in the journal (what a re-grade does): recomputed, and the new grade counts
    j = Journal(out / "journal.sqlite")
    row = next(r for r in j.iter_samples() if r["pred"] != r["gold"])
    ident = {k: row.pop(k) for k in ("run_key", "task", "sample_id", "idx", "status")}
    row["pred"], row["values"] = row["gold"], {**row["values"], "correct": 1.0}
    j.put_sample(ident["run_key"], ident["task"], ident["sample_id"], ident["idx"], ident["status"], row)
    j.close()
    before = _tasks(out)["t.stored"]["metrics"]["accuracy"]["value"]
    assert REUSED not in _run(spec, base, out, "--bootstrap", "200").stderr
    assert _tasks(out)["t.stored"]["metrics"]["accuracy"]["value"] == round(before + 1 / 40, 6)

    # the data changed: another fingerprint, the items run again
    data = tmp_path / "data.json"
    data.write_text(data.read_text().replace('"answerKey": "A"', '"answerKey": "C"'), encoding="utf-8")
    changed = _run(spec, base, out, "--bootstrap", "200")
    assert REUSED not in changed.stderr and "40 item(s) to run" in changed.stderr


def test_a_run_with_failed_items_is_never_reused(tmp_path, stub_server):
    spec, out = _task(tmp_path, 12), tmp_path / "run"
    base = stub_server("--fault-rate", "0.5")
    first = _run(spec, base, out, "--max-retries", "0")
    assert _tasks(out)["t.stored"]["n_errors"] > 0
    j = Journal(out / "journal.sqlite")
    assert j.get_meta("summary_stamp") is None  # no stamp: the failed items are owed a retry
    j.close()
    # they are sent again, not re-read (the stub fails the same bodies again: exit 2, nothing got through)
    second = _run(spec, base, out, "--max-retries", "0", ok=(0, 2))
    assert REUSED not in first.stderr + second.stderr and "already done" in second.stderr


# A `glotbench run` whose item reading raises: Task.samples (every item read goes through it) and
# build_sample (every item built) fail loudly, so a run that reads one item exits 2 with this line.
_NO_ITEMS = ("import sys, glotbench.tasks.task as T\n"
             "def boom(*a, **k):\n"
             "    raise SystemExit('ITEMS READ: ' + T.Task.samples.__name__)\n"
             "T.Task.samples = T.Task.build_sample = boom\n"
             "from glotbench.cli import main\n"
             "sys.argv[0] = 'glotbench'\n"
             "main()\n")


def _run_reading_no_item(spec: Path, base: str, out: Path, *extra: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "OPENAI_API_KEY": "x"}
    return subprocess.run([sys.executable, "-c", _NO_ITEMS, "run", "-m", "openai:stub", "--base-url", base, "-t",
                           str(spec), "-o", str(out), "--no-progress"], capture_output=True, text=True, env=env,
                          timeout=300)


def test_a_rereport_reads_no_item_and_a_changed_data_file_is_still_noticed(tmp_path, stub_server):
    base = stub_server("--answer", "B")
    spec, out = _task(tmp_path), tmp_path / "run"
    _run(spec, base, out)
    computed = _tasks(out)

    again = _run_reading_no_item(spec, base, out)  # the stored summary is checked before any item is read
    assert again.returncode == 0, again.stderr
    assert REUSED in again.stderr and "ITEMS READ" not in again.stderr
    assert _tasks(out) == computed

    # the instrument works: without a stamp to reuse, the same process reads the items and stops
    fresh = _run_reading_no_item(spec, base, tmp_path / "other")
    assert fresh.returncode != 0 and "ITEMS READ" in fresh.stderr

    # an edited data file (same size, so only its content tells) is noticed without reading items:
    # the run reads them (here: stops), and a normal run recomputes with the new answers
    data = tmp_path / "data.json"
    text = data.read_text()
    data.write_text(text.replace('"answerKey": "A"', '"answerKey": "B"'), encoding="utf-8")  # the stub answers B
    assert len(data.read_text()) == len(text)
    changed = _run_reading_no_item(spec, base, out)
    assert changed.returncode != 0 and "ITEMS READ" in changed.stderr
    recomputed = _run(spec, base, out)
    assert REUSED not in recomputed.stderr and "40 item(s) to run" in recomputed.stderr
    assert _tasks(out)["t.stored"]["metrics"]["accuracy"]["value"] != computed["t.stored"]["metrics"]["accuracy"]["value"]


# A `glotbench run` whose row-by-row checksum scan (Journal.has_damaged_rows) stops the process.
_NO_SCAN = ("import atexit, sys, glotbench.engine.journal as J\n"
            "atexit.register(lambda: print('HTTP CLIENT ' + str('aiohttp' in sys.modules), file=sys.stderr))\n"
            "def scan(self):\n"
            "    raise SystemExit('ROWS SCANNED')\n"
            "J.Journal.has_damaged_rows = scan\n"
            "from glotbench.cli import main\n"
            "sys.argv[0] = 'glotbench'\n"
            "main()\n")


def test_a_rereport_checksums_no_row_unless_a_row_was_changed_in_place(tmp_path, stub_server):
    import sqlite3

    base = stub_server("--answer", "B")
    spec, out = _task(tmp_path), tmp_path / "run"
    _run(spec, base, out)
    computed = _tasks(out)
    env = {**os.environ, "OPENAI_API_KEY": "x"}
    cmd = [sys.executable, "-c", _NO_SCAN, "run", "-m", "openai:stub", "--base-url", base, "-t", str(spec), "-o", str(out),
           "--no-progress"]
    again = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert again.returncode == 0 and REUSED in again.stderr and "ROWS SCANNED" not in again.stderr, again.stderr
    assert "HTTP CLIENT False" in again.stderr  # nothing is sent: the backend's HTTP client is never imported
    assert _tasks(out) == computed

    # a row changed in place by another SQLite client (here a column no summary reads): counted by the
    # journal's triggers, so the next re-report checksums every row as before (and still reuses)
    con = sqlite3.connect(out / "journal.sqlite")
    con.execute("UPDATE responses SET latency_s = 1.5 WHERE rowid = (SELECT MIN(rowid) FROM responses)")
    con.commit()
    con.close()
    j = Journal(out / "journal.sqlite")
    assert j.edit_count() == 1
    j.close()
    scanned = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert scanned.returncode != 0 and "ROWS SCANNED" in scanned.stderr
    assert REUSED in _run(spec, base, out).stderr

    # a response row added from outside (not through the run) is checksummed too
    con = sqlite3.connect(out / "journal.sqlite")
    con.execute("INSERT INTO responses SELECT 'k2', role, kind, model_id, request, response, latency_s, created, sum "
                "FROM responses LIMIT 1")
    con.commit()
    con.close()
    assert "ROWS SCANNED" in subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300).stderr


def test_a_journal_counts_rows_changed_in_place(tmp_path):
    import sqlite3

    path = tmp_path / "journal.sqlite"
    j = Journal(path)
    j.put_sample("r", "t", "s1", 0, "scored", {"a": 1})
    j.put_sample("r", "t", "s1", 0, "scored", {"a": 2})  # glotbench's own replace: no edit
    assert j.edit_count() == 0
    j.close()
    con = sqlite3.connect(path)
    con.execute("UPDATE samples SET record = '{}'")
    con.execute("DELETE FROM samples")
    con.commit()
    con.close()
    j = Journal(path)
    assert j.edit_count() == 2
    j.conn.execute("DROP TRIGGER samples_update")
    assert j.edit_count() is None  # a dropped trigger: nothing can be told
    j.close()

    # a journal written before the triggers, with rows: one edit, since nothing can tell what happened
    old = tmp_path / "old.sqlite"
    j = Journal(old)
    j.put_sample("r", "t", "s1", 0, "scored", {"a": 1})
    j.close()
    con = sqlite3.connect(old)
    con.executescript("DROP TABLE edits; " + "".join(f"DROP TRIGGER {t}_{e};" for t in ("responses", "samples", "judgments")
                                                      for e in ("update", "delete")))
    con.close()
    j = Journal(old)
    assert j.edit_count() == 1
    j.close()
