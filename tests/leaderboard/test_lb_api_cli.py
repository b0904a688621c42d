"""The REST API a CI job uses, and the ``glotbench admin`` / ``serve`` commands."""

from __future__ import annotations

import json

import pytest
from lb_helpers import (
    ADMIN,
    META,
    api_token,
    fake_predictions,
    hulu_path,
    login,
    register,
    submission_json,
)
from typer.testing import CliRunner


def test_ci_flow_through_the_api(cola_task, client_factory):
    alice, admin, anon = client_factory(), client_factory(), client_factory()
    register(alice, "alice", team="ELTE")
    login(admin, *ADMIN)
    ta, tadmin = api_token(alice), api_token(admin)
    ha, hadmin = {"Authorization": f"Bearer {ta}"}, {"Authorization": f"Bearer {tadmin}"}
    preds = fake_predictions(cola_task, ["0", "1"])
    # multipart, with the model name as a form field and a bare list in the file
    bare = json.dumps([{"id": i, "label": l} for i, l in preds.items()])
    r = anon.post("/api/submissions", files={"file": ("p.json", bare)}, data={"task": "hulu.cola", "model": "puli-ci", **META}, headers=ha)
    assert r.status_code == 201, r.text
    sub = r.json()
    assert sub["status"] == "pending" and sub["team"] == "ELTE" and sub["model"] == "puli-ci"
    assert sub["model_size"] == META["model_size"] and sub["score"] == round(sub["score"], 3)
    assert anon.get(f"/api/submissions/{sub['id']}", headers=ha).json()["score"] == sub["score"]
    assert anon.get("/api/leaderboard/hulu.cola").json()["rows"] == []
    r = anon.post(f"/api/submissions/{sub['id']}/review", json={"status": "approved"}, headers=hadmin)
    assert r.status_code == 200 and r.json()["status"] == "approved"
    # before approval its owner saw the score in steps of 0.05 (issue 48); approved, everyone sees 3 decimals
    full = r.json()["score"]
    assert abs(sub["score"] - full) <= 0.025 + 1e-9 and abs(sub["score"] / 0.05 - round(sub["score"] / 0.05)) < 1e-9
    sub = {**sub, "score": full}
    rows = anon.get("/api/leaderboard/hulu.cola").json()["rows"]
    assert [(x["model"], x["score"]) for x in rows] == [("puli-ci", sub["score"])]
    lo, hi = rows[0]["ci95"]
    assert lo < sub["score"] < hi
    overall = anon.get("/api/leaderboard").json()
    assert overall["rows"][0]["n_tasks"] == 1 and "mean" in overall["note"]
    assert overall["rows"][0]["cells"]["hulu.cola"]["ci95"] == [lo, hi]
    assert anon.get("/api/tasks").json() == [{"name": "hulu.cola", "title": "HuCOLA (dev)", "metric": "mcc", "direction": "higher",
                                                  "answers": "labels", "labels": ["0", "1"],
                                              "n_items": 910, "public_share": None, "description": {"en": "", "hu": ""}, "downloads": {}}]
    csv_text = anon.get("/api/export.csv").text.splitlines()
    assert csv_text[0].startswith("model,team,user,average,n_tasks,date,hulu.cola,hulu.cola_ci_low")
    assert csv_text[1].startswith(f"puli-ci,ELTE,alice,{sub['score']},1,")
    assert anon.get("/api/export.json").json() == overall
    assert anon.get("/api/models/puli-ci").json()["submissions"][0]["id"] == sub["id"]
    audit = anon.get("/api/admin/audit", headers=hadmin).json()
    assert audit[0]["user"] == "alice" and audit[0]["day"] == 1
    assert anon.get("/api/admin/audit", headers=ha).status_code == 403
    assert anon.post(f"/api/submissions/{sub['id']}/review", json={"status": "bogus"}, headers=hadmin).status_code == 422


