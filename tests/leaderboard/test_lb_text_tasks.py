"""Leaderboard tasks scored by any registered metric computable from a prediction and a hidden
reference (exact match, numeric match, absolute error), through the REST API; every number is
checked against a plain re-statement computed here, and a bad upload gets one line."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import unicodedata
from pathlib import Path

import numpy as np
import pytest
from lb_helpers import ADMIN, META, api_token, login

SRC = str(Path(__file__).resolve().parents[2] / "src")

# references with case, punctuation and spacing that exact match normalises away, and real misses
REFS = {"q1": "Budapest", "q2": "Petőfi Sándor", "q3": "1848", "q4": "the Danube", "q5": "Ady Endre",
        "q6": "Lake Balaton", "q7": "Mátyás király", "q8": "Kossuth Lajos", "q9": "Eger", "q10": "Tokaj"}
PREDS = {"q1": "budapest", "q2": "Petőfi  Sándor.", "q3": "1849", "q4": "The Danube!", "q5": "Ady",
         "q6": "Lake Balaton", "q7": "Matyas kiraly", "q8": "KOSSUTH LAJOS", "q9": "", "q10": "Tokaj?"}
NUM_REFS = {"a": "3.5", "b": "100", "c": "-2", "d": "0.001", "e": "42", "f": "7"}
NUM_PREDS = {"a": "3,5", "b": 100.0000001, "c": -2.5, "d": "0.001", "e": "forty-two", "f": 9}


def _norm(text: str) -> str:
    """The exact-match rule restated: NFKC, casefold, punctuation removed, whitespace collapsed."""
    text = unicodedata.normalize("NFKC", text).casefold().strip()
    return " ".join("".join(c for c in text if not unicodedata.category(c).startswith("P")).split())


def _as_number(x) -> float | None:
    try:
        return float(str(x).strip().replace(",", "."))
    except ValueError:
        return None


def _loop_interval(values: list[float], n_resamples: int = 1000, seed: int = 0) -> tuple[float, float]:
    """The percentile bootstrap of a mean, one resample at a time (NaN-free values: every item counts)."""
    rng = np.random.default_rng(seed)
    n = len(values)
    stats = [float(np.mean([values[j] for j in rng.integers(0, n, size=n)])) for _ in range(n_resamples)]
    return float(np.quantile(stats, 0.025)), float(np.quantile(stats, 0.975))


def _post(api, token: str, body) -> object:
    raw = body if isinstance(body, (bytes, str)) else json.dumps(body)
    return api.post("/api/submissions", content=raw, headers={"Authorization": f"Bearer {token}",
                                                               "Content-Type": "application/json"})


@pytest.fixture
def admin_api(client_factory):
    client = client_factory()
    login(client, *ADMIN)
    return client_factory(), api_token(client)


def test_exact_match_task_scores_and_interval_by_value(sessions, admin_api):
    from glotbench.leaderboard import service

    with sessions() as db:
        task = service.add_task(db, "qa.hu", REFS, "exact_match", title="Short answers")
        assert task.labels == []  # free text: no label set
    per_item = [float(_norm(PREDS[i]) == _norm(REFS[i])) for i in sorted(REFS)]
    expected = sum(per_item) / len(per_item)
    assert expected == pytest.approx(0.6)  # q1 q2 q4 q6 q8 q10 match; q3 q5 q7 q9 do not

    api, token = admin_api
    body = {"task": "qa.hu", "model": "m", **META, "predictions": [{"id": i, "prediction": p} for i, p in PREDS.items()]}
    r = _post(api, token, body)
    assert r.status_code == 201, r.text
    sub = r.json()
    assert sub["metric"] == "exact_match" and sub["score"] == round(expected, 3)
    r = api.post(f"/api/submissions/{sub['id']}/review", json={"status": "approved"}, headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 200
    row = api.get("/api/leaderboard/qa.hu").json()["rows"][0]
    lo, hi = _loop_interval(per_item)
    assert row["ci95"] == [round(lo, 3), round(hi, 3)] and lo < expected < hi
    info = api.get("/api/tasks/qa.hu").json()
    assert info["direction"] == "higher" and info["answers"] == "text" and info["labels"] == []


def test_numeric_tasks_match_and_absolute_error_by_value(sessions, admin_api):
    from glotbench.leaderboard import service

    with sessions() as db:
        service.add_task(db, "num.match", NUM_REFS, "numeric_match")
        service.add_task(db, "num.err", NUM_REFS, "abs_error")
    match, errors = [], []
    for i in sorted(NUM_REFS):
        gold, pred = float(NUM_REFS[i]), _as_number(NUM_PREDS[i])
        match.append(float(pred is not None and math.isclose(pred, gold, rel_tol=1e-6, abs_tol=1e-9)))
        if pred is not None:
            errors.append(abs(pred - gold))
    assert match == [1.0, 1.0, 0.0, 1.0, 0.0, 0.0]  # "3,5" is 3.5; 100.0000001 within 1e-6; "forty-two" unreadable
    api, token = admin_api
    entries = [{"id": i, "prediction": p} for i, p in NUM_PREDS.items()]  # JSON numbers are read as text
    r = _post(api, token, {"task": "num.match", "model": "m", **META, "predictions": entries})
    assert r.status_code == 201, r.text
    assert r.json()["score"] == round(sum(match) / len(match), 3)
    r = _post(api, token, {"task": "num.err", "model": "close", **META, "predictions": entries})
    assert r.status_code == 201, r.text
    assert r.json()["score"] == round(sum(errors) / len(errors), 3)  # the mean over the readable answers
    with sessions() as db:
        from glotbench.leaderboard.schema import Submission

        assert db.get(Submission, r.json()["id"]).score == pytest.approx(float(np.mean(errors)), abs=1e-12)
    # a better (smaller) error ranks first: abs_error is lower-is-better
    far = [{"id": i, "prediction": str(float(g) + 10)} for i, g in NUM_REFS.items()]
    r2 = _post(api, token, {"task": "num.err", "model": "far", **META, "predictions": far})
    assert r2.json()["score"] == 10.0
    for sid in (r.json()["id"], r2.json()["id"]):
        api.post(f"/api/submissions/{sid}/review", json={"status": "approved"}, headers={"Authorization": f"Bearer {token}"})
    assert [x["model"] for x in api.get("/api/leaderboard/num.err").json()["rows"]] == ["close", "far"]
    assert api.get("/api/tasks/num.err").json()["direction"] == "lower"


def test_task_page_shows_metric_direction_and_free_text(sessions, client_factory):
    from glotbench.leaderboard import service

    with sessions() as db:
        service.add_task(db, "num.err", NUM_REFS, "abs_error")
    page = client_factory().get("/tasks/num.err?lang=en").text
    assert 'id="task-metric">abs_error<' in page
    assert 'id="task-metric-direction">lower is better<' in page
    assert 'id="task-labels">free text (any string)<' in page
    assert '{"id": "a", "prediction": "the answer to item a"}' in page.replace("&#34;", '"')  # the task's own ids


@pytest.mark.parametrize("raw, problem", [
    ('{"id": "q1", "prediction": "Budapest"}\n{"id": "q2", "prediction": ["a", "b"]}\n',
     'Wrong shape: line 2 (id \'q2\') has no string "prediction" (it is a list).'),
    ('{"task": "qa.hu", "model": "m"}\n{"id": "q1", "prediction": "x"}\n{"id": "q2" "prediction": "y"}\n',
     "Line 3 is not valid JSON: Expecting ',' delimiter at column 13."),
    ('[{"id": "q1", "prediction": "x", "label": "y"}]',
     'Wrong shape: entry 0 (id \'q1\') has both "label" and "prediction"; give one.'),
    ('[{"id": "q1", "answer": "x"}]', 'Wrong shape: entry 0 (id \'q1\') has no string "prediction".'),
    ('[{"id": "q1", "prediction": null}]', 'Wrong shape: entry 0 (id \'q1\') has no string "prediction" (it is null).'),
])
def test_a_bad_text_upload_gets_one_line_naming_the_line_and_field(raw, problem):
    """Checked on the validator with the task's ids narrowed to the entries sent, so the shape
    problem is the only one; over the API below, missing ids add their own line."""
    from glotbench.leaderboard.submission_format import validate_submission

    sub, problems = validate_submission(raw.encode(), {"q1", "q2"} if "q2" in raw else {"q1"}, None, 10_000)
    assert sub is None and problems == [problem]


def test_a_bad_upload_over_the_api_lists_one_line_per_problem(sessions, admin_api):
    from glotbench.leaderboard import service

    with sessions() as db:
        service.add_task(db, "qa.hu", REFS, "exact_match")
    api, token = admin_api
    lines = [json.dumps({"task": "qa.hu", "model": "m", **META})]
    lines += [json.dumps({"id": i, "prediction": p}) for i, p in PREDS.items() if i != "q9"]
    lines[3] = json.dumps({"id": "q3", "prediction": {"year": 1848}})
    r = _post(api, token, "\n".join(lines) + "\n")
    assert r.status_code == 422
    assert r.json()["problems"] == ["Wrong shape: line 4 (id 'q3') has no string \"prediction\" (it is an object).",
                                    "1 missing id(s), every item needs a prediction: 'q9'."]
    good = "\n".join(lines[:3] + [json.dumps({"id": i, "prediction": PREDS[i]}) for i in ("q3", "q9")] + lines[4:])
    r = _post(api, token, good)  # the same file in JSON Lines, mended: accepted and scored
    assert r.status_code == 201, r.text
    assert r.json()["score"] == round(0.6, 3)


def test_reference_file_errors_name_the_record_and_field(tmp_path):
    from glotbench.leaderboard import service
    from glotbench.leaderboard.db import LeaderboardError

    ref = tmp_path / "refs.jsonl"
    ref.write_text('{"id": 1, "reference": "egy"}\n{"id": 2, "reference": ["kettő", "két"]}\n', encoding="utf-8")
    with pytest.raises(LeaderboardError) as err:
        service.load_gold_file(ref, label_field="reference")
    assert str(err.value) == (f"{ref}: record 1: field 'reference' must be a string or a number, not a list "
                              f"(one reference per item)")
    ref.write_text('{"id": 1, "reference": "egy"}\n{"id": 2, "reference": "kettő"\n', encoding="utf-8")
    with pytest.raises(LeaderboardError, match=r"refs.jsonl: line 2 is not valid JSON \(Expecting ',' delimiter"):
        service.load_gold_file(ref, label_field="reference")


def test_admin_adds_a_text_task_from_a_json_lines_reference_file_in_a_subprocess(tmp_path):
    refs = tmp_path / "refs.jsonl"
    refs.write_text("".join(json.dumps({"id": i, "reference": r}, ensure_ascii=False) + "\n" for i, r in REFS.items()),
                    encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": SRC}
    url = f"sqlite:///{tmp_path / 'lb.db'}"
    cmd = [sys.executable, "-m", "glotbench", "admin", "add-task", "qa.hu", "--gold", str(refs), "--label-field", "reference",
           "--metric", "exact_match", "--db", url]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "task 'qa.hu': 10 items, metric exact_match, free-text predictions against hidden references; higher is better" in r.stdout
    r = subprocess.run(cmd[:-4] + ["--metric", "wb_score", "--replace", "--db", url], capture_output=True, text=True,
                       env=env, timeout=120)
    assert r.returncode != 0
    err_lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert len(err_lines) == 1 and "metric 'wb_score' cannot be computed from a prediction and a reference alone" in err_lines[0]


def test_admin_task_form_takes_the_four_file_inputs_a_browser_sends(sessions, client_factory):
    """A browser posts every file input of the form, the empty ones too (gold, train, dev, test);
    the form reader allowed two files, so the Administration page answered 400 "Too many files"."""
    from lb_helpers import csrf_of

    client = client_factory()
    login(client, *ADMIN)
    gold = json.dumps([{"id": str(k), "label": "ab"[k % 2]} for k in range(6)])  # any task: a label one
    fields = {"csrf_token": csrf_of(client.get("/admin").text), "name": "tiny", "metric": "accuracy",
              "label_field": "label", "id_field": "id"}
    # the body as Chromium sends it: an empty file input is a part with filename=""
    boundary = "----glotbenchBrowserLikeBoundary"
    parts = [f'Content-Disposition: form-data; name="{k}"\r\n\r\n{v}' for k, v in fields.items()]
    parts.append(f'Content-Disposition: form-data; name="gold"; filename="gold.json"\r\nContent-Type: application/json\r\n\r\n{gold}')
    parts += [f'Content-Disposition: form-data; name="{k}"; filename=""\r\nContent-Type: application/octet-stream\r\n\r\n'
              for k in ("train", "dev", "test")]
    body = "".join(f"--{boundary}\r\n{p}\r\n" for p in parts) + f"--{boundary}--\r\n"
    r = client.post("/admin/tasks", content=body.encode(), headers={"Content-Type": f"multipart/form-data; boundary={boundary}"})
    assert r.status_code == 200, r.text
    assert "Task tiny registered with 6 items." in r.text


def test_chart_scale_and_best_line_follow_the_metric():
    """A 0-100 metric (chrF) gets a few round ticks, not one every 0.2; a lower-is-better metric's
    best-so-far line steps down to the smaller score."""
    from datetime import datetime

    from glotbench.leaderboard.chart import Point, Series, build_chart

    chart = build_chart([Series("mt", [Point(datetime(2026, 1, 1), 69.4, "m")])])
    assert [label for _, label in chart.y_ticks] == ["0", "20", "40", "60", "80"]
    chart = build_chart([Series("acc", [Point(datetime(2026, 1, 1), 0.5, "m")])])
    assert [label for _, label in chart.y_ticks] == ["0.0", "0.2", "0.4", "0.6", "0.8", "1.0"]
    pts = [Point(datetime(2026, 1, 1), 0.8, "a"), Point(datetime(2026, 1, 3), 0.4, "b"), Point(datetime(2026, 1, 5), 0.6, "c")]
    err = build_chart([Series("err", [Point(p.when, p.score, p.label) for p in pts], higher_is_better=False)]).series[0]
    y_of = {p.label: p.y for p in err.points}
    assert f"V{y_of['b']}" in err.best_path and f"V{y_of['c']}" not in err.best_path  # 0.4 is the best, 0.6 is not
    acc = build_chart([Series("acc", pts)]).series[0]
    assert "V" not in acc.best_path  # higher is better: 0.8 stays the best


def test_grid_average_leaves_out_lower_is_better_tasks(sessions):
    """The grid's average is over higher-is-better tasks: an absolute error of 10 must not count as a
    score of 10 (it would put a worse model first)."""
    from glotbench.leaderboard import service
    from glotbench.leaderboard.config import Settings

    cfg = Settings(max_upload_bytes=10**6)
    with sessions() as db:
        service.add_task(db, "qa.hu", REFS, "exact_match")
        service.add_task(db, "num.err", NUM_REFS, "abs_error")
        boss = service.get_user(db, "admin")
        for model, qa, shift in (("good", PREDS, 0.0), ("bad", {i: "?" for i in REFS}, 10.0)):
            for task, preds in (("qa.hu", qa), ("num.err", {i: str(float(g) + shift) for i, g in NUM_REFS.items()})):
                body = json.dumps([{"id": i, "prediction": p} for i, p in preds.items()]).encode()
                sub, problems, _ = service.submit(db, boss, service.Upload(task, model, META), body, cfg)
                assert not problems, problems
                service.review(db, boss, sub.id, "approved")
        rows = service.grid(db)
    assert [(r.model, r.average) for r in rows] == [("good", pytest.approx(0.6)), ("bad", 0.0)]
    assert rows[1].cells["num.err"].score == pytest.approx(10.0)


def test_json_lines_corpus_files_are_served_as_json_and_the_test_file_without_references(sessions, client_factory):
    from glotbench.leaderboard import service

    lines = "".join(json.dumps({"id": i, "source": f"src {i}", "reference": r}, ensure_ascii=False) + "\n"
                    for i, r in REFS.items()).encode()
    with sessions() as db:
        task = service.add_task(db, "qa.hu", REFS, "exact_match")
        service.add_task_file(db, task, "dev", "dev.jsonl", lines, label_field="reference")
        service.add_task_file(db, task, "test", "test.jsonl", lines, label_field="reference")
    anon = client_factory()
    dev = json.loads(anon.get("/tasks/qa.hu/files/dev").content)
    test = json.loads(anon.get("/tasks/qa.hu/files/test").content)
    assert dev == [{"id": i, "source": f"src {i}", "reference": r} for i, r in REFS.items()]
    assert test == [{"id": i, "source": f"src {i}"} for i in REFS]
