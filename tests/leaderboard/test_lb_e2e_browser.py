"""End to end in a real browser: headless Debian Chromium driven by Playwright against the real
app served by uvicorn (``glotbench serve``) on a free loopback port with a temporary SQLite file.

Screenshots go to ``test-artifacts/`` in the repository root."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lb_helpers import ADMIN, fake_predictions, hulu_gold, hulu_path, submission_json
from lb_browser import browser, shot  # noqa: F401  (browser: the fixture)
from lb_server import start_server
from sklearn.metrics import matthews_corrcoef


pytestmark = pytest.mark.slow


@pytest.fixture
def server(tmp_path):
    """The real ``glotbench serve`` in a subprocess, with an administrator and the HuCOLA dev task."""
    from glotbench.leaderboard import service
    from glotbench.leaderboard.db import open_db

    url = f"sqlite:///{tmp_path / 'lb.db'}"
    with open_db(url)() as db:
        service.create_user(db, *ADMIN, is_admin=True)
        service.add_task(db, "hulu.cola", service.load_gold_file(hulu_path("cola")), "mcc", title="HuCOLA (dev)")
    srv = start_server(url, tmp_path)  # waits until it answers (a loaded machine may take a while)
    yield srv.base
    srv.stop()


def _shot(page, name: str) -> Path:
    path = shot(page, name)
    print(f"screenshot: {path}")
    return path


def test_register_upload_approve_publish_and_switch_language(server, browser, tmp_path):
    gold = hulu_gold("cola")
    preds = fake_predictions(gold, ["0", "1"])
    ids = sorted(gold)
    expected = matthews_corrcoef([gold[i] for i in ids], [preds[i] for i in ids])
    pred_file = tmp_path / "cola_predictions.json"
    pred_file.write_text(submission_json("hulu.cola", "huBERT-fake", preds))

    user = browser.new_context(viewport={"width": 1280, "height": 800}, locale="en-US")
    page = user.new_page()
    page.goto(server + "/register")
    page.fill("input[name=username]", "alice")
    page.fill("input[name=team]", "ELTE NLP")
    page.fill("input[name=password]", "alice-password")
    page.fill("input[name=password2]", "alice-password")
    page.click("#register-button")
    page.wait_for_url(server + "/submit")
    page.click("button:has-text('Log out')")
    page.goto(server + "/login")
    page.fill("input[name=username]", "alice")
    page.fill("input[name=password]", "alice-password")
    page.click("#login-button")
    page.wait_for_url(server + "/")

    # a bad file first: every problem is listed and nothing is stored
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"task": "hulu.cola", "predictions": [{"id": "0", "label": "yes"}, {"id": "0", "label": "1"}]}))
    page.goto(server + "/submit")
    page.fill("#model", "huBERT-fake")
    page.fill("#model_size", "110M")
    page.fill("#paper_url", "https://example.org/hubert")
    page.fill("#description", "A fake huBERT for the browser test.")
    page.set_input_files("#file", str(bad))
    page.click("#submit-button")
    problems = page.inner_text("#problems")
    assert "909 missing id(s)" in problems and "duplicate id(s)" in problems and "Label 'yes' is not in the label set" in problems
    _shot(page, "leaderboard-upload-problems.png")

    page.select_option("#task", "hulu.cola")
    page.fill("#model", "")
    page.set_input_files("#file", str(pred_file))
    page.click("#submit-button")
    page.wait_for_url(server + "/submissions/1")
    # before approval its owner sees the score in steps of 0.05 (issue 48)
    assert page.inner_text("#score .value") == f"{round(expected / 0.05) * 0.05:.3f}"
    assert page.inner_text("#status") == "awaiting approval"
    assert "huBERT-fake" in page.inner_text("main")
    _shot(page, "leaderboard-upload-result.png")

    anon = browser.new_context(viewport={"width": 1280, "height": 800}, locale="en-US").new_page()
    anon.goto(server + "/tasks/hulu.cola")
    assert "huBERT-fake" not in anon.content()  # private until approved

    admin = browser.new_context(viewport={"width": 1280, "height": 800}, locale="en-US").new_page()
    admin.goto(server + "/login")
    admin.fill("input[name=username]", ADMIN[0])
    admin.fill("input[name=password]", ADMIN[1])
    admin.click("#login-button")
    admin.goto(server + "/admin")
    admin.click("#approve-1")
    admin.wait_for_url(server + "/admin")
    assert "Nothing awaits approval." in admin.inner_text("main")

    page.reload()
    assert page.inner_text("#status") == "approved"
    anon.goto(server + "/tasks/hulu.cola")
    row = anon.inner_text("#board tbody tr")
    assert "huBERT-fake" in row and "ELTE NLP" in row and f"{expected:.3f}" in row
    assert anon.locator("figure.chart svg circle").count() == 1
    _shot(anon, "leaderboard-task.png")
    anon.goto(server + "/")
    assert "huBERT-fake" in anon.inner_text("#grid") and "over the tasks the model has results for" in anon.inner_text("main")
    _shot(anon, "leaderboard-overall.png")

    # the language switch, remembered in a cookie
    anon.click("#lang-hu")
    assert anon.inner_text("h1") == "Eredménytábla"
    anon.goto(server + "/tasks/hulu.cola")
    assert anon.inner_text("h1") == "hulu.cola feladat" and "PONTSZÁM" in anon.inner_text("#board thead").upper()
    _shot(anon, "leaderboard-task-hu.png")
    anon.click("#lang-en")
    assert anon.inner_text("h1") == "Task hulu.cola"
    anon.goto(server + "/")
    assert anon.inner_text("h1") == "Leaderboard"