def test_overall_is_the_mean_over_tasks_with_approved_results(cola_task, sessions, client_factory):
    from glotbench.leaderboard import service

    from glotbench.leaderboard.config import Settings

    cfg = Settings(max_upload_bytes=10**6)
    with sessions() as db:
        service.add_task(db, "tiny", {"a": "x", "b": "y"}, "accuracy")
        alice = service.get_user(db, "admin")
        s1, _, _ = service.submit(db, alice, service.Upload("tiny", "m", META), json.dumps([{"id": "a", "label": "x"}, {"id": "b", "label": "x"}]).encode(), cfg)
        s2, _, _ = service.submit(db, alice, service.Upload("hulu.cola", "", META), submission_json("hulu.cola", "m", cola_task).encode(), cfg)
        s3, _, _ = service.submit(db, alice, service.Upload("tiny", "m", META), json.dumps([{"id": "a", "label": "y"}, {"id": "b", "label": "x"}]).encode(), cfg)
        for s in (s1, s2, s3):
            service.review(db, alice, s.id, "approved")
        rows = service.overall_board(db)
    assert len(rows) == 1 and rows[0].n_tasks == 2
    assert rows[0].score == pytest.approx((0.5 + 1.0) / 2)  # best per task (0.5 beats 0.0), then the mean


def test_admin_commands(tmp_path, monkeypatch):
    from glotbench.cli import _register, app
    from glotbench.errors import GlotbenchError

    _register()
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    run = CliRunner().invoke
    r = run(app, ["admin", "create-user", "boss", "--admin", "--password-stdin", "--db", url], input="boss-password\n")
    assert r.exit_code == 0 and "created administrator 'boss'" in r.output
    r = run(app, ["admin", "add-task", "hulu.cola", "--gold", str(hulu_path("cola")), "--metric", "mcc", "--db", url])
    assert r.exit_code == 0 and "task 'hulu.cola': 910 items, metric mcc, labels 0, 1" in r.output
    r = run(app, ["admin", "list-tasks", "--db", url])
    assert "hulu.cola\tmcc\t910 items" in r.output
    # the noun's --db reaches its sub-command through the click context, and stays with that invocation
    assert "hulu.cola" in run(app, ["admin", "--db", url, "list-tasks"]).output
    monkeypatch.setenv("GLOTBENCH_DB", f"sqlite:///{tmp_path / 'other.db'}")
    r = run(app, ["admin", "list-tasks"])
    assert r.exit_code == 0 and "hulu.cola" not in r.output
    r = run(app, ["admin", "create-token", "boss", "--db", url])
    assert r.exit_code == 0 and r.output.startswith("gbt_")
    r = run(app, ["admin", "add-task", "x", "--gold", str(hulu_path("cola")), "--metric", "no_such_metric", "--db", url])
    assert isinstance(r.exception, GlotbenchError) and "'no_such_metric' is not a registered metric" in str(r.exception)
    assert "accuracy" in str(r.exception) and "exact_match" in str(r.exception) and "numeric_match" in str(r.exception)
    r = run(app, ["admin", "add-task", "x", "--gold", str(hulu_path("cola")), "--metric", "wb_score", "--db", url])
    assert isinstance(r.exception, GlotbenchError) and "metric 'wb_score' cannot be computed from a prediction and a reference alone" in str(r.exception)
    r = run(app, ["admin", "add-task", "x", "--gold", str(tmp_path / "nope.json"), "--metric", "mcc", "--db", url])
    assert isinstance(r.exception, GlotbenchError) and "nope.json: cannot read gold file" in str(r.exception)
    bad = tmp_path / "bad.json"
    bad.write_text('[{"id": "1", "label": "a"}, {"id": "2"}]')
    r = run(app, ["admin", "add-task", "x", "--gold", str(bad), "--metric", "mcc", "--db", url])
    assert "bad.json: record 1 has no 'label' field" in str(r.exception)
    r = run(app, ["serve", "--help"])
    assert r.exit_code == 0 and "--db" in r.output


