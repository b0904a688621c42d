"""A translation task scored by chrF against hidden references, end to end in headless Chromium
(Playwright, Debian's /usr/bin/chromium) against the real ``glotbench serve``: the administrator
adds the task on the Administration page (metric chrF, reference file in JSON Lines), a user
uploads predictions, the administrator approves, and the task page shows the chrF value and its
interval, each checked against sacrebleu called directly here on the same texts.

Screenshots go to ``test-artifacts/`` in the repository root."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from lb_helpers import ADMIN
from lb_browser import browser, shot  # noqa: F401  (browser: the fixture)
from lb_server import start_server

TASK = "mt.hu-en"

pytestmark = pytest.mark.slow

# Hungarian -> English: the hidden references and one system's translations (made up for the test)
REFERENCES = [
    "The train leaves Budapest at seven in the morning.",
    "My grandmother makes the best stuffed cabbage in the village.",
    "The library is closed on Sundays.",
    "We walked along the Danube until sunset.",
    "Please turn off your phone during the concert.",
    "The children built a snowman in the garden.",
    "This wine comes from the Tokaj region.",
    "He forgot his umbrella on the tram again.",
    "The exam results will be published next week.",
    "Lake Balaton freezes over in very cold winters.",
    "She has been learning to play the violin for ten years.",
    "The museum's new exhibition opens on Friday.",
]
HYPOTHESES = [
    "The train departs from Budapest at seven in the morning.",
    "My grandmother cooks the best stuffed cabbage of the village.",
    "The library is closed on Sunday.",
    "We walked by the Danube until the sun set.",
    "Please switch off your telephone during the concert.",
    "The kids built a snowman in the yard.",
    "This wine is from the Tokaj region.",
    "Again he forgot his umbrella on the tram.",
    "The results of the exam will be published next week.",
    "In very cold winters Lake Balaton freezes.",
    "She learns the violin for ten years.",
    "",  # an empty answer is an answer (it scores nothing)
]


@pytest.fixture
def server(tmp_path):
    """The real ``glotbench serve`` in a subprocess with only an administrator (the test adds the task)."""
    from glotbench.leaderboard import service
    from glotbench.leaderboard.db import open_db

    url = f"sqlite:///{tmp_path / 'lb.db'}"
    with open_db(url)() as db:
        service.create_user(db, *ADMIN, is_admin=True)
    srv = start_server(url, tmp_path)
    yield srv.base
    srv.stop()


def _login(page, base: str, username: str, password: str) -> None:
    page.goto(base + "/login")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click("#login-button")
    page.wait_for_url(base + "/")


def _sacrebleu_chrf_and_interval(hyps: list[str], refs: list[str], n_resamples: int = 1000, seed: int = 1234):
    """sacrebleu's corpus chrF, and its percentile bootstrap plainly: sacrebleu on each resample of the
    items (drawn as every glotbench interval draws them, with a run's default seed 1234; items in the
    leaderboard's id order)."""
    sacrebleu = pytest.importorskip("sacrebleu")
    point = sacrebleu.corpus_chrf(hyps, [refs]).score
    rng = np.random.default_rng(seed)
    n = len(hyps)
    stats = []
    for _ in range(n_resamples):
        idx = rng.integers(0, n, size=n)
        stats.append(sacrebleu.corpus_chrf([hyps[j] for j in idx], [[refs[j] for j in idx]]).score)
    return point, float(np.quantile(stats, 0.025)), float(np.quantile(stats, 0.975))


def test_admin_adds_a_chrf_translation_task_and_the_page_shows_sacrebleus_value(server, browser, tmp_path):
    ids = [f"s{k:02d}" for k in range(len(REFERENCES))]  # sorted as strings = the leaderboard's order
    refs_file = tmp_path / "mt_refs.jsonl"
    refs_file.write_text("".join(json.dumps({"id": i, "source": "(hu)", "reference": r}) + "\n"
                                 for i, r in zip(ids, REFERENCES)), encoding="utf-8")
    preds_file = tmp_path / "mt_predictions.jsonl"
    preds_file.write_text(json.dumps({"task": TASK}) + "\n" + "".join(
        json.dumps({"id": i, "prediction": h}) + "\n" for i, h in zip(ids, HYPOTHESES)), encoding="utf-8")
    bad_file = tmp_path / "mt_bad.jsonl"
    bad_lines = [json.dumps({"id": i, "prediction": h}) for i, h in zip(ids, HYPOTHESES)]
    bad_lines[4] = json.dumps({"id": ids[4], "translation": HYPOTHESES[4]})  # the wrong field name
    bad_file.write_text("\n".join(bad_lines) + "\n", encoding="utf-8")
    expected, lo, hi = _sacrebleu_chrf_and_interval(HYPOTHESES, REFERENCES)
    assert 30 < expected < 95  # a real, non-trivial value on sacrebleu's 0-100 scale

    ctx = dict(viewport={"width": 1280, "height": 900}, locale="en-US")
    admin = browser.new_context(**ctx).new_page()
    _login(admin, server, *ADMIN)
    admin.goto(server + "/admin")
    form = admin.locator("form[action='/admin/tasks']")
    options = form.locator("select[name=metric] option")
    chrf_option = options.filter(has_text="chrF")
    assert chrf_option.first.inner_text() == "chrF (higher is better)"
    assert "abs_error (lower is better)" in options.all_inner_texts()
    form.locator("input[name=name]").fill(TASK)
    form.locator("input[name=title]").fill("Hungarian to English translation")
    form.locator("select[name=metric]").select_option("chrf")
    form.locator("input[name=label_field]").fill("reference")
    form.locator("input[name=gold]").set_input_files(str(refs_file))
    form.locator("button[type=submit]").click()
    admin.wait_for_load_state()
    assert f"Task {TASK} registered with 12 items." in admin.inner_text("main")
    shot(admin, "leaderboard-text-admin.png")

    user = browser.new_context(**ctx).new_page()
    user.goto(server + "/register")
    user.fill("input[name=username]", "translator")
    user.fill("input[name=team]", "MT lab")
    user.fill("input[name=password]", "translator-password")
    user.fill("input[name=password2]", "translator-password")
    user.click("#register-button")
    user.wait_for_url(server + "/submit")

    def upload(path: Path) -> None:
        user.goto(server + "/submit")
        user.select_option("#task", TASK)
        user.fill("#model", "mt-fake")
        user.fill("#model_size", "135M")
        user.fill("#paper_url", "https://example.org/mt")
        user.fill("#description", "Made-up translations for the browser test.")
        user.set_input_files("#file", str(path))
        user.click("#submit-button")

    upload(bad_file)  # one problem, one line naming the line and the field
    assert user.locator("#problems li").all_inner_texts() == [
        "Wrong shape: line 5 (id 's04') has no string \"prediction\"."]
    upload(preds_file)
    user.wait_for_url(server + "/submissions/*")
    assert user.locator("#score .label").text_content() == "chrF"  # (shown in capitals by the style sheet)
    # before approval its owner sees chrF in steps of 5 (0.05 of its 0-100 scale; issue 48), approved 3 decimals
    assert user.inner_text("#score .value") == f"{round(expected / 5) * 5:.3f}"
    shot(user, "leaderboard-text-result.png")

    admin.goto(server + "/admin")
    admin.click("#approve-1")
    admin.wait_for_url(server + "/admin")

    anon = browser.new_context(**ctx).new_page()
    anon.goto(server + f"/tasks/{TASK}")
    assert anon.inner_text("#task-metric") == "chrF"
    assert anon.inner_text("#task-metric-direction") == "higher is better"
    assert anon.inner_text("#task-labels") == "free text (any string)"
    row = anon.inner_text("#board tbody tr")
    assert "mt-fake" in row and "MT lab" in row
    assert f"{expected:.3f}" in row and f"[{lo:.3f}, {hi:.3f}]" in row
    for hidden in REFERENCES:  # the references stay hidden
        assert hidden not in anon.content()
    shot(anon, "leaderboard-text-task.png")