def test_create_user_as_the_readme_writes_it_works_without_a_tty(tmp_path):
    """``glotbench admin create-user admin --admin --db ...`` in a script (fresh process, no TTY):
    nothing on stdin -> a generated password is printed; a piped line or $GLOTBENCH_PASSWORD is used."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    from glotbench.leaderboard import service
    from glotbench.leaderboard.db import open_db

    repo = Path(__file__).resolve().parents[2]
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    env = {k: v for k, v in os.environ.items() if k != "GLOTBENCH_PASSWORD"}
    env["PYTHONPATH"] = str(repo / "src")

    def run(args, stdin=subprocess.DEVNULL, input=None, extra_env=None):
        return subprocess.run([sys.executable, "-m", "glotbench", "admin", "create-user", *args, "--db", url],
                              stdin=None if input is not None else stdin, input=input, capture_output=True, text=True,
                              timeout=120, env={**env, **(extra_env or {})})

    r = run(["admin", "--admin"])
    assert r.returncode == 0, r.stderr
    generated = r.stdout.split("password: ", 1)[1].strip()
    r2 = run(["piped"], input="piped-password-1\n")
    r3 = run(["fromenv"], extra_env={"GLOTBENCH_PASSWORD": "env-password-12"})
    assert r2.returncode == 0 and r3.returncode == 0 and "password:" not in r2.stdout + r3.stdout, (r2.stderr, r3.stderr)
    with open_db(url)() as db:
        assert service.authenticate(db, "admin", generated).is_admin
        assert service.authenticate(db, "piped", "piped-password-1") is not None
        assert service.authenticate(db, "fromenv", "env-password-12") is not None


def test_admin_db_is_the_group_s_option_and_rare_knobs_are_settings(tmp_path, monkeypatch):
    """Issue 52: ``glotbench admin --db URL SUB-COMMAND`` (or $GLOTBENCH_DB) names the database once for every
    sub-command; the sub-command's own ``--db`` (the earlier spelling) still works and wins; add-task's
    id/label fields and downloads are settings (``--set``), the same as their (unlisted) flags."""
    import json

    from glotbench.cli import _register, app

    _register()
    a, b = f"sqlite:///{tmp_path / 'a.db'}", f"sqlite:///{tmp_path / 'b.db'}"
    gold = tmp_path / "gold.jsonl"
    gold.write_text("".join(json.dumps({"key": str(i), "answer": "yes" if i % 2 else "no"}) + "\n" for i in range(6)))
    run = CliRunner().invoke
    monkeypatch.delenv("GLOTBENCH_DB", raising=False)
    r = run(app, ["admin", "--db", a, "add-task", "t.set", "--gold", str(gold), "--metric", "accuracy",
                  "--set", "id_field=key,label_field=answer"])
    assert r.exit_code == 0 and "task 't.set': 6 items, metric accuracy, labels no, yes" in r.output, r.output
    assert (tmp_path / "a.db").is_file() and not (tmp_path / "b.db").exists()  # the group's --db took it
    r = run(app, ["admin", "add-task", "t.flag", "--gold", str(gold), "--metric", "accuracy", "--id-field", "key",
                  "--label-field", "answer", "--db", b])  # the flags before: the same task
    assert r.exit_code == 0 and "task 't.flag': 6 items, metric accuracy, labels no, yes" in r.output, r.output
    assert run(app, ["admin", "--db", a, "list-tasks"]).output == "t.set\taccuracy\t6 items\tlabels: no, yes\n"
    assert run(app, ["admin", "--db", a, "list-tasks", "--db", b]).output.startswith("t.flag\t")  # the sub-command's wins
    monkeypatch.setenv("GLOTBENCH_DB", b)
    assert run(app, ["admin", "list-tasks"]).output.startswith("t.flag\t")
    r = run(app, ["admin", "--db", a, "add-task", "t2", "--gold", str(gold), "--metric", "accuracy", "--set", "id_feld=key"])
    assert "--set id_feld: not a setting of this command; did you mean id_field" in str(r.exception)
